"""Nothing learnt from side channels, in the panel: a player's history does
not show that they sit in another GM's unfinished game, and retrying another game's delivery
id answers as an unknown id does."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.models import Game, Outbox, OutboxStatus, Seat
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db

PLAYER = 555_555


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def history_page(client: Client, game: Game) -> tuple[Any, str]:
    page = client.get(url("panel_history", game, vk_user_id=PLAYER))
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", page.content.decode())
    return page.context["history"], html


def test_history_is_the_same_whether_or_not_the_player_sits_in_another_gms_game(
    gm: Any, other_gm: Any, gm_client: Client
) -> None:
    mine = make_game(gm, players=7, name="Моя", vk_base=30_000)
    seat = Seat.objects.filter(game=mine).order_by("number").first()
    assert seat is not None
    Seat.objects.filter(pk=seat.pk).update(vk_user_id=PLAYER)
    before, html_before = history_page(gm_client, mine)

    theirs = make_game(other_gm, players=7, name="Чужая идёт", vk_base=20_000)
    elsewhere = Seat.objects.filter(game=theirs).order_by("number").first()
    assert elsewhere is not None
    Seat.objects.filter(pk=elsewhere.pk).update(vk_user_id=PLAYER)
    after, html_after = history_page(gm_client, mine)

    assert after == before
    assert html_after == html_before
    assert "других ведущих" not in html_after


def retry_answer(client: Client, game: Game, outbox_id: int) -> list[str]:
    response = client.post(url("panel_outbox_retry", game, outbox_id=outbox_id), follow=True)
    return [str(m) for m in response.context["messages"]]


def test_retrying_another_games_delivery_answers_as_an_unknown_id(
    gm: Any, other_gm: Any, gm_client: Client
) -> None:
    mine = make_game(gm, players=7, name="Моя", vk_base=30_000)
    theirs = make_game(other_gm, players=7, name="Чужая", vk_base=20_000)
    row = Outbox.objects.filter(game=theirs).order_by("id").first()
    assert row is not None
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.FAILED, last_error="901")
    unknown = (Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0) + 1000

    foreign = retry_answer(gm_client, mine, row.pk)
    missing = retry_answer(gm_client, mine, unknown)

    assert foreign == missing == ["Такого сообщения нет."]
    row.refresh_from_db()
    assert row.status == OutboxStatus.FAILED
