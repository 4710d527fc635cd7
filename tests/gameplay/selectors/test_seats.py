"""gameplay.selectors.seats: the game's seats as the panel lists them."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import SeatStatus
from gameplay.selectors.seats import all_seats, listed_seat, reserves, seat_at
from tests.panel.support import VK_BASE, make_game

pytestmark = pytest.mark.django_db


def test_seats_by_number_the_reserve_and_a_listed_sign_up() -> None:
    game = make_game(players=7)
    services.signup_create(game_id=game.pk, vk_user_id=VK_BASE + 50, name="Запасной", reserve=True)
    other = make_game(players=7, topic_id=VK_BASE + 1, vk_base=VK_BASE + 100)

    third = seat_at(game, 3)
    assert third is not None and third.vk_user_id == VK_BASE + 3
    assert seat_at(game, 8) is None
    reserve = reserves(game)
    assert [(s.name, s.status) for s in reserve] == [("Запасной", SeatStatus.RESERVE)]
    everyone = all_seats(game)
    assert len(everyone) == 8 and {s.game_id for s in everyone} == {game.pk}
    assert listed_seat(game, reserve[0].pk) == reserve[0]
    assert listed_seat(other, reserve[0].pk) is None  # another game's sign-up is not listed
