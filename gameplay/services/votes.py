"""Casting a vote (RULES.md V1–V3, V6) and the vote count («подсчёт»).

One command, :func:`vote_submit`, whoever sends the vote: a seat number (the GM's tools, the
scenarios) or a VK user (the bot: by buttons, private message or a topic post, on the hot path
of :func:`common.hot_game`). Closing the day is :mod:`.day`'s.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from gameplay.messages import Person, render
from gameplay.models import Game, GameStatus, Outbox, Phase, PhaseKind, Source
from gameplay.refusals import CountNotDay
from gameplay.selectors import bot as sel
from outbox import unit_of_work

from .acting import check_button_phase, seat_of_user
from .common import current_phase, hot_game, lock_game, post_board
from .day import VoteOutcome, vote_submit_locked
from .replies import board_reply

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

    A vote sent by private message is also posted in the day's topic, so every vote is public
    (V3). From Day 3 the day closes at once when enough early votes are held. A vote from VK
    (``vk_user_id``: buttons naming ``phase_id``, a message, or a board post with its
    ``vk_post_id``) is followed by a count every ``COUNT_EVERY`` votes of the day.
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
            voter=seat.number,
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
    count = sel.vote_count(phase)
    text = _count_text(count)
    if topic_id is not None and topic_id != game.topic_id:
        return board_reply(game_id=game.pk, topic_id=topic_id, text=text, kind="vote_count")
    return post_board(game=game, text=text, kind="vote_count")


def _open_day(game: Game) -> Phase:
    phase = current_phase(game)
    if game.status != GameStatus.RUNNING or phase is None or phase.kind != PhaseKind.DAY:
        raise CountNotDay()
    return phase


@transaction.atomic
def vote_count_post(*, game_id: int) -> Outbox | None:
    """«подсчёт» in the topic: the current count, posted there."""
    game = lock_game(game_id=game_id)
    return _post_count(game, _open_day(game))


def vote_count_text(*, game_id: int) -> str:
    """The current count as text (for «подсчёт» by private message)."""
    game = Game.objects.get(pk=game_id)
    count = sel.vote_count(_open_day(game))
    return _count_text(count)


def _count_text(count: sel.VoteCount) -> str:
    return render(
        "board/vote_count",
        day=count.day,
        rows=[{"person": Person.of(s), "total": v + p, "penalty": p} for s, v, p in count.rows],
        voted=count.voted,
        living=count.living,
        missing=[s.number for s in count.missing],
    )
