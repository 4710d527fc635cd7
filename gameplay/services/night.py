"""Night services: actions, the close with a draft resolution, GM edits, publication
(RULES.md §4, §5, G2)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from gameplay.messages import Person, render
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    NightAction,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    Source,
)
from gameplay.refusals import (
    ActByDay,
    EditReasonMissing,
    NightDeathNotAlive,
    NightReopenedForMafiaShot,
    NightUnderReview,
)
from gameplay.rules import (
    Act,
    NightContext,
    NightInput,
    NightResolution,
    Role,
    Slot,
    amend_night,
    resolve_night,
    validate_action,
)
from gameplay.rules.errors import PhaseNotOpen
from gameplay.rules.roles import ACT_TITLES
from gameplay.selectors.bot import night_closed_to
from gameplay.selectors.table import standing_submissions
from outbox import dbrows, unit_of_work

from .common import (
    current_phase,
    lock_game,
    log_event,
    now_or,
    players,
    require_running,
    seat_by_number,
    send_message,
    table_of,
)
from .publication import publish_night


@dataclass(frozen=True)
class ActionOutcome:
    action: NightAction
    replaced: bool


def _night(game: Game, status: str = PhaseStatus.OPEN) -> Phase:
    return _as_night(current_phase(game), status)


def _as_night(phase: Phase | None, status: str = PhaseStatus.OPEN) -> Phase:
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


def night_action_submit_locked(
    *,
    game: Game,
    phase: Phase | None,
    seats: list[Seat] | None,
    actor: int,
    act: Act | str,
    target: int,
    guess: Role | str | None = None,
    source: str = Source.PM,
) -> ActionOutcome:
    """:func:`.actions.night_action_submit` for a service that has locked ``game`` in its
    transaction and read its current ``phase`` (and its ``players``, or None) already: the same
    checks and writes, without reading them again."""
    require_running(game=game)
    phase = _as_night(phase)
    act = Act(act)
    guess_role = Role(guess) if guess else None
    seats = players(game) if seats is None else seats
    if phase.reopened_for:
        _check_reopened_for(phase, seats, actor, act)
    table = table_of(seats)
    sub = validate_action(
        table, night_context(game=game, phase=phase, seats=seats), actor, act, target, guess_role
    )
    actor_seat = seat_by_number(seats=seats, number=actor)
    target_seat = seat_by_number(seats=seats, number=target)
    replaced = _retire_standing(phase, act, actor_seat)
    action = NightAction(
        phase=phase,
        actor=actor_seat,
        act=act.value,
        slot=act.slot.value,
        target=target_seat,
        guess=sub.guess.value if sub.guess else "",
        source=source,
    )
    dbrows.insert([action])
    log_event(game, EventKind.NIGHT_ACTION, by=Actor.seat(actor), phase=phase, **sub.as_dict())
    if source != Source.REPLAY:
        _echo_action(game, seats, act, actor_seat, target_seat, sub.guess)
    return ActionOutcome(action, replaced)


def _check_reopened_for(phase: Phase, seats: list[Seat], actor: int, act: Act) -> None:
    """G2: a night re-opened for the mafia's shot takes that shot alone, from the mafia."""
    actor_seat = next((s for s in seats if s.number == actor), None)
    if actor_seat is None or night_closed_to(phase, actor_seat):
        raise NightUnderReview()
    if act.slot.value != phase.reopened_for:
        raise NightReopenedForMafiaShot()


def _retire_standing(phase: Phase, act: Act, actor_seat: Seat) -> bool:
    """Retire the action standing in the slot ``act`` fills (see ``Slot``); True if there was
    one. The transaction's kept slots spare the query when nothing stands there."""
    kept = unit_of_work.entry_of_phase(phase)
    key = _standing_key(act.slot.value, actor_seat.pk, act.value)
    standing_keys = kept.standing_or(lambda: _standing_keys(phase)) if kept is not None else None
    if kept is not None:
        kept.begin_writes()  # (see common.hot_game)
    if standing_keys is not None and key not in standing_keys:
        replaced = False  # nothing stands in the slot: nothing to replace
    else:
        standing = NightAction.objects.filter(phase=phase, current=True, slot=act.slot.value)
        if act.slot is Slot.ROLE:
            standing = standing.filter(actor=actor_seat)
        elif act.slot is Slot.ITEM:
            standing = standing.filter(act=act.value)
        replaced = standing.update(current=False) > 0
    if kept is not None:
        kept.record_standing(key)
    return replaced


def _echo_action(
    game: Game,
    seats: list[Seat],
    act: Act,
    actor_seat: Seat,
    target_seat: Seat,
    guess: Role | None,
) -> None:
    """The actor's confirmation; a mafia shot is also told to the living mafia."""
    target_label = Person.of(target_seat)
    send_message(
        game=game,
        peer_ids=[actor_seat.vk_user_id],
        text=render(
            "player/action_accepted", act=ACT_TITLES[act], target=target_label, guess=guess
        ),
        kind="action_echo",
    )
    if act is Act.MAFIA_SHOT:
        team = [s.vk_user_id for s in seats if s.alive and s.role == Role.MAFIA]
        send_message(
            game=game,
            peer_ids=team,
            text=render(
                "player/mafia_shot_update", sender=Person.of(actor_seat), target=target_label
            ),
            kind="mafia_shot",
        )


def _standing_keys(phase: Phase) -> set[tuple[str, int | str | None]]:
    """The slots of the night's current actions (one query)."""
    return {
        _standing_key(slot, actor_id, done)
        for slot, actor_id, done in NightAction.objects.filter(
            phase=phase, current=True
        ).values_list("slot", "actor_id", "act")
    }


def _standing_key(slot: str, actor_id: int, act: str) -> tuple[str, int | str | None]:
    """What a submission in ``slot`` replaces: the actor's role act, the item's one use, or
    the team's act of the night (see ``Slot``)."""
    if slot == Slot.ROLE:
        return slot, actor_id
    if slot == Slot.ITEM:
        return slot, act
    return slot, None


@transaction.atomic
def night_close(
    *, game_id: int, by: Actor = Actor.BOT, now: datetime | None = None
) -> NightResolution:
    """Close the night: resolve it into a draft the GM reviews (or publish it at once when the
    game auto-publishes). Returns the resolution."""
    now = now_or(now=now)
    game = lock_game(game_id=game_id)
    require_running(game=game)
    phase = _night(game)
    seats = players(game)
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
        return publish_night(game=game, phase=phase, seats=seats, now=now, by=by)
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
    phase = _night(game, PhaseStatus.REVIEW)
    seats = players(game)
    table = table_of(seats)
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
    phase = _night(game, PhaseStatus.REVIEW)
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
    now = now_or(now=now)
    game = lock_game(game_id=game_id)
    require_running(game=game)
    phase = _night(game, PhaseStatus.REVIEW)
    return publish_night(game=game, phase=phase, seats=players(game), now=now, by=by)
