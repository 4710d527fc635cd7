"""The panel refuses, in Russian and without a traceback, a spectator chat or a topic that
belongs to another GM's unfinished game."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import Actor, Game
from gameplay.services.spectators import spectator_chat_link
from tests.panel.support import make_game
from tests.panel.test_views_setup import NEW_GAME, club555  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def test_linking_another_unfinished_games_chat_is_refused(
    gm: Any, other_gm: Any, gm_client: Client
) -> None:
    theirs = make_game(other_gm, players=7, name="Чужая", vk_base=20_000, topic_id=20_000)
    spectator_chat_link(game_id=theirs.pk, by=Actor.gm("чужой"), chat=7)
    mine = make_game(gm, players=7, name="Моя", vk_base=30_000, topic_id=30_000)

    response = gm_client.post(url("panel_chat_link", mine), {"chat": "7"}, follow=True)

    assert response.status_code == 200
    assert render("refusals/spectator_chat_taken") in [str(m) for m in response.context["messages"]]
    mine.refresh_from_db()
    assert mine.spectator_chat_id is None


def test_a_new_game_in_another_games_sign_up_topic_is_refused(
    other_gm: Any,
    gm_client: Client,
    club555: Any,  # noqa: F811
) -> None:
    make_game(other_gm, start=False, deal=False, topic_id=90, recruit_topic_id=41, vk_group_id=555)

    response = gm_client.post(reverse("admin:gameplay_game_add"), NEW_GAME)

    assert response.status_code == 200
    assert render("refusals/topic_taken") in response.content.decode()
    assert Game.objects.count() == 1
