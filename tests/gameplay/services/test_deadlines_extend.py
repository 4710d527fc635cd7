"""gameplay.services.deadlines: the GM extends the open phase's deadline."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gameplay.models import (
    Actor,
    GameEvent,
    Phase,
    PhaseStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.deadlines import phase_extend
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_extend_moves_the_deadline_and_resets_reminders_ahead(gm: Any) -> None:
    game = make_game(gm, players=7)
    now = timezone.now()
    phase = Phase.objects.get(game=game, status=PhaseStatus.OPEN)
    Phase.objects.filter(pk=phase.pk).update(
        deadline=now + timedelta(minutes=30), reminded=[180, 60]
    )
    new = phase_extend(game_id=game.pk, by=Actor.gm("x"), minutes=120, now=now)
    assert new == now + timedelta(minutes=150)
    phase.refresh_from_db()
    assert phase.reminded == [180]  # 60 minutes before the new deadline is ahead again
    Phase.objects.filter(pk=phase.pk).update(deadline=now - timedelta(hours=1))
    assert phase_extend(game_id=game.pk, by=Actor.gm("x"), minutes=30, now=now) == (
        now + timedelta(minutes=30)
    )  # a passed deadline is extended from now
    for bad in (0, -5, True, 60 * 24 * 31):
        with pytest.raises(InvalidCommand):
            phase_extend(game_id=game.pk, by=Actor.gm("x"), minutes=bad)
    assert GameEvent.objects.filter(game=game, kind="deadline_extended").count() == 2


def test_extend_needs_an_open_phase(gm: Any) -> None:
    game = make_game(gm, players=7, start=False)
    with pytest.raises(InvalidCommand, match="не идёт"):
        phase_extend(game_id=game.pk, by=Actor.gm("x"), minutes=10)
