"""The panel's one answer to a refusal (``panel.access.shows_refusals``): the refusal's Russian
text as an error message above the page the view names — back to a page, or the form again
with what the GM typed — and nothing changed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.models import Game, GameEvent, Seat
from gameplay.refusals import NoSuchSignup, PhaseChanged
from tests.panel.support import living, make_game, module_gm

pytestmark = pytest.mark.django_db


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def msgs(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


world, gm = module_gm(lambda gm: {"game": make_game(gm, players=7, seed="refusals-seed").pk})


@pytest.fixture
def game(world: dict[str, int]) -> Game:
    """Seven players, Day 1 open, run by ``gm`` (built once per module)."""
    return Game.objects.get(pk=world["game"])


def test_a_refused_form_is_shown_again_as_typed_with_the_reason(
    game: Game, gm_client: Client
) -> None:
    seat = living(game)[0]
    modkill = url("panel_modkill", game, number=seat.number)
    gm_client.post(modkill, {"reason": "мат", "confirm": "yes"})
    events = GameEvent.objects.filter(game=game).count()
    r = gm_client.post(modkill, {"reason": "флуд в теме", "confirm": "yes"})
    assert r.status_code == 200  # the confirmation again, not a redirect
    assert "panel/confirm.html" in [t.name for t in r.templates]
    assert 'value="флуд в теме"' in r.content.decode()
    assert [m for m in msgs(r) if "уже выбыл" in m]
    assert GameEvent.objects.filter(game=game).count() == events


def test_a_refused_action_goes_back_to_its_page_with_the_reason(
    game: Game, gm_client: Client
) -> None:
    stale = {"story": "Ночь была тёмной.", "phase": "999999"}  # a page of another phase
    r = gm_client.post(url("panel_story", game), stale)
    assert r.status_code == 302 and r["Location"] == url("panel_game", game)
    assert msgs(gm_client.get(r["Location"])) == [PhaseChanged().reason]
    assert not GameEvent.objects.filter(game=game, kind="story_set").exists()


def test_a_view_raising_a_refusal_of_its_own_answers_it_the_same_way(
    game: Game, gm_client: Client
) -> None:
    r = gm_client.post(url("panel_player_remove", game, seat_id=Seat.objects.count() + 999))
    assert r.status_code == 302 and r["Location"] == url("panel_players", game)
    assert msgs(gm_client.get(r["Location"])) == [NoSuchSignup().reason]
