"""Opening phases and finishing the game (``*_locked``: the other services call them on the
game they hold locked), and the GM's ``game_end``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from gameplay import themes
from gameplay.messages import render, when
from gameplay.models import (
    Actor,
    DealRound,
    EventKind,
    Game,
    GameEvent,
    GameStatus,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
)
from gameplay.refusals import GameAlreadyOver
from gameplay.rules import EARLY_VOTE_FROM_DAY, Winner

from . import prompts
from .common import (
    current_phase,
    lock_game,
    log_event,
    now_or,
    players,
    post_board,
    queue_outbox,
    send_message,
)
from .game_over import game_over_post


def day_open_locked(*, game: Game, number: int, now: datetime, seats: Sequence[Seat]) -> Phase:
    """Open Day ``number`` of the locked ``game``: the board's post, then the vote buttons in
    private messages (RULES.md V3: the bot posts such votes)."""
    return _open_phase(
        game,
        PhaseKind.DAY,
        number,
        now,
        seats,
        length=game.day_length,
        queue_prompts=prompts.queue_day_prompts,
        early=number >= EARLY_VOTE_FROM_DAY,
    )


def night_open_locked(*, game: Game, number: int, now: datetime, seats: Sequence[Seat]) -> Phase:
    """Open Night ``number`` of the locked ``game``: the board's post, then one prompt per thing
    each player can do, with the valid targets as buttons."""
    return _open_phase(
        game,
        PhaseKind.NIGHT,
        number,
        now,
        seats,
        length=game.night_length,
        queue_prompts=prompts.queue_night_prompts,
    )


def _open_phase(
    game: Game,
    kind: PhaseKind,
    number: int,
    now: datetime,
    seats: Sequence[Seat],
    *,
    length: timedelta | None,
    queue_prompts: Callable[..., None],
    **post: object,
) -> Phase:
    """A phase of ``kind`` opened, its deadline ``length`` away (none without one), logged, its
    opening post (``board/<kind>_opened``, given ``post`` too) and its prompts queued."""
    phase = Phase.objects.create(
        game=game,
        kind=kind,
        number=number,
        opened_at=now,
        deadline=now + length if length else None,
    )
    log_event(game, EventKind.PHASE_OPENED, phase=phase, phase_kind=kind.value, number=number)
    post_board(
        game=game,
        text=render(
            f"board/{kind.value}_opened",
            theme=themes.of(game),
            number=number,
            deadline=when(phase.deadline, game.time_zone),
            **post,
        ),
        kind=f"{kind.value}_opened",
    )
    queue_prompts(game=game, phase=phase, seats=seats)
    return phase


def game_finish_locked(
    *,
    game: Game,
    winner: Winner | None,
    now: datetime,
    by: Actor = Actor.BOT,
    reason: str = "",
    override: bool = False,
) -> Game:
    """Finish the locked ``game``: reveal everything, every round's seed and the roster the deal
    was made for (RULES.md §7, gameplay/rules/deal.py). It reads the current phase and the
    seats itself: its callers may have closed the phase already."""
    phase = current_phase(game)
    if phase is not None:
        phase.status = PhaseStatus.DONE
        phase.closed_at = phase.closed_at or now
        phase.save(update_fields=["status", "closed_at"])
    game.status = GameStatus.FINISHED
    game.winner = winner.value if winner else ""
    game.finished_at = now
    game.save(update_fields=["status", "winner", "finished_at"])
    rounds = [(r.number, r.commitment, r.seed) for r in DealRound.objects.filter(game=game)]
    last_deal: Any = (
        GameEvent.objects.filter(game=game, kind=EventKind.DEAL)
        .order_by("-seq")
        .values("data")
        .first()
    )
    roster = list((last_deal or {}).get("data", {}).get("roster") or [])
    log_event(
        game,
        EventKind.GAME_FINISHED,
        by=by,
        override=override,
        winner=game.winner or None,
        reason=reason,
        seed=game.seed,
        rounds=[{"round": n, "commitment": c, "seed": sd} for n, c, sd in rounds],
    )
    seats = players(game)
    post_board(
        game=game,
        text=game_over_post(game=game, winner=winner, seats=seats, rounds=rounds, roster=roster),
        kind="game_over",
    )
    send_message(
        game=game,
        peer_ids=[s.vk_user_id for s in seats],
        text=render("player/game_over", game=game.name, winner=winner.title if winner else ""),
        kind="game_over",
    )
    return game


@transaction.atomic
def game_end(
    *,
    game_id: int,
    by: Actor,
    winner: Winner | None = None,
    reason: str = "",
    now: datetime | None = None,
) -> Game:
    """The GM ends the game (G1), with or without declaring a winner; logged as an override."""
    game = lock_game(game_id=game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise GameAlreadyOver()
    if game.status != GameStatus.RUNNING:
        game.status = GameStatus.CANCELLED
        game.finished_at = now_or(now=now)
        game.save(update_fields=["status", "finished_at"])
        rounds = [(r.number, r.commitment, r.seed) for r in DealRound.objects.filter(game=game)]
        log_event(
            game,
            EventKind.GAME_CANCELLED,
            by=by,
            override=True,
            reason=reason,
            rounds=[{"round": n, "commitment": c, "seed": sd} for n, c, sd in rounds],
        )
        # The seeds are revealed here too: cancelling and opening a new game must not be a
        # quiet way to get another deal for the same players.
        topic = game.recruit_topic_id or game.topic_id
        if rounds and topic is not None:
            queue_outbox(
                rows=[
                    Outbox(
                        game=game,
                        channel=OutboxChannel.BOARD,
                        topic_id=topic,
                        kind="game_cancelled",
                        text=render(
                            "board/game_cancelled",
                            game=game.name,
                            reason=reason.strip(),
                            rounds=rounds,
                        ),
                    )
                ]
            )
        return game
    return game_finish_locked(
        game=game, winner=winner, now=now_or(now=now), by=by, reason=reason, override=True
    )
