"""gameplay.selectors.history: a player's games across games, as one GM may see them: the
finished ones and the GM's own, never another GM's unfinished game."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.models import Actor, Seat
from gameplay.rules import Winner
from gameplay.selectors.history import player_history
from tests.panel.support import VK_BASE, make_game

pytestmark = pytest.mark.django_db

PLAYER = VK_BASE + 1  # seat 1 of every game below


def test_history_shows_finished_and_own_games_and_counts_wins(gm: Any, other_gm: Any) -> None:
    won = make_game(other_gm, name="Сыграна")
    services.game_end(game_id=won.pk, by=Actor.gm("test"), winner=Winner.TOWN)
    hidden = make_game(other_gm, name="Чужая идёт", topic_id=VK_BASE + 1)
    mine = make_game(gm, name="Моя идёт", topic_id=VK_BASE + 2)
    role = Seat.objects.get(game=won, vk_user_id=PLAYER).role

    history = player_history(PLAYER, gm)

    assert [r.game.name for r in history.rows] == ["Моя идёт", "Сыграна"]
    assert hidden.pk not in {r.game.pk for r in history.rows}
    own, finished = history.rows
    # Facts, not words: the panel's history page words them (templates/panel/history.html).
    assert own.seat is not None
    assert (own.mine, own.won, own.result, own.seat.alive) == (True, None, "playing", True)
    assert own.role == own.seat.role and own.seat.vk_user_id == PLAYER
    expected = role in ("commissar", "doctor", "civilian")  # the town won
    assert (finished.mine, finished.won, finished.role) == (False, expected, role)
    assert finished.result == ("won" if expected else "lost")
    assert (history.games, history.wins, history.name) == (2, int(expected), "Игрок 1")
    assert history.by_role == [(role, 1, int(expected))]
    assert own.game == mine


def test_another_gm_sees_neither_unfinished_game(gm: Any, other_gm: Any) -> None:
    make_game(gm, name="Моя идёт")

    history = player_history(PLAYER, other_gm)

    assert (history.rows, history.games, history.wins, history.name) == ([], 0, 0, None)
