"""gameplay.selectors.bot: who a typed number, VK id or name designates (RULES.md V8), with
the refusal that lists the candidates of an ambiguous name."""

from __future__ import annotations

import pytest

from gameplay.rules.errors import UnknownTarget
from gameplay.selectors.bot import (
    AmbiguousTarget,
    find_seat,
    roster,
    seat_in_game,
)
from tests.gameplay.deadline_support import started_game, vk

pytestmark = pytest.mark.django_db


def test_a_target_by_number_vk_id_or_full_name() -> None:
    game = started_game()
    seats = roster(game)

    assert [s.number for s in seats] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert find_seat(seats, number=3).vk_user_id == vk(3)
    assert find_seat(seats, vk_user_id=vk(5)).number == 5
    assert find_seat(seats, name="игрок 7").number == 7
    with pytest.raises(UnknownTarget):
        find_seat(seats, number=9)
    found = seat_in_game(game.pk, vk(4))
    assert found is not None and found.number == 4
    assert seat_in_game(game.pk, vk(9)) is None


def test_a_name_several_players_fit_is_refused_with_their_seats() -> None:
    seats = roster(started_game())

    with pytest.raises(AmbiguousTarget) as refused:
        find_seat(seats, name="Игрок")

    assert refused.value.candidates == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "№1 Игрок 1, №2 Игрок 2" in str(refused.value)
    assert "Укажите номер места" in str(refused.value)
