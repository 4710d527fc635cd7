"""GM discipline: modkills, replacements, manual strikes and strike forgiveness (RULES.md §6)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from gameplay.buttons import menu_keyboard
from gameplay.messages import Person, render
from gameplay.models import (
    Actor,
    DeathCause,
    EventKind,
    Game,
    GameStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.refusals import (
    AlreadyPlaying,
    ModkillNotForgivable,
    ModkillReasonMissing,
    NoActivePhase,
    NoSuchStrike,
    ReplacementNotNow,
    StrikeAlreadyForgiven,
)
from gameplay.rules import (
    EarlyClose,
    NightInput,
    NightResolution,
    StrikeReason,
    decide_winner,
    early_close_reached,
    give_strike,
    redraft,
    validate_modkill,
    validate_replacement,
)
from gameplay.rules.spectators import may_watch
from gameplay.selectors.table import standing_submissions
from gameplay.unit_of_work import LockedGame

from . import prompts
from .common import (
    current_phase,
    lock_game,
    log_event,
    now_or,
    players,
    post_board,
    require_running,
    role_card_text,
    seat_by_number,
    send_message,
    send_you_died,
    strike_record,
    table_of,
)
from .day import ballots_of, day_close_locked
from .phases import game_finish_locked


@transaction.atomic
def seat_modkill(
    *, game_id: int, seat: int, by: Actor, reason: str = "", now: datetime | None = None
) -> Seat:
    """Remove a player at once and reveal their role (P5, G4); logged as an override. The
    reason is required: the player is told it."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    require_running(game=game)
    seats = players(game)
    validate_modkill(table_of(seats), seat)
    reason = (reason or "").strip()
    if not reason:  # after the game's own checks, so a dead seat is refused as one
        raise ModkillReasonMissing()
    target = seat_by_number(seats=seats, number=seat)
    phase = current_phase(game)
    _remove(game, target, phase, seats, now, by=by, reason=reason)
    return target


def _remove(
    game: Game,
    target: Seat,
    phase: Phase | None,
    seats: list[Seat],
    now: datetime,
    *,
    by: Actor,
    reason: str,
) -> None:
    target.alive = False
    target.death_cause = DeathCause.MODKILL
    target.died_in = phase
    target.save(update_fields=["alive", "death_cause", "died_in"])
    label = Person.of(target)
    log_event(
        game,
        EventKind.MODKILL,
        by=by,
        phase=phase,
        override=True,
        seat=target.number,
        name=target.name,
        sex=target.sex,
        reason=reason,
    )
    post_board(
        game=game,
        text=render("board/modkilled", seat=label, role=target.role, reason=reason),
        kind="modkill",
    )
    if reason:
        send_message(
            game=game,
            peer_ids=[target.vk_user_id],
            text=render(
                "player/modkilled", reason=reason, invited=may_watch(alive=False, role=target.role)
            ),
            kind="modkill",
        )
    else:
        send_you_died(game=game, seats=[target])

    if phase is not None and phase.kind == PhaseKind.DAY and phase.status == PhaseStatus.OPEN:
        _void_votes(game, phase, target)
    elif phase is not None and phase.kind == PhaseKind.NIGHT and phase.status == PhaseStatus.REVIEW:
        _redraft(game, phase, seats)

    winner = decide_winner(table_of(seats))
    if winner is not None:
        game_finish_locked(game=game, winner=winner, now=now, by=by)
    elif phase is not None and phase.kind == PhaseKind.DAY and phase.status == PhaseStatus.OPEN:
        rule = EarlyClose(game.early_close)
        if early_close_reached(table_of(seats), phase.number, ballots_of(phase=phase), rule):
            uow = LockedGame(game, phase, seats)
            day_close_locked(uow=uow, now=now, by=Actor.BOT, early=True)


def _void_votes(game: Game, phase: Phase, target: Seat) -> None:
    """V7: the player's own vote is lost, votes for them are void and their voters may vote
    again (an early vote for them is unlocked) without being struck if they do not."""
    Vote.objects.filter(phase=phase, voter=target, current=True).update(void=True)
    voided = list(
        Vote.objects.filter(phase=phase, target=target, current=True, void=False).select_related(
            "voter"
        )
    )
    Vote.objects.filter(pk__in=[v.pk for v in voided]).update(void=True)
    if voided:
        send_message(
            game=game,
            peer_ids=[v.voter.vk_user_id for v in voided if v.voter.alive],
            text=render("player/vote_voided", target=Person.of(target)),
            kind="vote_voided",
        )


def _redraft(game: Game, phase: Phase, seats: list[Seat]) -> None:
    """The draft no longer matches the table: resolve the night again without the player,
    keeping the GM's edits of the draft."""
    assert phase.result is not None  # a night under review has its draft
    res = redraft(
        table_of(seats),
        NightResolution.from_dict(phase.result["draft"]),
        NightInput.from_submissions(phase.number, standing_submissions(phase)),
    )
    phase.result = {**phase.result, "draft": res.as_dict()}
    phase.save(update_fields=["result"])
    log_event(game, EventKind.NIGHT_REDRAFTED, phase=phase, draft=res.as_dict())


@transaction.atomic
def seat_replace(
    *,
    game_id: int,
    seat: int,
    vk_user_id: int,
    name: str,
    by: Actor,
    reason: str = "",
    sex: int | None = None,
    now: datetime | None = None,
) -> Seat:
    """Hand a seat to another VK account (P6): role, item, history and announced penalty votes
    stay with the seat; strikes are the person's and reset to 0, and so is the grammar: the
    newcomer's VK ``sex`` (given, or the reserve's own), unknown (a neutral wording) if not."""
    game = lock_game(game_id=game_id)
    if game.status not in (GameStatus.DEALT, GameStatus.RUNNING):
        raise ReplacementNotNow()
    seats = players(game)
    validate_replacement(table_of(seats), seat)
    target = seat_by_number(seats=seats, number=seat)
    if any(s.vk_user_id == vk_user_id for s in seats):
        raise AlreadyPlaying()
    reserve = Seat.objects.filter(game=game, vk_user_id=vk_user_id, status=SeatStatus.RESERVE)
    if sex is None:
        sex = next(iter(reserve.values_list("sex", flat=True)), 0)
    reserve.update(status=SeatStatus.WITHDRAWN)
    name = (name or f"id{vk_user_id}").strip()[:200]
    old_name = target.name
    Replacement.objects.create(
        seat=target,
        phase=current_phase(game),
        old_vk_user_id=target.vk_user_id,
        old_name=target.name,
        new_vk_user_id=vk_user_id,
        new_name=name,
        old_strikes=target.strikes,
        reason=reason,
    )
    old_vk = target.vk_user_id
    target.vk_user_id = vk_user_id
    target.name = name
    target.strikes = 0
    target.sex = sex if sex in (1, 2) else 0
    target.save(update_fields=["vk_user_id", "name", "strikes", "sex"])
    log_event(
        game,
        EventKind.REPLACE,
        by=by,
        phase=current_phase(game),
        seat=target.number,
        old_vk_user_id=old_vk,
        new_vk_user_id=vk_user_id,
        name=name,
        reason=reason,
    )
    _announce_replacement(game, seats, target, old_vk=old_vk, old_name=old_name)
    return target


def _announce_replacement(
    game: Game, seats: list[Seat], target: Seat, *, old_vk: int, old_name: str
) -> None:
    """The player who left is told; in a running game the newcomer gets the seat's role card
    and prompts, and the board is told who sits there now."""
    send_message(
        game=game,
        peer_ids=[old_vk],
        text=render("player/replaced", game=game.name),
        kind="replaced",
    )
    if game.status == GameStatus.RUNNING:
        # Before the start, game_start sends every card (the new player's included).
        card = role_card_text(game=game, seat=target, seats=seats)
        send_message(
            game=game,
            peer_ids=[target.vk_user_id],
            text=card,
            kind="role_card",
            keyboard=menu_keyboard(),
        )
        _prompt_newcomer(game, seats, target)
        post_board(
            game=game,
            text=render("board/replaced", number=target.number, old=old_name, new=target.name),
            kind="replace",
        )


def _prompt_newcomer(game: Game, seats: list[Seat], seat: Seat) -> None:
    """A living seat handed over while a phase is open: the new player gets the prompts the
    phase started with (the vote buttons by day, one prompt per action by night), so they can
    act at once instead of asking for «Действия». What the seat already sent stays; sending
    again replaces it as it would have for the old player."""
    phase = current_phase(game)
    if not seat.alive or phase is None or phase.status != PhaseStatus.OPEN:
        return
    for text, keyboard in prompts.phase_prompts(game=game, phase=phase, seats=seats, seat=seat):
        send_message(game=game, peer_ids=[seat.vk_user_id], text=text, kind=f"{phase.kind}_prompt",
                     keyboard=keyboard)  # fmt: skip


@transaction.atomic
def strike_give(
    *, game_id: int, seat: int, by: Actor, reason: str = "", now: datetime | None = None
) -> Strike:
    """A manual penalty (e.g. P4): a strike by the rules of P2/P3. A first strike adds penalty
    votes to the current day's tally (or the next day's, at night); a second is a modkill."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    require_running(game=game)
    seats = players(game)
    target = seat_by_number(seats=seats, number=seat)
    state = validate_modkill(table_of(seats), seat)
    phase = current_phase(game)
    if phase is None:
        raise NoActivePhase()
    given = give_strike(state, StrikeReason.MANUAL)
    strike = strike_record(seat=target, phase=phase, given=given, note=reason)
    target.save(update_fields=["strikes"])
    log_event(
        game,
        EventKind.STRIKE_MANUAL,
        by=by,
        phase=phase,
        override=True,
        seat=seat,
        name=target.name,
        sex=target.sex,  # who was struck, whoever holds the seat later
        count=given.count,
        reason=reason,
    )
    if given.modkill:
        _remove(game, target, phase, seats, now, by=by, reason=reason)
    else:
        _announce_penalty(game, target, phase, strike, reason=reason)
    return strike


def _announce_penalty(
    game: Game, target: Seat, phase: Phase, strike: Strike, *, reason: str
) -> None:
    """A manual strike's penalty votes: in the board for everyone, and to the player with why."""
    votes, day = strike.penalty_votes, strike.penalty_day
    post_board(
        game=game,
        text=render("board/penalty", seat=Person.of(target), votes=votes, day=day),
        kind="penalty",
    )
    why = render(
        "player/strike_why", reason=StrikeReason.MANUAL.value, number=phase.number, note=reason
    )
    send_message(
        game=game,
        peer_ids=[target.vk_user_id],
        text=render("player/struck", why=why, votes=votes, day=day, counted=False),
        kind="strike",
    )


@transaction.atomic
def strike_forgive(*, game_id: int, strike_id: int, by: Actor, reason: str = "") -> Strike:
    """Forgive a strike (e.g. after a bot outage): the count drops by one, and its penalty
    votes no longer count in a tally that has not closed yet. A modkill is not undone."""
    game = lock_game(game_id=game_id)
    strike = Strike.objects.select_related("seat").filter(pk=strike_id, seat__game=game).first()
    if strike is None:
        raise NoSuchStrike()
    if strike.forgiven:
        raise StrikeAlreadyForgiven()
    if strike.modkill:
        raise ModkillNotForgivable()
    strike.forgiven = True
    strike.save(update_fields=["forgiven"])
    seat = strike.seat
    seat.strikes = max(0, seat.strikes - 1)
    seat.save(update_fields=["strikes"])
    label = Person.of(seat)
    log_event(
        game,
        EventKind.STRIKE_FORGIVEN,
        by=by,
        override=True,
        strike=strike.pk,
        seat=seat.number,
        name=seat.name,
        sex=seat.sex,
        reason=reason,
    )
    phase = current_phase(game)
    pending = strike.penalty_day is not None and (
        phase is not None
        and (
            strike.penalty_day > phase.number
            or (strike.penalty_day == phase.number and phase.kind == PhaseKind.DAY)
        )
    )
    if pending and strike.penalty_votes:
        post_board(game=game, text=render("board/penalty_forgiven", seat=label), kind="penalty")
    return strike
