"""Day services: votes and the day's close (RULES.md §3)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Sum

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
    Source,
    Strike,
    Vote,
)
from gameplay.refusals import SeatAlreadyOut, VoteAtNight
from gameplay.rules import (
    EARLY_VOTE_FROM_DAY,
    AcceptedVote,
    Ballot,
    DayInput,
    DayResult,
    EarlyClose,
    Winner,
    close_day,
    early_close_reached,
    validate_vote,
)
from gameplay.rules.errors import PhaseNotOpen
from gameplay.selectors.vote_count import COUNT_KIND, count_context, vote_tally
from outbox import dbrows, unit_of_work
from outbox.unit_of_work import CastVote, LockedGame

from .common import (
    current_phase,
    lock_game,
    log_event,
    notify_strikes,
    now_or,
    players,
    post_board,
    require_running,
    seat_by_number,
    send_message,
    send_you_died,
    table_of,
)
from .phases import finish_game, open_night
from .replies import board_reply


@dataclass(frozen=True)
class VoteOutcome:
    vote: Vote
    early_ignored: bool
    replaced: bool
    #: Set when this vote closed the day early (RULES.md V6).
    day_result: DayResult | None = None


def open_day_phase(*, game: Game) -> Phase:
    return _as_open_day(current_phase(game))


def _as_open_day(phase: Phase | None) -> Phase:
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
        v.voter.number: Ballot(voter=v.voter.number, target=v.target.number, early=v.early)
        for v in rows
    }


def _current_votes(phase: Phase) -> dict[int, CastVote]:
    """The day's current votes (void ones included) by voter seat number; one query."""
    rows = Vote.objects.filter(phase=phase, current=True).values_list(
        "pk", "voter__number", "target__number", "early", "void"
    )
    return {voter: CastVote(pk, target, early, void) for pk, voter, target, early, void in rows}


def _previous_vote(
    game: Game, phase: Phase, voter: int, kept: LockedGame | None
) -> CastVote | None:
    """The voter's current vote of the day (void or not), if any: from the kept ballots of
    the day (read once per transaction) when the pipeline keeps the game."""
    if kept is not None:
        return kept.ballots_or(lambda: _current_votes(phase)).get(voter)
    row = (
        Vote.objects.filter(phase=phase, voter__number=voter, voter__game=game, current=True)
        .values_list("pk", "target__number", "early", "void")
        .first()
    )
    return CastVote(*row) if row is not None else None


def _ballots(phase: Phase, kept: LockedGame | None) -> dict[int, Ballot]:
    """:func:`ballots_of`, from the kept ballots when there are."""
    if kept is None or kept.ballots is None:
        return ballots_of(phase=phase)
    return {
        voter: Ballot(voter=voter, target=v.target, early=v.early)
        for voter, v in kept.ballots.items()
        if not v.void
    }


def vote_submit_locked(
    *,
    game: Game,
    phase: Phase | None,
    seats: list[Seat] | None,
    voter: int,
    target: int,
    early: bool = False,
    source: str = Source.PM,
    vk_post_id: int | None = None,
    now: datetime | None = None,
) -> VoteOutcome:
    """:func:`.votes.vote_submit` for a service that has locked ``game`` in its transaction and read
    its current ``phase`` (and its ``players``, or None) already: the same checks and writes,
    without reading them again."""
    now = now_or(now=now)
    require_running(game=game)
    phase = _as_open_day(phase)
    seats = players(game) if seats is None else seats
    table = table_of(seats)
    kept = unit_of_work.entry_of_phase(phase)
    previous = _previous_vote(game, phase, voter, kept)
    current = None
    if previous is not None and not previous.void:
        current = Ballot(voter, previous.target, previous.early)
    accepted = validate_vote(table, phase.number, voter, target, early=early, current=current)
    voter_seat = seat_by_number(seats=seats, number=voter)
    target_seat = seat_by_number(seats=seats, number=target)
    vote = _record_vote(
        game,
        phase,
        kept,
        previous,
        voter_seat,
        target_seat,
        accepted,
        source=source,
        vk_post_id=vk_post_id,
    )
    _echo_vote(game, voter_seat, target_seat, accepted, source)
    result = None
    # Early votes count from Day 3 (V6): before, there is nothing to look up for every vote.
    if phase.number >= EARLY_VOTE_FROM_DAY and early_close_reached(
        table, phase.number, _ballots(phase, kept), EarlyClose(game.early_close)
    ):
        # The close changes the phase, the seats and maybe the game: nothing of it is kept.
        unit_of_work.read_afresh(game.pk)
        result = day_close_locked(
            game=game, phase=phase, seats=seats, now=now, by=Actor.BOT, early=True
        )
    return VoteOutcome(vote, accepted.early_ignored, previous is not None, result)


def _record_vote(
    game: Game,
    phase: Phase,
    kept: LockedGame | None,
    previous: CastVote | None,
    voter_seat: Seat,
    target_seat: Seat,
    accepted: AcceptedVote,
    *,
    source: str,
    vk_post_id: int | None,
) -> Vote:
    """Retire the voter's previous vote, insert the new one (kept in the transaction's
    ballots) and log it."""
    voter, target = voter_seat.number, target_seat.number
    if kept is not None:
        kept.begin_writes()  # (see common.hot_game)
    if previous is not None:
        Vote.objects.filter(pk=previous.pk).update(current=False)
    vote = Vote(
        phase=phase,
        voter=voter_seat,
        target=target_seat,
        early=accepted.ballot.early,
        source=source,
        vk_post_id=vk_post_id,
    )
    dbrows.insert([vote])
    if kept is not None:
        kept.record_ballot(voter, CastVote(vote.pk, target, vote.early, False))
    log_event(
        game,
        EventKind.VOTE,
        by=Actor.seat(voter),
        phase=phase,
        voter=voter,
        target=target,
        early=accepted.ballot.early,
        early_ignored=accepted.early_ignored,
        source=source,
    )
    return vote


def _echo_vote(
    game: Game, voter_seat: Seat, target_seat: Seat, accepted: AcceptedVote, source: str
) -> None:
    """The voter's confirmation. The board shows a vote in the counts (:func:`post_vote_count`),
    not in a post of its own."""
    if source != Source.REPLAY:
        send_message(
            game=game,
            peer_ids=[voter_seat.vk_user_id],
            text=render(
                "player/vote_accepted",
                target=Person.of(target_seat),
                early=accepted.ballot.early,
                early_ignored=accepted.early_ignored,
            ),
            kind="vote_echo",
        )


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
    now = now_or(now=now)
    game = lock_game(game_id=game_id)
    require_running(game=game)
    phase = open_day_phase(game=game)
    return day_close_locked(
        game=game, phase=phase, seats=players(game), now=now, by=by, early=False
    )


def carried_penalties(*, game: Game, day_number: int) -> dict[int, int]:
    """Penalty votes announced before this day's close that count in its tally (first strikes
    for a missed night action, manual penalties), by seat number. Called before the day's own
    strikes are written."""
    rows = (
        Strike.objects.filter(seat__game=game, penalty_day=day_number, forgiven=False)
        .values("seat__number")
        .annotate(votes=Sum("penalty_votes"))
    )
    return {r["seat__number"]: r["votes"] for r in rows if r["votes"]}


def day_input(*, game: Game, phase: Phase) -> DayInput:
    """The rules' input of closing this day now: the standing ballots, the penalty votes it
    carries, and the voters excused because their vote was voided by a modkill (V7)."""
    ballots = ballots_of(phase=phase)
    excused = frozenset(
        Vote.objects.filter(phase=phase, current=True, void=True).values_list(
            "voter__number", flat=True
        )
    ) - set(ballots)
    return DayInput(
        number=phase.number,
        ballots=ballots,
        carried_penalties=carried_penalties(game=game, day_number=phase.number),
        excused=excused,
    )


def day_close_locked(
    *, game: Game, phase: Phase, seats: list[Seat], now: datetime, by: Actor, early: bool
) -> DayResult:
    """:func:`day_close` for a service that has locked ``game`` and read its open day and
    players (an early close, the modkill that ends a day). The day's last vote count goes
    first, then the result."""
    post_vote_count(game=game, phase=phase, final=True, now=now)
    result = close_day(table_of(seats), day_input(game=game, phase=phase))
    by_number = {s.number: s for s in seats}
    for strike in result.strikes:
        seat = by_number[strike.seat]
        seat.strikes = strike.count
        Strike.objects.create(
            seat=seat,
            phase=phase,
            reason=strike.reason.value,
            count=strike.count,
            penalty_votes=strike.penalty_votes,
            penalty_day=None if strike.modkill else phase.number,
            modkill=strike.modkill,
        )
    for n in result.modkilled:
        _kill(by_number[n], DeathCause.MODKILL, phase)
    if result.executed is not None:
        _kill(by_number[result.executed], DeathCause.EXECUTED, phase)
    Seat.objects.bulk_update(seats, ["strikes", "alive", "death_cause", "died_in"])
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
        finish_game(game=game, winner=Winner(result.winner), now=now, by=by)
    else:
        open_night(game=game, number=phase.number, now=now, seats=seats)
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
