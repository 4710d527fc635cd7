"""The GM's panel never shows a seed of the deal before the game ends: every page of
the game, in every state, shows the rounds' commitments only; after the end the deal page shows
every round's seed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services
from gameplay.models import Actor, DealRound, FlagKind, Game, ModerationFlag, Seat, Strike
from tests.panel.support import make_game, vote_round
from tests.panel.test_access import fill, game_patterns

pytestmark = pytest.mark.django_db

PAGES = (
    "panel_game",
    "panel_deal",
    "panel_players",
    "panel_log",
    "panel_outbox",
    "panel_settings",
    "panel_deal_round",
    "panel_deal_run",
    "panel_end",
)


def url(name: str, game: Game) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk})


def seeds(game: Game) -> list[str]:
    found = list(DealRound.objects.filter(game=game).values_list("seed", flat=True))
    assert found
    return found


def assert_hidden(client: Client, game: Game, urls: list[str]) -> None:
    for address in urls:
        response = client.get(address, follow=True)
        assert response.status_code in (200, 403, 405), address
        page = response.content.decode()
        for seed in seeds(game):
            assert seed not in page, f"{address} shows a seed"


def test_no_page_shows_a_seed_before_the_end(gm: Any, gm_client: Client) -> None:
    recruiting = make_game(gm, players=7, deal=False, start=False, vk_base=81_000)
    assert_hidden(gm_client, recruiting, [url(n, recruiting) for n in PAGES])
    services.game_deal(game_id=recruiting.pk, by=Actor.gm("ведущий"))
    dealt = recruiting
    assert_hidden(gm_client, dealt, [url(n, dealt) for n in PAGES])
    services.deal_round_new(game_id=dealt.pk, by=Actor.gm("ведущий"))  # a second round, dealt
    assert_hidden(gm_client, dealt, [url(n, dealt) for n in PAGES])
    page = gm_client.get(url("panel_deal", dealt)).content.decode()
    for r in DealRound.objects.filter(game=dealt):
        assert f'Раунд {r.number}: <span class="gm-hash">{r.commitment}</span>' in page

    # A running game with a vote, a strike and a flag: every page of the panel.
    game = make_game(gm, players=7, seed="the-panel-must-not-show-this")
    vote_round(game, skip=1)
    services.day_close(game_id=game.pk)
    seat = Seat.objects.filter(game=game, alive=True).first()
    ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.PROFANITY, text="…")
    assert Strike.objects.filter(seat__game=game).exists()
    urls = [fill(p, game) for p in game_patterns()]
    assert_hidden(gm_client, game, [*urls, reverse("admin:gameplay_game_changelist")])

    # After the end, every round's seed is public, the panel's deal page included.
    services.game_end(game_id=dealt.pk, by=Actor.gm("ведущий"))  # cancelled before the start
    services.game_end(game_id=game.pk, by=Actor.gm("ведущий"))
    page = gm_client.get(url("panel_deal", game)).content.decode()
    assert "the-panel-must-not-show-this" in page
    page = gm_client.get(url("panel_deal", dealt)).content.decode()
    assert all(seed in page for seed in seeds(dealt))
