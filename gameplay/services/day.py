"""The day's close (RULES.md §3) and its vote count's post; casting a vote is :mod:`.votes`'s."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.db import transaction
from django.db.models import QuerySet, Sum

from gameplay import themes
from gameplay.messages import Person, render
from gameplay.models import (
    Actor,
    DeathCause,
    EventKind,
    Game,
    Outbox,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    Strike,
    Vote,
)
from gameplay.refusals import SeatAlreadyOut, VoteAtNight
from gameplay.rules import Ballot, DayInput, DayResult, Winner, close_day
from gameplay.rules.errors import PhaseNotOpen
from gameplay.selectors.vote_count import COUNT_KIND, count_context, vote_tally
from gameplay.unit_of_work import LockedGame

from .common import (
    current_phase,
    lock_game,
    log_event,
    notify_strikes,
    now_or,
    players,
    post_board,
    require_running,
    save_changed_seats,
    seat_fields,
    send_you_died,
    strike_record,
    table_of,
)
from .phases import game_finish_locked, night_open_locked
from .replies import board_reply


def open_day_of(*, game: Game) -> Phase:
    """The game's current phase, as an open day (else the refusal a vote would get)."""
    return as_open_day(phase=current_phase(game))


def as_open_day(*, phase: Phase | None) -> Phase:
    """``phase``, checked to be an open day."""
    if phase is None or phase.kind != PhaseKind.DAY:
        raise VoteAtNight()
    if phase.status != PhaseStatus.OPEN:
        raise PhaseNotOpen()
    return phase


def ballots_of(*, phase: Phase) -> dict[int, Ballot]:
    """Current, non-void votes of a day, by voter seat number."""
    rows = Vote.objects.filter(phase=phase, current=True, void=False).select_related(
        "voter", "target"
    )
    return {
        # The players' seats have their numbers.
        cast(int, v.voter.number): Ballot(
            voter=cast(int, v.voter.number), target=cast(int, v.target.number), early=v.early
        )
        for v in rows
    }


def vote_count_text(*, game: Game, phase: Phase, final: bool = False, now: datetime) -> str:
    """The vote count of the open day ``phase`` as it stands (``final``: the one posted as the
    day closes), worded by the game's theme."""
    context = count_context(game=game, tally=vote_tally(phase), now=now, final=final)
    return render("board/vote_count", theme=themes.of(game), **context)


def post_vote_count(
    *,
    game: Game,
    phase: Phase,
    final: bool = False,
    now: datetime | None = None,
    topic_id: int | None = None,
) -> Outbox | None:
    """Post the vote count in the game's topic (or in ``topic_id``, another topic of the
    game's where it was asked for). A game without a topic posts nothing."""
    if topic_id is None and game.topic_id is None:
        return None
    text = vote_count_text(game=game, phase=phase, final=final, now=now_or(now=now))
    if topic_id is not None and topic_id != game.topic_id:
        return board_reply(game_id=game.pk, topic_id=topic_id, text=text, kind=COUNT_KIND)
    return post_board(game=game, text=text, kind=COUNT_KIND)


@transaction.atomic
def day_close(*, game_id: int, by: Actor = Actor.BOT, now: datetime | None = None) -> DayResult:
    """Close the current day now (deadline job or GM): strikes, tally, execution."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    require_running(game=game)
    uow = LockedGame(game, open_day_of(game=game), players(game))
    return day_close_locked(uow=uow, now=now, by=by, early=False)


def carried_penalties(*, game: Game, day_number: int) -> dict[int, int]:
    """Penalty votes announced before this day's close that count in its tally (first strikes
    for a missed night action, manual penalties), by seat number. Called before the day's own
    strikes are written."""
    rows = (
        Strike.objects.filter(seat__game=game, penalty_day=day_number, forgiven=False)
        .values("seat__number")
        .annotate(votes=Sum("penalty_votes"))
    )
    return {cast(int, r["seat__number"]): r["votes"] for r in rows if r["votes"]}


def day_input(*, game: Game, phase: Phase) -> DayInput:
    """The rules' input of closing this day now: the standing ballots, the penalty votes it
    carries, and the voters excused because their vote was voided by a modkill (V7)."""
    ballots = ballots_of(phase=phase)
    excused = frozenset(
        cast(
            "QuerySet[Vote, int]",  # the voters are players, with their numbers
            Vote.objects.filter(phase=phase, current=True, void=True).values_list(
                "voter__number", flat=True
            ),
        )
    ) - set(ballots)
    return DayInput(
        number=phase.number,
        ballots=ballots,
        carried_penalties=carried_penalties(game=game, day_number=phase.number),
        excused=excused,
    )


def day_close_locked(*, uow: LockedGame, now: datetime, by: Actor, early: bool) -> DayResult:
    """:func:`day_close` on the game ``uow`` holds locked, its phase the open day (the GM's
    close, a vote's early close, the modkill that ends a day). The day's last vote count goes
    first, then the result."""
    game, seats = uow.game, uow.seats
    phase = as_open_day(phase=uow.phase)
    post_vote_count(game=game, phase=phase, final=True, now=now)
    result = close_day(table_of(seats), day_input(game=game, phase=phase))
    by_number = {cast(int, s.number): s for s in seats}  # the players' seats
    saved = ["strikes", "alive", "death_cause", "died_in"]
    before = [seat_fields(seat=s, fields=saved) for s in seats]
    for strike in result.strikes:
        strike_record(seat=by_number[strike.seat], phase=phase, given=strike)
    for n in result.modkilled:
        _kill(by_number[n], DeathCause.MODKILL, phase)
    if result.executed is not None:
        _kill(by_number[result.executed], DeathCause.EXECUTED, phase)
    save_changed_seats(seats=seats, fields=saved, before=before)
    phase.status = PhaseStatus.DONE
    phase.closed_at = now
    phase.published_at = now
    phase.closed_early = early
    phase.result = result.as_dict()
    phase.save()
    log_event(game, EventKind.DAY_CLOSED, by=by, phase=phase, early=early, **result.as_dict())
    post_board(
        game=game,
        text=day_result_text(
            game=game,
            number=phase.number,
            result=result,
            by_number=by_number,
            early=early,
            story=phase.story,
        ),
        kind="day_result",
    )
    notify_strikes(
        game=game,
        struck=[(by_number[s.seat], s) for s in result.strikes],
        phase=phase,
        counted=True,
    )
    gone = [by_number[n] for n in (*result.modkilled, result.executed) if n]
    send_you_died(game=game, seats=gone)
    if result.winner is not None:
        game_finish_locked(game=game, winner=Winner(result.winner), now=now, by=by)
    else:
        night_open_locked(game=game, number=phase.number, now=now, seats=seats)
    return result


def _kill(seat: Seat, cause: str, phase: Phase) -> None:
    if not seat.alive:
        raise SeatAlreadyOut()
    seat.alive = False
    seat.death_cause = cause
    seat.died_in = phase


def day_result_text(
    *,
    game: Game,
    number: int,
    result: DayResult,
    by_number: dict[int, Seat],
    early: bool,
    story: str | None = None,
) -> str:
    """The board's post closing a day (``result``: the rules' day result): the facts, then the
    GM's story paragraph (``story``) or, without one, the theme's."""

    def person(n: int) -> Person:
        return Person.of(by_number[n])

    executed = result.executed
    return render(
        "board/day_result",
        theme=themes.of(game),
        number=number,
        early=early,
        modkilled=[{"person": person(n), "role": by_number[n].role} for n in result.modkilled],
        penalties=[{"person": person(n), "votes": v} for n, v in result.penalties.items()],
        tally=[
            {"person": person(n), "votes": v}
            for n, v in sorted(result.tally.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        executed=person(executed) if executed is not None else None,
        executed_role=by_number[executed].role if executed is not None else "",
        story=story or "",
    )
