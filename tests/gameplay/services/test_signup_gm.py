"""gameplay.services.signup on the GM's behalf: lists, removal; a refusal changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.models import (
    Actor,
    SeatStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.signup import parse_player_lines, player_remove
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_player_lines() -> None:
    lines = parse_player_lines(text="id1 Аня Петрова\n\nvk.com/id2;Боря\n3")
    assert [(x.vk_user_id, x.name) for x in lines] == [(1, "Аня Петрова"), (2, "Боря"), (3, "")]
    with pytest.raises(InvalidCommand, match="уже есть в строке 1"):
        parse_player_lines(text="id1\n1")
    with pytest.raises(InvalidCommand, match="Список пуст"):
        parse_player_lines(text="\n  \n")


def test_player_remove_checks_the_game(gm: Any) -> None:
    game = make_game(gm, players=7)
    other = make_game(gm, players=7, vk_base=90_000)
    reserve = services.signup_create(game_id=game.pk, vk_user_id=1, name="Запас", reserve=True)
    with pytest.raises(InvalidCommand, match="Такого игрока нет"):
        player_remove(game_id=other.pk, by=Actor.gm("x"), seat_id=reserve.pk)
    player_remove(game_id=game.pk, by=Actor.gm("x"), seat_id=reserve.pk)
    reserve.refresh_from_db()
    assert reserve.status == SeatStatus.WITHDRAWN
