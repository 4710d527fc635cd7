"""Night services: the close with a draft resolution, the GM's review and edits, the re-open for
the mafia's shot, the publication (RULES.md §4, §5, G2); sending an action is :mod:`.actions`'s."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction

from gameplay.messages import render
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    NightAction,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
)
from gameplay.refusals import (
    ActByDay,
    EditReasonMissing,
    NightDeathNotAlive,
    NightUnderReview,
)
from gameplay.rules import (
    NightContext,
    NightInput,
    NightResolution,
    Role,
    Slot,
    amend_night,
    resolve_night,
)
from gameplay.rules.errors import PhaseNotOpen
from gameplay.selectors.table import standing_submissions
from gameplay.unit_of_work import LockedGame

from .common import (
    current_phase,
    lock_game,
    log_event,
    now_or,
    players,
    require_running,
    send_message,
    table_of,
)
from .publication import night_publish_locked


def night_of(*, game: Game, status: str = PhaseStatus.OPEN) -> Phase:
    """The game's current phase, as a night of ``status`` (else the refusal an action would
    get)."""
    return as_night(phase=current_phase(game), status=status)


def as_night(*, phase: Phase | None, status: str = PhaseStatus.OPEN) -> Phase:
    """``phase``, checked to be a night of ``status`` (open: what a night action needs)."""
    if phase is None or phase.kind != PhaseKind.NIGHT:
        raise ActByDay()
    if phase.status != status:
        if status == PhaseStatus.OPEN and phase.status == PhaseStatus.REVIEW:
            raise NightUnderReview()
        raise PhaseNotOpen()
    return phase


def night_context(*, game: Game, phase: Phase, seats: Iterable[Seat]) -> NightContext:
    doctor = next((s for s in seats if s.role == Role.DOCTOR), None)
    return NightContext(
        number=phase.number,
        role_strike_used=game.role_strike_used,
        last_heal_target=doctor.last_heal_target if doctor else None,
    )


@transaction.atomic
def night_close(
    *, game_id: int, by: Actor = Actor.BOT, now: datetime | None = None
) -> NightResolution:
    """Close the night: resolve it into a draft the GM reviews (or publish it at once when the
    game auto-publishes). Returns the resolution."""
    game = lock_game(game_id=game_id)
    require_running(game=game)
    uow = LockedGame(game, night_of(game=game), players(game))
    return night_close_locked(uow=uow, now=now_or(now=now), by=by)


def night_close_locked(*, uow: LockedGame, now: datetime, by: Actor) -> NightResolution:
    """:func:`night_close` on the game ``uow`` holds locked, its phase the open night."""
    game, seats = uow.game, uow.seats
    phase = as_night(phase=uow.phase)
    res = resolve_night(
        table_of(seats), NightInput.from_submissions(phase.number, standing_submissions(phase))
    )
    phase.status = PhaseStatus.REVIEW
    phase.closed_at = now
    phase.reopened_for = ""
    phase.result = {"draft": res.as_dict()}
    phase.save(update_fields=["status", "closed_at", "reopened_for", "result"])
    log_event(game, EventKind.NIGHT_CLOSED, by=by, phase=phase, draft=res.as_dict())
    if res.no_mafia_shot:
        # RULES.md P4: no automatic strike; the GM is alerted and may penalise by hand.
        log_event(game, EventKind.ALERT_NO_MAFIA_SHOT, phase=phase, number=phase.number)
    if game.auto_publish:
        return night_publish_locked(uow=uow, now=now, by=by)
    return res


@transaction.atomic
def night_draft_edit(
    *, game_id: int, by: Actor, deaths: Iterable[int], reason: str
) -> NightResolution:
    """The GM sets who dies in the night under review (G1); logged as an override."""
    reason = (reason or "").strip()
    if not reason:
        raise EditReasonMissing()
    game = lock_game(game_id=game_id)
    require_running(game=game)
    phase = night_of(game=game, status=PhaseStatus.REVIEW)
    seats = players(game)
    table = table_of(seats)
    assert phase.result is not None  # a night under review has its draft
    draft = NightResolution.from_dict(phase.result["draft"])
    try:
        amended = amend_night(table, draft, deaths=deaths, reason=reason)
    except ValueError:
        raise NightDeathNotAlive() from None
    phase.result = {**phase.result, "draft": amended.as_dict()}
    phase.save(update_fields=["result"])
    log_event(
        game,
        EventKind.NIGHT_EDITED,
        by=by,
        phase=phase,
        override=True,
        number=phase.number,
        deaths=list(amended.deaths),
        before=list(draft.deaths),
        added=_changed(seats, set(amended.deaths) - set(draft.deaths)),
        removed=_changed(seats, set(draft.deaths) - set(amended.deaths)),
        reason=reason,
    )
    return amended


def _changed(seats: list[Seat], numbers: set[int]) -> list[dict[str, object]]:
    """The seats a GM edit added to or removed from the night's deaths, with their roles
    (the log's line names them so: «№3 (Мафия)»)."""
    roles = {s.number: s.role for s in seats}
    return [{"seat": n, "role": roles.get(n, "")} for n in sorted(numbers)]


@transaction.atomic
def night_reopen_mafia(
    *, game_id: int, by: Actor, reason: str = "", now: datetime | None = None
) -> Phase:
    """G2: re-open the night under review for the mafia's shot alone; the mafia are told."""
    game = lock_game(game_id=game_id)
    require_running(game=game)
    phase = night_of(game=game, status=PhaseStatus.REVIEW)
    NightAction.objects.filter(phase=phase, current=True, slot=Slot.MAFIA_SHOT.value).update(
        current=False
    )
    phase.status = PhaseStatus.OPEN
    phase.reopened_for = Slot.MAFIA_SHOT.value
    phase.result = None
    phase.save(update_fields=["status", "reopened_for", "result"])
    log_event(
        game,
        EventKind.MAFIA_SHOT_REOPENED,
        by=by,
        phase=phase,
        override=True,
        number=phase.number,
        reason=reason,
    )
    team = [s.vk_user_id for s in players(game) if s.alive and s.role == Role.MAFIA]
    send_message(
        game=game,
        peer_ids=team,
        text=render("player/mafia_reopened", number=phase.number),
        kind="mafia_reopened",
    )
    return phase


@transaction.atomic
def night_publish(
    *, game_id: int, by: Actor = Actor.BOT, now: datetime | None = None
) -> NightResolution:
    """Publish the night under review: deaths, spent items, checks, dawn strikes; Day opens."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    require_running(game=game)
    phase = night_of(game=game, status=PhaseStatus.REVIEW)
    uow = LockedGame(game, phase, players(game))
    return night_publish_locked(uow=uow, now=now, by=by)
