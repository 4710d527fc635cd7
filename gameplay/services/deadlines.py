"""Deadlines and reminders (RULES.md §2): the scheduled tick, the GM's "remind now", and the
GM's hand on the open phase's end: extending its deadline or closing it now, as confirmed.

``deadline_tick`` is what the scheduled job (``gameplay.jobs.tick``) runs: it closes every open
phase whose deadline passed through the same services the GM uses (a day is tallied and
published; a night's draft goes to the GM, or is published at once when the game
auto-publishes) and sends the reminders that are due. Deadlines and the reminders already sent
are rows, so a tick after any restart catches up from the database alone.

Each game is handled in its own transaction with its row locked, and every decision is taken
again under that lock, so two ticks at once (or a tick racing the GM) do nothing twice. A game
that fails is logged, noted in its event log and skipped; the others go on.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from django.db import transaction

from gameplay.messages import closes_in, render, when
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    GameEvent,
    GameStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
)
from gameplay.refusals import (
    ExtendOnlyOpenPhase,
    ExtensionNotMinutes,
    ExtensionTooLong,
    GameNotInProgress,
    NobodyToRemind,
    NoOpenPhase,
    OutcomeChanged,
    PhaseChanged,
    RemindedRecently,
)
from gameplay.rules import DayResult, NightResolution
from gameplay.rules.errors import GameNotRunning, PhaseNotOpen, WrongPhase
from gameplay.selectors.close import close_preview
from gameplay.selectors.deadlines import (
    due_reminder_offsets,
    is_due,
    pending_actors,
    phases_due,
    phases_to_remind,
    reminder_offsets,
)
from gameplay.unit_of_work import LockedGame
from ops.outages import database_lost

from .common import (
    current_phase,
    lock_game,
    log_event,
    now_or,
    post_board,
    require_running,
    send_message,
)
from .day import day_close, day_close_locked
from .night import night_close, night_close_locked
from .settings import MAX_EXTENSION

log = logging.getLogger(__name__)

#: The GM's "remind now" is refused this soon after the phase's previous reminder.
REMIND_AGAIN_AFTER = timedelta(seconds=60)

#: Refusals meaning "somebody else closed this phase first": the tick skips the phase quietly.
_CLOSED_CONCURRENTLY = (PhaseNotOpen, WrongPhase, GameNotRunning)


@dataclass(frozen=True)
class ClosedPhase:
    game_id: int
    phase_id: int
    kind: str
    number: int
    #: The phase's status after the close: ``done`` (a day, or a night published at once) or
    #: ``review`` (a night's draft waiting for the GM).
    status: str


@dataclass(frozen=True)
class Reminder:
    game_id: int
    phase_id: int
    #: Minutes before the deadline; None for the GM's "remind now".
    offset: int | None
    #: Seat numbers of the players reminded.
    seats: list[int]


@dataclass(frozen=True)
class TickFailure:
    game_id: int
    phase_id: int
    stage: str
    error: str


@dataclass
class TickReport:
    """What one tick did."""

    now: datetime
    closed: list[ClosedPhase] = field(default_factory=list)
    #: Phases that were due but had been closed concurrently (by the GM or another tick).
    skipped: list[int] = field(default_factory=list)
    reminders: list[Reminder] = field(default_factory=list)
    failures: list[TickFailure] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["now"] = self.now.isoformat()
        return data


def deadline_tick(*, now: datetime | None = None) -> TickReport:
    """Close every phase whose deadline passed, then send the reminders that are due.

    Not atomic as a whole: each game is its own transaction, and one failing game does not
    stop the others. Safe to run concurrently with itself and with the GM.
    """
    now = now_or(now=now)
    report = TickReport(now=now)
    for phase in phases_due(now):
        _close_due(phase, now, report)
    for phase in phases_to_remind(now):
        _remind_due(phase, now, report)
    if report.closed or report.reminders or report.failures:
        log.info(
            "Deadline tick: %d closed, %d skipped, %d reminders, %d failures",
            len(report.closed),
            len(report.skipped),
            len(report.reminders),
            len(report.failures),
        )
    return report


def _close_due(phase: Phase, now: datetime, report: TickReport) -> None:
    try:
        with transaction.atomic():
            game = lock_game(game_id=phase.game_id)
            current = current_phase(game)
            if current is None or current.pk != phase.pk or not is_due(current, now):
                report.skipped.append(phase.pk)
                return
            if current.kind == PhaseKind.DAY:
                day_close(game_id=game.pk, by=Actor.DEADLINE, now=now)
            else:
                night_close(game_id=game.pk, by=Actor.DEADLINE, now=now)
            current.refresh_from_db(fields=["status"])
    except _CLOSED_CONCURRENTLY:
        report.skipped.append(phase.pk)
        return
    except Exception as error:  # noqa: BLE001 - one game's failure must not stop the others
        if database_lost(error):  # no game can be served: the tick ends (gameplay.jobs)
            raise
        _fail(phase, "close", error, report)
        return
    report.closed.append(
        ClosedPhase(phase.game_id, phase.pk, phase.kind, phase.number, current.status)
    )


def _remind_due(phase: Phase, now: datetime, report: TickReport) -> None:
    try:
        with transaction.atomic():
            game = lock_game(game_id=phase.game_id)
            if game.status != GameStatus.RUNNING:
                return
            current = current_phase(game)
            if current is None or current.pk != phase.pk:
                return
            due = due_reminder_offsets(current, reminder_offsets(game), now)
            if not due:
                return
            # Only the latest due reminder is sent: after downtime, one message, not a burst.
            current.reminded = sorted(set(current.reminded or []) | set(due), reverse=True)
            current.save(update_fields=["reminded"])
            seats = pending_actors(current)
            if seats:
                report.reminders.append(
                    _send_reminder(game, current, seats, now, by=Actor.DEADLINE, offset=due[-1])
                )
    except Exception as error:  # noqa: BLE001 - one game's failure must not stop the others
        if database_lost(error):  # no game can be served: the tick ends (gameplay.jobs)
            raise
        _fail(phase, "remind", error, report)


def _send_reminder(
    game: Game, phase: Phase, seats: list[Seat], now: datetime, *, by: Actor, offset: int | None
) -> Reminder:
    text = render(
        "player/day_reminder" if phase.kind == PhaseKind.DAY else "player/night_reminder",
        number=phase.number,
        deadline=when(phase.deadline, game.time_zone) if phase.deadline else "",
        left=closes_in(phase.deadline - now) if phase.deadline else "",
    )
    send_message(game=game, peer_ids=[s.vk_user_id for s in seats], text=text, kind="reminder")
    numbers = [cast(int, s.number) for s in seats]  # the players' seats
    log_event(
        game,
        EventKind.REMINDER_SENT,
        by=by,
        phase=phase,
        offset=offset,
        seats=numbers,
        at=now.isoformat(),
    )
    return Reminder(game.pk, phase.pk, offset, numbers)


def _fail(phase: Phase, stage: str, error: Exception, report: TickReport) -> None:
    """Log a game's failure for the operator and note it once in the game's event log."""
    message = f"{type(error).__name__}: {error}"[:500]
    log.error(
        "Deadline tick: %s of game %s, phase %s failed",
        stage,
        phase.game_id,
        phase.pk,
        exc_info=error,
    )
    report.failures.append(TickFailure(phase.game_id, phase.pk, stage, message))
    try:
        with transaction.atomic():
            game = lock_game(game_id=phase.game_id)
            noted = GameEvent.objects.filter(
                game=game, phase_id=phase.pk, kind=EventKind.DEADLINE_FAILED, data__error=message
            ).exists()
            if not noted:  # a persistent failure is noted once, not on every tick
                log_event(game, EventKind.DEADLINE_FAILED, phase=phase, stage=stage, error=message)
    except Exception:  # noqa: BLE001 - the operator's log above already has the failure
        log.exception("Deadline tick: could not note the failure in game %s", phase.game_id)


@transaction.atomic
def phase_remind(*, game_id: int, by: Actor, now: datetime | None = None) -> Reminder:
    """The GM reminds, now, every living player who has not yet voted or acted in the open
    phase (the same message as the scheduled reminders). Refused when nobody is left to remind
    or when the phase was reminded less than a minute ago."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    require_running(game=game)
    phase = current_phase(game)
    if phase is None or phase.status != PhaseStatus.OPEN:
        raise NoOpenPhase()
    previous = (
        GameEvent.objects.filter(game=game, phase=phase, kind=EventKind.REMINDER_SENT)
        .order_by("-seq")
        .first()
    )
    if previous is not None:
        at = previous.data.get("at")
        since = now - (datetime.fromisoformat(at) if at else previous.created_at)
        if timedelta(0) <= since < REMIND_AGAIN_AFTER:
            raise RemindedRecently(seconds=int(since.total_seconds()))
    seats = pending_actors(phase)
    if not seats:
        raise NobodyToRemind()
    return _send_reminder(game, phase, seats, now, by=by, offset=None)


# --- the GM's hand on the open phase ----------------------------------------------------------


@dataclass(frozen=True)
class PhaseClosed:
    """A phase closed as confirmed: the phase, and what its close did."""

    phase: Phase
    result: DayResult | NightResolution


@transaction.atomic
def phase_close_confirmed(
    *, game_id: int, by: Actor, phase_id: int, fingerprint: str, now: datetime | None = None
) -> PhaseClosed:
    """«Закрыть день/ночь сейчас» as confirmed on its page: under the game's lock, only while
    phase ``phase_id`` is still open and closing it would still do what the page showed (its
    ``close_preview`` fingerprint); else ``PhaseChanged`` / ``OutcomeChanged`` (carrying what
    the close would do now), and nothing changes. Checked here, not in the view, so a vote
    arriving between the page and the close cannot slip in. The close itself is the day's or
    the night's, on what the preview read under the lock."""
    game = lock_game(game_id=game_id)
    preview = close_preview(game)
    if preview is None or preview.phase.pk != phase_id:
        raise PhaseChanged()
    if preview.fingerprint != fingerprint:
        changed = OutcomeChanged()
        changed.preview = preview
        raise changed
    uow = LockedGame(game, preview.phase, list(preview.seats.values()))
    if preview.phase.kind == PhaseKind.DAY:
        result: DayResult | NightResolution = day_close_locked(
            uow=uow, now=now_or(now=now), by=by, early=False
        )
    else:
        result = night_close_locked(uow=uow, now=now_or(now=now), by=by)
    return PhaseClosed(preview.phase, result)


@transaction.atomic
def phase_extend(*, game_id: int, by: Actor, minutes: int, now: datetime | None = None) -> datetime:
    """Move the open phase's deadline later by ``minutes`` (from now if it has passed or
    there was none). Reminders whose time is again ahead will be sent again."""
    now = now_or(now=now)
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1:
        raise ExtensionNotMinutes()
    delta = timedelta(minutes=minutes)
    if delta > MAX_EXTENSION:
        raise ExtensionTooLong()
    game = lock_game(game_id=game_id)
    if game.status != GameStatus.RUNNING:
        raise GameNotInProgress()
    phase = current_phase(game)
    if phase is None or phase.status != PhaseStatus.OPEN:
        raise ExtendOnlyOpenPhase()
    before = phase.deadline
    base = before if before is not None and before > now else now
    phase.deadline = base + delta
    phase.reminded = [
        m for m in phase.reminded or [] if phase.deadline - timedelta(minutes=int(m)) <= now
    ]
    phase.save(update_fields=["deadline", "reminded"])
    log_event(
        game,
        EventKind.DEADLINE_EXTENDED,
        by=by,
        phase=phase,
        minutes=minutes,
        before=before.isoformat() if before else None,
        deadline=phase.deadline.isoformat(),
    )
    post_board(
        game=game,
        text=render(
            "board/deadline_extended",
            kind=phase.kind,
            number=phase.number,
            deadline=when(phase.deadline, game.time_zone),
        ),
        kind="deadline_extended",
    )
    return phase.deadline
