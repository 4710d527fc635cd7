"""What closing the open phase now would do (the GM's confirmation page), computed by the rules
from the phase's rows as the closing service reads them."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gameplay.models import (
    Game,
    GameStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.rules import (
    Ballot,
    DayInput,
    DayResult,
    NightInput,
    NightResolution,
    Table,
    Winner,
    close_day,
    resolve_night,
)
from gameplay.selectors.table import standing_submissions, table_of


def day_input_of_rows(
    phase: Phase, players: list[Seat], votes: Iterable[Vote], strikes: Iterable[Strike]
) -> tuple[Table, DayInput]:
    """The rules' input of closing this day now, from rows already loaded (what
    ``services.day.day_close`` reads from the database)."""
    by_pk = {s.pk: s for s in players}
    votes = list(votes)
    standing = [
        v
        for v in votes
        if v.current and not v.void and v.voter_id in by_pk and v.target_id in by_pk
    ]
    ballots = {
        by_pk[v.voter_id].number: Ballot(
            by_pk[v.voter_id].number, by_pk[v.target_id].number, v.early
        )
        for v in standing
    }
    carried: dict[int, int] = defaultdict(int)
    for s in strikes:
        if not s.forgiven and s.penalty_day == phase.number and s.seat_id in by_pk:
            carried[by_pk[s.seat_id].number] += s.penalty_votes
    excused = frozenset(
        by_pk[v.voter_id].number for v in votes if v.current and v.void and v.voter_id in by_pk
    ) - set(ballots)
    day = DayInput(
        number=phase.number,
        ballots=ballots,
        carried_penalties={n: v for n, v in carried.items() if v},
        excused=excused,
    )
    return table_of(players), day


# --- what closing the open phase now would do ---------------------------------------------------


@dataclass
class ClosePreview:
    """What «Закрыть день/ночь сейчас» would do, computed by the rules from the phase's rows as
    the closing service reads them. ``fingerprint`` changes whenever the outcome would: the
    confirmation page carries it, and a close confirmed on an outdated page is shown again."""

    phase: Phase
    day: DayResult | None
    night: NightResolution | None
    names: dict[int, str]
    roles: dict[int, str]
    #: The seats by number (their ``sex`` for the page's grammar).
    seats: dict[int, Seat]
    #: The night is published at its close (no review): its deaths are final at once.
    publishes: bool
    fingerprint: str

    @property
    def winner(self) -> Winner | None:
        result = self.day or self.night
        return Winner(result.winner) if result and result.winner else None


def close_preview(game: Game) -> ClosePreview | None:
    """What closing the game's open phase now would do; None when no phase is open."""
    phase = (
        Phase.objects.filter(game=game, status=PhaseStatus.OPEN).order_by("-id").first()
        if game.status == GameStatus.RUNNING
        else None
    )
    if phase is None:
        return None
    seats = list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False).order_by(
            "number"
        )
    )
    day = night = None
    if phase.kind == PhaseKind.DAY:
        votes = Vote.objects.filter(phase=phase)
        strikes = Strike.objects.filter(seat__game=game, penalty_day=phase.number)
        table, day_input = day_input_of_rows(phase, seats, votes, strikes)
        day = close_day(table, day_input)
        outcome: dict[str, Any] = day.as_dict()
    else:
        night = resolve_night(
            table_of(seats), NightInput.from_submissions(phase.number, standing_submissions(phase))
        )
        outcome = night.as_dict()
    digest = hashlib.sha256(
        json.dumps([phase.pk, outcome], sort_keys=True, default=str).encode()
    ).hexdigest()[:16]
    return ClosePreview(
        phase=phase,
        day=day,
        night=night,
        names={s.number: s.name for s in seats},
        roles={s.number: s.role for s in seats},
        seats={s.number: s for s in seats},
        publishes=phase.kind == PhaseKind.NIGHT and game.auto_publish,
        fingerprint=digest,
    )
