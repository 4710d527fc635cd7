"""The game page costs the same number of SQL queries for 7 players as for 26 with full vote
histories (each table is read once, whatever the size of the game)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from gameplay import services
from gameplay.models import Game, Vote
from tests.panel.support import make_game, night_round, vote_round

pytestmark = pytest.mark.django_db


def played(gm: Any, players: int, vk_base: int, *, days: int) -> Game:
    """A game on its Day ``days`` (open), every earlier day and night played, every vote
    changed twice, and a few votes on the open day."""
    game = make_game(gm, players=players, vk_base=vk_base, seed=f"q{players}")
    for _ in range(days - 1):
        vote_round(game, changes=2)
        services.day_close(game_id=game.pk)
        night_round(game)
        services.night_close(game_id=game.pk)
        services.night_publish(game_id=game.pk)
        game.refresh_from_db()
        assert game.status == "running"
    vote_round(game, changes=1, skip=2)
    return game


def count(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def url_of(game: Game) -> str:
    return reverse("admin:panel_game", kwargs={"game_id": game.pk})


def test_game_page_queries_do_not_grow_with_players(
    gm: Any, gm_client: Client, django_assert_num_queries: Any
) -> None:
    small = played(gm, 7, 100_000, days=2)
    big = played(gm, 26, 200_000, days=2)
    assert Vote.objects.filter(phase__game=big).count() > 4 * 26  # full histories
    gm_client.get(url_of(small))  # warm the session and the content types
    expected = count(gm_client, url_of(small))
    with django_assert_num_queries(expected):
        gm_client.get(url_of(big))


def test_night_review_page_queries_do_not_grow_with_players(
    gm: Any, gm_client: Client, django_assert_num_queries: Any
) -> None:
    games = []
    for players, base in ((7, 300_000), (26, 400_000)):
        game = played(gm, players, base, days=1)
        services.day_close(game_id=game.pk)
        night_round(game)
        services.night_close(game_id=game.pk)
        games.append(game)
    small, big = games
    gm_client.get(url_of(small))
    expected = count(gm_client, url_of(small))
    with django_assert_num_queries(expected):
        response = gm_client.get(url_of(big))
    assert "Черновик" in response.content.decode()
