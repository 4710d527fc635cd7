"""The game's table as the services and the rules read it: its seated players, its current
phase, the rules' snapshot of the seats (``Table``) and the night's standing submissions.

The services read these under the game's lock; the panel's pages read them too (a selector
never imports a service: reads live here, writes in ``gameplay.services``).
"""

from __future__ import annotations

from collections.abc import Iterable

from gameplay.models import Game, NightAction, Phase, PhaseStatus, Seat, SeatStatus
from gameplay.rules import Act, Item, Role, SeatState, Submission, Table


def current_phase(game: Game | int) -> Phase | None:
    """The game's open phase, or the night under the GM's review."""
    return (
        Phase.objects.filter(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])
        .order_by("-id")
        .first()
    )


def players(game: Game) -> list[Seat]:
    """The seated players, in seat order."""
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False).order_by(
            "number"
        )
    )


def table_of(seats: Iterable[Seat]) -> Table:
    """The rules' snapshot of these seats (the hot path makes it once per kept game:
    ``LockedGame.table_or``)."""
    return Table.of(
        SeatState(
            number=s.number,
            role=Role(s.role),
            alive=s.alive,
            strikes=s.strikes,
            item=Item(s.item) if s.item else None,
            item_used=s.item_used,
        )
        for s in seats
        if s.number is not None and s.role
    )


def standing_submissions(phase: Phase) -> list[Submission]:
    """The night's current submissions (what the night would resolve from now)."""
    rows = (
        NightAction.objects.filter(phase=phase, current=True)
        .select_related("actor", "target")
        .order_by("created_at", "id")
    )
    return [
        Submission(
            actor=a.actor.number,
            act=Act(a.act),
            target=a.target.number,
            guess=Role(a.guess) if a.guess else None,
        )
        for a in rows
    ]
