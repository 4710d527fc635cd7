"""gameplay.selectors.deadlines: which phases are due to close, which reminders are due, and
who has not yet done what the open phase asks."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.selectors.deadlines import (
    due_reminder_offsets,
    pending_actors,
    phases_due,
    phases_to_remind,
    reminder_offsets,
)
from tests.gameplay.deadline_support import DOCTOR, T0, day, started_game, vote_all

pytestmark = pytest.mark.django_db

DAY = timedelta(hours=24)
SECOND = timedelta(seconds=1)


def test_a_phase_is_due_once_its_deadline_has_passed_oldest_first() -> None:
    early = started_game(day_length=timedelta(hours=2))
    late = started_game(day_length=timedelta(hours=3))
    started_game(day_length=timedelta(hours=30))

    assert phases_due(T0 + timedelta(hours=2) - SECOND) == []
    assert phases_due(T0 + timedelta(hours=2)) == [day(early)]
    assert phases_due(T0 + timedelta(hours=4)) == [day(early), day(late)]


def test_reminders_are_due_once_per_offset_before_the_deadline() -> None:
    game = started_game(reminders=[60, "x", 0, 180, True, 60])
    phase = day(game)
    assert reminder_offsets(game) == [180, 60]

    assert due_reminder_offsets(phase, [180, 60], T0 + DAY - timedelta(minutes=181)) == []
    assert due_reminder_offsets(phase, [180, 60], T0 + DAY - timedelta(minutes=30)) == [180, 60]
    assert due_reminder_offsets(phase, [180, 60], T0 + DAY) == []  # the deadline itself
    assert phases_to_remind(T0 + DAY - timedelta(minutes=150)) == [phase]
    phase.reminded = [180]
    phase.save(update_fields=["reminded"])
    assert phases_to_remind(T0 + DAY - timedelta(minutes=150)) == []


def test_pending_actors_by_day_and_by_night() -> None:
    game = started_game()
    vote_all(game, except_seats=(2, 5))
    assert [s.number for s in pending_actors(day(game))] == [2, 5]
    services.vote_submit(game_id=game.pk, voter=2, target=6)
    services.vote_submit(game_id=game.pk, voter=5, target=6)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))  # seat 6 is executed
    night = game.phases.get(kind="night", number=1)

    assert [s.number for s in pending_actors(night)] == [1, 2, 3, 4, 5]
    services.night_action_submit(game_id=game.pk, actor=1, act="mafia_shot", target=7)
    services.night_action_submit(game_id=game.pk, actor=3, act="check", target=5)
    services.night_action_submit(game_id=game.pk, actor=5, act="maniac_shot", target=8)
    assert [s.number for s in pending_actors(night)] == [DOCTOR]
