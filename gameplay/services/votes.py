"""Casting a vote (RULES.md V1–V3, V6) and the vote count («голоса», «подсчёт»): posted in
the topic after every ``COUNT_EVERY`` votes, at the GM's click, on a player's request (at
most once every ``settings.VOTE_COUNT_EVERY_MINUTES`` per topic) and as the day closes
(:func:`.day.post_vote_count`).

One command, :func:`vote_submit`, whoever sends the vote: a seat number (the GM's tools, the
scenarios) or a VK user (the bot: by buttons, private message or a topic post, on the hot path
of :func:`common.hot_game`). Closing the day is :mod:`.day`'s.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.db import transaction

from gameplay.messages import moment
from gameplay.models import Game, GameStatus, Outbox, Phase, PhaseKind, PhaseStatus, Source
from gameplay.refusals import CountNotDay, CountTooSoon
from gameplay.selectors import bot as sel
from gameplay.selectors.vote_count import last_count_at
from outbox import unit_of_work

from .acting import check_button_phase, seat_of_user
from .common import current_phase, hot_game, lock_game, now_or
from .day import VoteOutcome, post_vote_count, vote_submit_locked

#: A vote count is posted in the topic after every this many votes of a day.
COUNT_EVERY = 10


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
    if vk_user_id is None:
        if voter is None:
            raise TypeError("vote_submit needs voter or vk_user_id")
        with transaction.atomic():
            game = lock_game(game_id=game_id)
            return vote_submit_locked(
                game=game,
                phase=current_phase(game),
                seats=None,
                voter=voter,
                target=target,
                early=early,
                source=source,
                vk_post_id=vk_post_id,
                now=now,
            )
    with hot_game(game_id=game_id) as locked:
        game, seats = locked.game, locked.seats
        seat = seat_of_user(game=game, vk_user_id=vk_user_id, seats=seats)
        phase = check_button_phase(phase=locked.phase, phase_id=phase_id)
        outcome = vote_submit_locked(
            game=game,
            phase=phase,
            seats=seats,
            voter=cast(int, seat.number),  # a player's seat
            target=target,
            early=early,
            source=source,
            vk_post_id=vk_post_id,
            now=now,
        )
        if outcome.day_result is None and phase is not None:
            if sel.votes_cast(phase) % COUNT_EVERY == 0:
                _post_count(game, phase)
    if outcome.day_result is not None:
        unit_of_work.forget(game_id)  # the day closed: its phase, seats and game changed
    return outcome


def _post_count(game: Game, phase: Phase, topic_id: int | None = None) -> Outbox | None:
    return post_vote_count(game=game, phase=phase, topic_id=topic_id)


def _open_day(game: Game) -> Phase:
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
    return _post_count(game, _open_day(game))


def vote_count_request(
    *, game_id: int, topic_id: int | None = None, now: datetime | None = None
) -> Outbox | None:
    """A player's «голоса» (in a topic of the game's, ``topic_id``, or by private message:
    the game's topic): the current count, posted there, at most once every
    ``settings.VOTE_COUNT_EVERY_MINUTES`` per topic (any count posted there counts, the
    GM's and the automatic ones too); sooner is refused with when it will be possible."""
    with transaction.atomic():
        now = now_or(now=now)
        game = lock_game(game_id=game_id)
        phase = _open_day(game)
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
