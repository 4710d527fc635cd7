"""gameplay.services.acting: who acts from VK (the user's living seat) and whether a pressed
button still belongs to the game's open phase (to the seat pressing it)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gameplay import services
from gameplay.models import Actor, Game, Phase, PhaseKind, PhaseStatus
from gameplay.refusals import StaleButton
from gameplay.rules import Role
from gameplay.rules.errors import DeadCannotAct, NotInGame
from gameplay.services.acting import check_button_phase, seat_of_user
from tests.gameplay.factories import (
    current_phase,
    make_game,
    seat,
    seat_no,
    seats,
    to_night,
    vk_id,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _night_one() -> int:
    g = make_game(n=9, start=True)
    to_night(g)
    return g.pk


_night_one_rows = module_rows(_night_one)


@pytest.fixture
def game(_night_one_rows: int) -> Game:
    """Nine players, Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def test_a_users_living_seat_is_found_in_the_database_or_in_the_seats_given(game: Game) -> None:
    assert seat_of_user(game=game, vk_user_id=vk_id(4)) == seat_no(game, 4)
    read = seats(game)
    with CaptureQueriesContext(connection) as captured:
        found = seat_of_user(game=game, vk_user_id=vk_id(4), seats=read)
    assert found is read[3] and captured.captured_queries == []


def test_a_stranger_or_a_reserve_is_not_in_the_game(game: Game) -> None:
    services.signup_create(game_id=game.pk, vk_user_id=9001, name="Яна", reserve=True)
    for user in (9001, 424242):
        with pytest.raises(NotInGame):
            seat_of_user(game=game, vk_user_id=user)
        with pytest.raises(NotInGame):
            seat_of_user(game=game, vk_user_id=user, seats=seats(game))


def test_a_dead_player_cannot_act(game: Game) -> None:
    services.seat_modkill(game_id=game.pk, seat=2, by=Actor.gm("test"), reason="тест")
    with pytest.raises(DeadCannotAct):
        seat_of_user(game=game, vk_user_id=vk_id(2))
    with pytest.raises(DeadCannotAct):
        seat_of_user(game=game, vk_user_id=vk_id(2), seats=seats(game))


def test_a_button_of_the_open_phase_passes_and_one_without_a_phase_is_not_checked(
    game: Game,
) -> None:
    night = current_phase(game)
    assert check_button_phase(phase=night, phase_id=night.pk) is night
    assert check_button_phase(phase=night, phase_id=None) is night
    assert check_button_phase(phase=None, phase_id=None) is None


def test_a_button_of_another_phase_or_of_no_open_phase_is_stale(game: Game) -> None:
    night = current_phase(game)
    day = Phase.objects.get(game=game, kind=PhaseKind.DAY, number=1)
    with pytest.raises(StaleButton):
        check_button_phase(phase=night, phase_id=day.pk)
    with pytest.raises(StaleButton):
        check_button_phase(phase=None, phase_id=night.pk)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    review = current_phase(game)
    assert review.status == PhaseStatus.REVIEW
    with pytest.raises(StaleButton):
        check_button_phase(phase=review, phase_id=review.pk)


def test_a_night_reopened_for_the_mafia_is_open_to_the_mafia_only(game: Game) -> None:
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"))
    night = current_phase(game)
    mafia, doctor = seat(game, Role.MAFIA), seat(game, Role.DOCTOR)
    assert check_button_phase(phase=night, phase_id=night.pk, seat=mafia) is night
    with pytest.raises(StaleButton):
        check_button_phase(phase=night, phase_id=night.pk, seat=doctor)
