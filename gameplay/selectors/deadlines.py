"""Reads for the deadline tick and the GM's "remind now": which phases are due to close, which
reminders are due, and who has not yet acted.

A phase's deadline and the reminders already sent live in the database (``Phase.deadline``,
``Phase.reminded``); nothing here depends on Redis, so a lost Redis loses no deadline.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from gameplay.models import (
    Game,
    GameStatus,
    NightAction,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
    Vote,
)
from gameplay.rules import Role, Slot
from gameplay.rules.roles import DUTY_ROLES


def is_due(phase: Phase, now: datetime) -> bool:
    """Whether the tick should close this phase now: it is open and its deadline has passed.

    A night the GM re-opened for the mafia's shot (RULES.md G2) was closed at its deadline
    already; it waits for the GM unless the GM set a new deadline after that close.
    """
    if phase.status != PhaseStatus.OPEN or phase.deadline is None or phase.deadline > now:
        return False
    if phase.reopened_for:
        return phase.closed_at is not None and phase.deadline > phase.closed_at
    return True


def phases_due(now: datetime) -> list[Phase]:
    """Open phases of running games whose deadline has passed, oldest deadline first."""
    candidates = (
        Phase.objects.filter(
            status=PhaseStatus.OPEN, deadline__lte=now, game__status=GameStatus.RUNNING
        )
        .select_related("game")
        .order_by("deadline", "id")
    )
    return [p for p in candidates if is_due(p, now)]


def reminder_offsets(game: Game) -> list[int]:
    """The game's reminder offsets in minutes before a deadline, largest first.

    ``Game.reminders`` is free JSON: anything that is not a positive whole number of minutes
    is ignored.
    """
    raw = game.reminders if isinstance(game.reminders, list) else []
    offsets = {m for m in raw if isinstance(m, int) and not isinstance(m, bool) and m > 0}
    return sorted(offsets, reverse=True)


def due_reminder_offsets(phase: Phase, offsets: Iterable[int], now: datetime) -> list[int]:
    """Offsets whose time has come (deadline - offset <= now < deadline) and not yet sent,
    largest first.

    An offset whose time falls at or before the phase's opening is never due: players were
    just told the deadline when the phase opened.
    """
    if phase.status != PhaseStatus.OPEN or phase.deadline is None or now >= phase.deadline:
        return []
    sent = set(phase.reminded or [])
    due = []
    for minutes in offsets:
        at = phase.deadline - timedelta(minutes=minutes)
        if minutes not in sent and at <= now and at > phase.opened_at:
            due.append(minutes)
    return sorted(due, reverse=True)


def phases_to_remind(now: datetime) -> list[Phase]:
    """Open phases of running games with at least one reminder due now."""
    candidates = (
        Phase.objects.filter(
            status=PhaseStatus.OPEN, deadline__gt=now, game__status=GameStatus.RUNNING
        )
        .select_related("game")
        .order_by("deadline", "id")
    )
    return [p for p in candidates if due_reminder_offsets(p, reminder_offsets(p.game), now)]


def pending_actors(phase: Phase) -> list[Seat]:
    """Living players who have not yet done what the open phase asks of them, in seat order.

    Day: everyone alive without a standing vote (a vote voided by a modkill does not count, so
    its voter may vote again, RULES.md V7). Night: the commissar, the doctor and the maniac
    without a standing role action (P1), and every living mafia member while the team has no
    shot. A night re-opened for the mafia's shot alone (G2) waits only for the mafia.
    """
    living = list(
        Seat.objects.filter(
            game_id=phase.game_id, status=SeatStatus.PLAYER, number__isnull=False, alive=True
        ).order_by("number")
    )
    if phase.kind == PhaseKind.DAY:
        voted = set(
            Vote.objects.filter(phase=phase, current=True, void=False).values_list(
                "voter_id", flat=True
            )
        )
        return [s for s in living if s.pk not in voted]
    standing = NightAction.objects.filter(phase=phase, current=True)
    team_shot = standing.filter(slot=Slot.MAFIA_SHOT.value).exists()
    acted = set(standing.filter(slot=Slot.ROLE.value).values_list("actor_id", flat=True))
    pending = []
    for seat in living:
        role = Role(seat.role) if seat.role else None
        if role is Role.MAFIA:
            if not team_shot:
                pending.append(seat)
        elif role in DUTY_ROLES and not phase.reopened_for and seat.pk not in acted:
            pending.append(seat)
    return pending
