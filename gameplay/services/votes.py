"""Casting a vote (RULES.md V1–V3, V6) and the vote count («голоса», «подсчёт»): posted in
the topic after every ``COUNT_EVERY`` votes, at the GM's click, on a player's request (at
most once every ``settings.VOTE_COUNT_EVERY_MINUTES`` per topic) and as the day closes
(:func:`.day.post_vote_count`).

One command, :func:`vote_submit`, whoever sends the vote: a seat number (the GM's tools, the
scenarios) or a VK user (the bot: by buttons, private message or a topic post). One code path
for both: the game's unit of work from :func:`common.hot_game`, the voter's seat found once, and
:func:`vote_submit_locked`. Closing the day is :mod:`.day`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.db import transaction

from gameplay.messages import Person, moment, render
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    GameStatus,
    Outbox,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    Source,
    Vote,
)
from gameplay.refusals import CountNotDay, CountTooSoon
from gameplay.rules import (
    EARLY_VOTE_FROM_DAY,
    AcceptedVote,
    Ballot,
    DayResult,
    EarlyClose,
    early_close_reached,
    validate_vote,
)
from gameplay.selectors.vote_count import last_count_at
from gameplay.unit_of_work import CastVote, LockedGame
from outbox import dbrows

from .acting import check_button_phase, seat_of_user
from .common import (
    current_phase,
    hot_game,
    lock_game,
    now_or,
    require_running,
    seat_by_number,
    send_message,
    table_of,
)
from .day import as_open_day, day_close_locked, post_vote_count

#: A vote count is posted in the topic after every this many votes of a day.
COUNT_EVERY = 10


@dataclass(frozen=True)
class VoteOutcome:
    vote: Vote
    early_ignored: bool
    replaced: bool
    #: Set when this vote closed the day early (RULES.md V6).
    day_result: DayResult | None = None


def vote_submit(
    *,
    game_id: int,
    target: int,
    voter: int | None = None,
    vk_user_id: int | None = None,
    early: bool = False,
    source: str = Source.PM,
    vk_post_id: int | None = None,
    phase_id: int | None = None,
    now: datetime | None = None,
) -> VoteOutcome:
    """Cast or change a vote (V1–V3, V6); seats are seat numbers. The voter is ``voter`` (a
    seat number) or the living seat of ``vk_user_id``.

    Every vote is public (V3): a vote sent by private message shows in the vote counts posted
    in the day's topic, with its voter named. From Day 3 the day closes at once when enough
    early votes are held. A vote from VK (``vk_user_id``: buttons naming ``phase_id``, a
    message, or a board post with its ``vk_post_id``) is followed by a count every
    ``COUNT_EVERY`` votes of the day.
    """
    if vk_user_id is None and voter is None:
        raise TypeError("vote_submit needs voter or vk_user_id")
    with hot_game(game_id=game_id) as uow:
        seat = None
        if vk_user_id is not None:
            seat = seat_of_user(game=uow.game, vk_user_id=vk_user_id, seats=uow.seats)
        check_button_phase(phase=uow.phase, phase_id=phase_id)
        outcome = vote_submit_locked(
            uow=uow,
            voter=seat,
            voter_number=voter,
            target=target,
            early=early,
            source=source,
            vk_post_id=vk_post_id,
            now=now,
        )
        if vk_user_id is not None and outcome.day_result is None and uow.phase is not None:
            if uow.votes_cast_or(lambda: _votes_cast(cast(Phase, uow.phase))) % COUNT_EVERY == 0:
                _post_count(uow.game, uow.phase)
    return outcome


def vote_submit_locked(
    *,
    uow: LockedGame,
    voter: Seat | None,
    voter_number: int | None = None,
    target: int,
    early: bool = False,
    source: str = Source.PM,
    vk_post_id: int | None = None,
    now: datetime | None = None,
) -> VoteOutcome:
    """:func:`vote_submit` on the game ``uow`` holds locked: the checks (the game running, its
    phase an open day, the rules'), the vote written and logged, the voter's confirmation, and
    the day's early close when this vote reaches it. The voter is the seat ``voter`` (found by
    the caller) or, found here once the day is checked, seat number ``voter_number``."""
    game = uow.game
    require_running(game=game)
    phase = as_open_day(phase=uow.phase)
    if voter is None:
        voter = seat_by_number(seats=uow.seats, number=voter_number or 0)
    number = voter.number or 0
    table = uow.table_or(table_of)
    previous = uow.ballots_or(lambda: _current_votes(phase)).get(number)
    current = None
    if previous is not None and not previous.void:
        current = Ballot(number, previous.target, previous.early)
    accepted = validate_vote(table, phase.number, number, target, early=early, current=current)
    target_seat = seat_by_number(seats=uow.seats, number=target)
    vote = _record_vote(
        uow, phase, previous, voter, target_seat, accepted, source=source, vk_post_id=vk_post_id
    )
    _echo_vote(game, voter, target_seat, accepted, source)
    result = None
    # Early votes count from Day 3 (V6): before, there is nothing to look up for every vote.
    if phase.number >= EARLY_VOTE_FROM_DAY and early_close_reached(
        table, phase.number, _ballots(uow), EarlyClose(game.early_close)
    ):
        # The close changes the phase, the seats and maybe the game: nothing of it is kept.
        uow.release()
        result = day_close_locked(uow=uow, now=now_or(now=now), by=Actor.BOT, early=True)
    return VoteOutcome(vote, accepted.early_ignored, previous is not None, result)


def _current_votes(phase: Phase) -> dict[int, CastVote]:
    """The day's current votes (void ones included) by voter seat number; one query."""
    rows = Vote.objects.filter(phase=phase, current=True).values_list(
        "pk", "voter__number", "target__number", "early", "void"
    )
    return {
        cast(int, voter): CastVote(pk, cast(int, target), early, void)
        for pk, voter, target, early, void in rows
    }


def _ballots(uow: LockedGame) -> dict[int, Ballot]:
    """The day's current, non-void votes by voter (the handle's, read already)."""
    return {
        voter: Ballot(voter=voter, target=v.target, early=v.early)
        for voter, v in (uow.ballots or {}).items()
        if not v.void
    }


def _votes_cast(phase: Phase) -> int:
    """Every vote cast this day (changes included): the count is posted every 10."""
    return Vote.objects.filter(phase=phase).count()


def _record_vote(
    uow: LockedGame,
    phase: Phase,
    previous: CastVote | None,
    voter_seat: Seat,
    target_seat: Seat,
    accepted: AcceptedVote,
    *,
    source: str,
    vk_post_id: int | None,
) -> Vote:
    """Retire the voter's previous vote, insert the new one (the handle's ballots and count
    follow) and log it."""
    voter, target = voter_seat.number or 0, target_seat.number or 0
    uow.begin_writes()  # (see common.hot_game)
    if previous is not None:
        dbrows.update_where(Vote, {"current": False}, {"id": previous.pk})
    vote = Vote(
        phase=phase,
        voter=voter_seat,
        target=target_seat,
        early=accepted.ballot.early,
        source=source,
        vk_post_id=vk_post_id,
    )
    dbrows.insert([vote])
    uow.record_ballot(voter, CastVote(vote.pk, target, vote.early, False))
    uow.log_event(
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


def _post_count(game: Game, phase: Phase, topic_id: int | None = None) -> Outbox | None:
    return post_vote_count(game=game, phase=phase, topic_id=topic_id)


def _count_day(game: Game) -> Phase:
    """The open day a count is asked for (else ``CountNotDay``)."""
    phase = current_phase(game)
    if game.status != GameStatus.RUNNING or phase is None or phase.kind != PhaseKind.DAY:
        raise CountNotDay()
    if phase.status != PhaseStatus.OPEN:
        raise CountNotDay()
    return phase


@transaction.atomic
def vote_count_post(*, game_id: int) -> Outbox | None:
    """The GM's «Опубликовать подсчёт голосов»: the current count, posted in the game's topic
    now (a player's request waits for :data:`settings.VOTE_COUNT_EVERY_MINUTES`; the GM's
    does not)."""
    game = lock_game(game_id=game_id)
    return _post_count(game, _count_day(game))


def vote_count_request(
    *, game_id: int, topic_id: int | None = None, now: datetime | None = None
) -> Outbox | None:
    """A player's «голоса» (in a topic of the game's, ``topic_id``, or by private message:
    the game's topic): the current count, posted there, at most once every
    ``settings.VOTE_COUNT_EVERY_MINUTES`` per topic (any count posted there counts, the
    GM's and the automatic ones too); sooner is refused with when it will be possible."""
    with transaction.atomic():
        game = lock_game(game_id=game_id)
        now = now_or(now=now)  # after the lock: the moment of the write
        phase = _count_day(game)
        topic = topic_id if topic_id is not None else game.topic_id
        if topic is None:
            raise CountNotDay()
        every = timedelta(minutes=settings.VOTE_COUNT_EVERY_MINUTES)
        last = last_count_at(game=game, topic_id=topic, since=phase.opened_at)
        if last is not None and now < last + every:
            raise CountTooSoon(
                last=moment(last, game.time_zone), next=moment(last + every, game.time_zone)
            )
        return _post_count(game, phase, topic_id=topic)
