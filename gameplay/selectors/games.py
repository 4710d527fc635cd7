"""Which games a GM sees: access (``games_for``) and «Мои игры» (what each active game needs
from its GM now), in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet

from gameplay.models import (
    FlagStatus,
    Game,
    GameStatus,
    ModerationFlag,
    Outbox,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
)

from .communities import membership_q, owner_q
from .record import retryable_q

# --- access ------------------------------------------------------------------------------------


def games_for(user: Any) -> QuerySet[Game]:
    """The games a user may see and run: all for a superuser; otherwise the games they run
    in communities they belong to (a GM removed from a community loses its games), and every
    game of a community they own."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Game.objects.none()
    if user.is_superuser:
        return Game.objects.all()
    mine = Q(pk__in=Game.objects.filter(gms=user).values("pk")) & membership_q(user)
    return Game.objects.filter(mine | owner_q(user))


# --- «Мои игры» ---------------------------------------------------------------------------------


@dataclass
class MyGame:
    game: Game
    phase: Phase | None
    players: int
    #: Seats the game's role table needs.
    needed: int
    open_flags: int
    failed_outbox: int

    @property
    def draft_waiting(self) -> bool:
        return self.phase is not None and self.phase.status == PhaseStatus.REVIEW

    @property
    def needs_attention(self) -> bool:
        return bool(self.draft_waiting or self.open_flags or self.failed_outbox)


#: How many ended games «Мои игры» lists below the active ones.
RECENT_ENDED = 5


def my_games(user: Any) -> tuple[list[MyGame], list[Game]]:
    """The user's active games (recruiting, dealt, running: what each needs from its GM now)
    and their latest ended ones; a fixed number of queries."""
    visible = games_for(user)
    active = list(
        visible.filter(
            status__in=[GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING]
        ).order_by("-created_at")
    )
    ended = list(
        visible.exclude(pk__in=[g.pk for g in active]).order_by("-created_at")[:RECENT_ENDED]
    )
    ids = [g.pk for g in active]
    phases = {
        p.game_id: p
        for p in Phase.objects.filter(
            game_id__in=ids, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]
        )
    }

    def per_game(qs: QuerySet[Any]) -> dict[int, int]:
        return dict(qs.values("game").annotate(n=Count("id")).values_list("game", "n"))

    seats = per_game(Seat.objects.filter(game_id__in=ids, status=SeatStatus.PLAYER))
    flags = per_game(ModerationFlag.objects.filter(game_id__in=ids, status=FlagStatus.OPEN))
    failed = per_game(Outbox.objects.filter(game_id__in=ids).filter(retryable_q()))
    rows = [
        MyGame(
            game=g,
            phase=phases.get(g.pk),
            players=seats.get(g.pk, 0),
            needed=g.mafia_count
            + g.commissar_count
            + g.doctor_count
            + g.maniac_count
            + g.civilian_count,
            open_flags=flags.get(g.pk, 0),
            failed_outbox=failed.get(g.pk, 0),
        )
        for g in active
    ]
    # What needs the GM first, then the nearest deadline.
    rows.sort(
        key=lambda r: (
            not r.needs_attention,
            r.phase is None,
            r.phase.deadline.timestamp() if r.phase and r.phase.deadline else float("inf"),
        )
    )
    return rows, ended
