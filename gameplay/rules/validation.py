"""Checks shared by day and night submissions."""

from __future__ import annotations

from .errors import DeadCannotAct, NotInGame
from .state import SeatState, Table


def require_living_actor(table: Table, number: int) -> SeatState:
    """The acting seat must exist (V8) and be alive (P7)."""
    seat = table.get(number)
    if seat is None:
        raise NotInGame()
    if not seat.alive:
        raise DeadCannotAct()
    return seat
