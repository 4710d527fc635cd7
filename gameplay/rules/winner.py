"""Who has won (RULES.md §7)."""

from __future__ import annotations

from .roles import Role, Winner
from .state import Table


def decide_winner(table: Table) -> Winner | None:
    """The first condition of RULES.md §7 that holds for the living seats, or None.

    M living mafia, K living maniac (0 or 1), T other living players:
    nobody alive → draw; M = 0 and K = 0 → town; K = 1 and M + T ≤ 1 → maniac;
    M > 0 and M ≥ T + K → mafia.
    """
    alive = table.alive
    m = sum(1 for s in alive if s.role is Role.MAFIA)
    k = sum(1 for s in alive if s.role is Role.MANIAC)
    t = len(alive) - m - k
    if not alive:
        return Winner.DRAW
    if m == 0 and k == 0:
        return Winner.TOWN
    if k >= 1 and m + t <= 1:
        return Winner.MANIAC
    if m > 0 and m >= t + k:
        return Winner.MAFIA
    return None
