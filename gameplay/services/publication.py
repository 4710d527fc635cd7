"""Publishing a night under review (RULES.md §5): dawn recomputed from the seats as they are,
spent items, deaths and dawn strikes saved, the board's post, the commissars' checks, and the
next day opened (or the game finished). Closing and reviewing the night are :mod:`.night`'s."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from gameplay import themes
from gameplay.messages import Person, render
from gameplay.models import (
    Actor,
    DeathCause,
    EventKind,
    Game,
    ItemUse,
    NightAction,
    Phase,
    PhaseStatus,
    Seat,
)
from gameplay.rules import NightResolution, Role, Slot, StrikeGiven, dawn, decide_winner
from gameplay.unit_of_work import LockedGame

from .common import (
    log_event,
    notify_strikes,
    post_board,
    save_changed_seats,
    seat_fields,
    send_message,
    send_you_died,
    strike_record,
    table_of,
)
from .phases import day_open_locked, game_finish_locked


def night_publish_locked(*, uow: LockedGame, now: datetime, by: Actor) -> NightResolution:
    """Publish the night under review of the game ``uow`` holds locked (its phase): save,
    announce, and open the next day or finish the game. Returns the final resolution."""
    game, phase, seats = uow.game, uow.phase, uow.seats
    assert phase is not None  # (the callers checked it is the night under review)
    # Recompute dawn from the seats as they are now: the GM may have modkilled, replaced,
    # struck or forgiven someone during the review.
    assert phase.result is not None  # a night under review has its draft
    res = dawn(table_of(seats), NightResolution.from_dict(phase.result["draft"]))
    by_number = {cast(int, s.number): s for s in seats}  # the players' seats
    saved = ["alive", "death_cause", "died_in", "strikes", "item_used", "last_heal_target"]
    before = [seat_fields(seat=s, fields=saved) for s in seats]
    _spend_items(game, phase, res, by_number)
    if res.role_strike_spent:
        game.role_strike_used = True
        game.save(update_fields=["role_strike_used"])
    for s in seats:
        if s.role == Role.DOCTOR:
            s.last_heal_target = res.heal_target
    died = _kill_at_dawn(phase, res, by_number)
    penalised, struck = _strike_at_dawn(phase, res, by_number)
    save_changed_seats(seats=seats, fields=saved, before=before)
    phase.status = PhaseStatus.DONE
    phase.published_at = now
    phase.result = {**phase.result, "final": res.as_dict()}
    phase.save(update_fields=["status", "published_at", "result"])
    log_event(game, EventKind.NIGHT_PUBLISHED, by=by, phase=phase, **res.as_dict())
    _announce(game, phase, res, by_number, died=died, penalised=penalised, struck=struck)
    winner = decide_winner(table_of(seats))
    if winner is not None:
        game_finish_locked(game=game, winner=winner, now=now, by=by)
    else:
        day_open_locked(game=game, number=phase.number + 1, now=now, seats=seats)
    return res


def _spend_items(
    game: Game, phase: Phase, res: NightResolution, by_number: dict[int, Seat]
) -> None:
    """Mark the items spent this night used and record each use."""
    standing = {
        a.act: a
        for a in NightAction.objects.filter(phase=phase, current=True, slot=Slot.ITEM.value)
    }
    for item in res.spent_items:
        use = standing.get(item.value)
        holder = by_number.get(cast(int, use.actor.number)) if use else None
        if use is None or holder is None:
            continue
        holder.item_used = True
        ItemUse.objects.create(
            game=game,
            phase=phase,
            seat=holder,
            item=item.value,
            target=use.target,
            blocked=holder.number in res.blocked,
        )


def _kill_at_dawn(phase: Phase, res: NightResolution, by_number: dict[int, Seat]) -> list[Seat]:
    """The night's deaths set on the seats (not saved yet); returns who died."""
    died: list[Seat] = []
    for n in res.deaths:
        seat = by_number[n]
        if seat.alive:  # a GM modkill during the review may have removed them already
            seat.alive, seat.death_cause, seat.died_in = False, DeathCause.NIGHT, phase
            died.append(seat)
    return died


def _strike_at_dawn(
    phase: Phase, res: NightResolution, by_number: dict[int, Seat]
) -> tuple[list[Seat], list[tuple[Seat, StrikeGiven]]]:
    """The dawn strikes of the living recorded and set on the seats (not saved yet); returns
    the seats penalised for the next day and every (seat, strike)."""
    penalised: list[Seat] = []
    struck: list[tuple[Seat, StrikeGiven]] = []
    for strike in res.strikes:
        seat = by_number[strike.seat]
        if not seat.alive:
            continue
        struck.append((seat, strike))
        strike_record(seat=seat, phase=phase, given=strike)
        if strike.modkill:
            seat.alive, seat.death_cause, seat.died_in = False, DeathCause.MODKILL, phase
        else:
            penalised.append(seat)
    return penalised, struck


def _announce(
    game: Game,
    phase: Phase,
    res: NightResolution,
    by_number: dict[int, Seat],
    *,
    died: list[Seat],
    penalised: list[Seat],
    struck: list[tuple[Seat, StrikeGiven]],
) -> None:
    """The board's post, the commissars' checks, the strikes and the deaths, told."""
    post_board(
        game=game,
        text=night_result_text(
            game=game,
            number=phase.number,
            died=died,
            modkilled=[by_number[n] for n in res.modkilled],
            penalised=penalised,
            story=phase.story,
        ),
        kind="night_result",
    )
    for check in res.checks:
        commissar = by_number[check.commissar]
        target = by_number[check.target]
        send_message(
            game=game,
            peer_ids=[commissar.vk_user_id],
            text=render(
                "player/check_result",
                number=phase.number,
                target=Person.of(target),
                is_mafia=check.is_mafia,
            ),
            kind="check_result",
        )
    notify_strikes(game=game, struck=struck, phase=phase, counted=False)
    send_you_died(game=game, seats=died + [by_number[n] for n in res.modkilled])


def night_result_text(
    *,
    game: Game,
    number: int,
    died: list[Seat],
    modkilled: list[Seat],
    penalised: list[Seat],
    story: str = "",
) -> str:
    """The board's post after a night: the GM's story paragraph (``story``) or, without one,
    the theme's, then the facts (deaths, with roles when the game reveals them, modkills,
    penalty votes)."""
    reveal = game.reveal_on_night_death
    return render(
        "board/night_result",
        theme=themes.of(game),
        number=number,
        story=story,
        deaths=[{"person": Person.of(s), "role": s.role if reveal else ""} for s in died],
        modkilled=[{"person": Person.of(s), "role": s.role} for s in modkilled],
        penalties=[Person.of(s) for s in penalised],
    )
