"""gameplay.selectors.bot: who a typed number, VK id or name designates (RULES.md V8), with
the refusal that lists the candidates of an ambiguous name, and the vote count."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.rules.errors import UnknownTarget
from gameplay.selectors.bot import (
    AmbiguousTarget,
    find_seat,
    roster,
    seat_in_game,
    vote_count,
)
from gameplay.selectors.table import current_phase
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
    assert seat_in_game(game.pk, vk(4)).number == 4
    assert seat_in_game(game.pk, vk(9)) is None


def test_a_name_several_players_fit_is_refused_with_their_seats() -> None:
    seats = roster(started_game())

    with pytest.raises(AmbiguousTarget) as refused:
        find_seat(seats, name="Игрок")

    assert refused.value.candidates == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "№1 Игрок 1, №2 Игрок 2" in str(refused.value)
    assert "Укажите номер места" in str(refused.value)


def test_vote_count_orders_by_votes_and_lists_who_has_not_voted() -> None:
    game = started_game()
    for voter, target in ((1, 6), (2, 6), (3, 7), (6, 7), (7, 6)):
        services.vote_submit(game_id=game.pk, voter=voter, target=target)

    count = vote_count(current_phase(game))

    assert [(s.number, votes, penalty) for s, votes, penalty in count.rows] == [
        (6, 3, 0),
        (7, 2, 0),
    ]
    assert (count.day, count.voted, count.living) == (1, 5, 8)
    assert [s.number for s in count.missing] == [4, 5, 8]
