"""Sending a night action (RULES.md §4): one command, :func:`night_action_submit`, whoever
sends it: a seat number (the GM's tools, the scenarios) or a VK user (the bot: text or a
button). One code path for both: the game's unit of work from :func:`common.hot_game`, the
actor's seat found once, and :func:`night_action_submit_locked`. Closing, reviewing and
publishing the night are :mod:`.night`'s and :mod:`.publication`'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from gameplay.messages import Person, render
from gameplay.models import Actor, EventKind, Game, NightAction, Phase, Seat, Source
from gameplay.refusals import NightReopenedForMafiaShot, NightUnderReview
from gameplay.rules import Act, Role, Slot, validate_action
from gameplay.rules.roles import ACT_TITLES
from gameplay.selectors.bot import night_closed_to
from gameplay.unit_of_work import LockedGame, standing_key
from outbox import dbrows

from .acting import check_button_phase, seat_of_user
from .common import hot_game, require_running, seat_by_number, send_message, table_of
from .night import as_night, night_context


@dataclass(frozen=True)
class ActionOutcome:
    action: NightAction
    replaced: bool


def night_action_submit(
    *,
    game_id: int,
    act: Act | str,
    target: int,
    actor: int | None = None,
    vk_user_id: int | None = None,
    guess: Role | str | None = None,
    source: str = Source.PM,
    phase_id: int | None = None,
    now: datetime | None = None,
) -> ActionOutcome:
    """Send or change a night action; a later one in the same slot replaces it. The actor is
    ``actor`` (a seat number) or the living seat of ``vk_user_id`` (from VK: text, or a
    button naming ``phase_id``; the mafia then sees the team's role strike and who sent it,
    as it sees the team's shot)."""
    if vk_user_id is None and actor is None:
        raise TypeError("night_action_submit needs actor or vk_user_id")
    with hot_game(game_id=game_id) as uow:
        seat = None
        if vk_user_id is not None:
            seat = seat_of_user(game=uow.game, vk_user_id=vk_user_id, seats=uow.seats)
            check_button_phase(phase=uow.phase, phase_id=phase_id, seat=seat)
            source = Source.PM
        outcome = night_action_submit_locked(
            uow=uow,
            actor=seat,
            actor_number=actor,
            act=act,
            target=target,
            guess=guess,
            source=source,
        )
        if seat is not None:
            _mafia_strike_update(uow.game, uow.seats, seat, outcome)
    return outcome


def night_action_submit_locked(
    *,
    uow: LockedGame,
    actor: Seat | None,
    actor_number: int | None = None,
    act: Act | str,
    target: int,
    guess: Role | str | None = None,
    source: str = Source.PM,
) -> ActionOutcome:
    """:func:`night_action_submit` on the game ``uow`` holds locked: the checks (the game
    running, its phase an open night, G2's re-open, the rules'), the action written and logged,
    the confirmations. The actor is the seat ``actor`` (found by the caller) or seat number
    ``actor_number`` (looked up here once)."""
    game, seats = uow.game, uow.seats
    require_running(game=game)
    phase = as_night(phase=uow.phase)
    act = Act(act)
    guess_role = Role(guess) if guess else None
    if actor is None:
        actor = next((s for s in seats if s.number == actor_number), None)
    number = cast(int, actor.number) if actor is not None else actor_number or 0  # a player's
    if phase.reopened_for:
        _check_reopened_for(phase, actor, act)
    table = uow.table_or(table_of)
    sub = validate_action(
        table, night_context(game=game, phase=phase, seats=seats), number, act, target, guess_role
    )
    actor_seat = actor or seat_by_number(seats=seats, number=number)  # (validated: seated)
    target_seat = seat_by_number(seats=seats, number=target)
    replaced = _retire_standing(uow, phase, act, actor_seat)
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
    uow.log_event(EventKind.NIGHT_ACTION, by=Actor.seat(number), phase=phase, **sub.as_dict())
    if source != Source.REPLAY:
        _echo_action(game, seats, act, actor_seat, target_seat, sub.guess)
    return ActionOutcome(action, replaced)


def _check_reopened_for(phase: Phase, actor: Seat | None, act: Act) -> None:
    """G2: a night re-opened for the mafia's shot takes that shot alone, from the mafia."""
    if actor is None or night_closed_to(phase, actor):
        raise NightUnderReview()
    if act.slot.value != phase.reopened_for:
        raise NightReopenedForMafiaShot()


def _retire_standing(uow: LockedGame, phase: Phase, act: Act, actor_seat: Seat) -> bool:
    """Retire the action standing in the slot ``act`` fills (see ``Slot``); True if there was
    one. While the pipeline keeps the game, its standing slots (read once per transaction)
    spare the query when nothing stands there."""
    key = standing_key(act.slot.value, actor_seat.pk, act.value)
    # (a handle of this call alone holds the slots its read found: nothing changed them since)
    standing_keys = uow.standing_or(lambda: _standing_keys(phase)) if uow.is_kept else uow.standing
    uow.begin_writes()  # (see common.hot_game)
    if standing_keys is not None and key not in standing_keys:
        replaced = False  # nothing stands in the slot: nothing to replace
    else:
        standing = {"phase_id": phase.pk, "current": True, "slot": act.slot.value}
        if act.slot is Slot.ROLE:
            standing["actor_id"] = actor_seat.pk
        elif act.slot is Slot.ITEM:
            standing["act"] = act.value
        replaced = dbrows.update_where(NightAction, {"current": False}, standing) > 0
    uow.record_standing(key)
    return replaced


def _standing_keys(phase: Phase) -> set[tuple[str, int | str | None]]:
    """The slots of the night's current actions (one query)."""
    return {
        standing_key(slot, actor_id, done)
        for slot, actor_id, done in NightAction.objects.filter(
            phase=phase, current=True
        ).values_list("slot", "actor_id", "act")
    }


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


def _mafia_strike_update(game: Game, seats: list[Seat], seat: Seat, outcome: ActionOutcome) -> None:
    action = outcome.action
    if action.act == Act.ROLE_STRIKE:
        team = [s.vk_user_id for s in seats if s.alive and s.role == Role.MAFIA and s.pk != seat.pk]
        if team:
            send_message(
                game=game,
                peer_ids=team,
                text=render(
                    "player/role_strike_update",
                    sender=Person.of(seat),
                    target=Person.of(action.target),
                    guess=action.guess,
                ),
                kind="mafia_strike",
            )
