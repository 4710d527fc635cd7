"""Night resolution for 26 players in the pure rules (``gameplay.rules``, no database): every
night act submitted (the mafia's shot and role strike, the commissar's check, the doctor's
heal, the maniac's shot, the three items), resolved in RULES.md §5's five steps with dawn."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from gameplay.rules import (
    Act,
    NightContext,
    NightInput,
    Role,
    SeatState,
    Table,
    resolve_night,
    validate_action,
)

from .games import BOOK_HOLDER, COMMISSAR, DOCTOR, MANIAC, RED_BUTTON_HOLDER, deal_26

ACTS: tuple[tuple[int, Act, int, Role | None], ...] = (
    (3, Act.MAFIA_SHOT, 12, None),
    (2, Act.ROLE_STRIKE, COMMISSAR, Role.COMMISSAR),
    (COMMISSAR, Act.CHECK, 1, None),
    (DOCTOR, Act.HEAL, 12, None),
    (MANIAC, Act.MANIAC_SHOT, 14, None),
    (1, Act.CLOCK, 15, None),
    (RED_BUTTON_HOLDER, Act.RED_BUTTON, 16, None),
    (BOOK_HOLDER, Act.BOOK, 16, None),
)


@dataclass
class NightTiming:
    players: int
    runs: int
    median_us: float
    p95_us: float
    deaths: list[int]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def table_26() -> Table:
    return Table.of(
        SeatState(number=n, role=role, item=item) for n, (role, item) in deal_26().items()
    )


def measure(runs: int = 2000) -> NightTiming:
    table = table_26()
    context = NightContext(number=1)
    submissions = [validate_action(table, context, *act) for act in ACTS]
    night = NightInput.from_submissions(1, submissions)
    resolution = resolve_night(table, night)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        resolve_night(table, night)
        samples.append(time.perf_counter() - start)
    samples.sort()
    return NightTiming(
        players=len(table),
        runs=runs,
        median_us=round(statistics.median(samples) * 1e6, 1),
        p95_us=round(samples[int(len(samples) * 0.95)] * 1e6, 1),
        deaths=sorted(resolution.deaths),
    )
