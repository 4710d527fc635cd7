"""Strikes, penalty votes and modkills (RULES.md §6)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import AlreadyOut, ReplaceOnlyAlive
from .state import SeatState, Table

#: Penalty votes a first strike adds (P2).
PENALTY_VOTES = 2
#: The strike that is a modkill instead (P3).
MODKILL_STRIKE = 2


class StrikeReason(StrEnum):
    MISSED_VOTE = "missed_vote"
    MISSED_ACTION = "missed_action"
    MANUAL = "manual"


@dataclass(frozen=True, slots=True)
class StrikeGiven:
    seat: int
    #: The player's strike count after this strike.
    count: int
    reason: StrikeReason
    #: Penalty votes it adds (0 when it is a modkill).
    penalty_votes: int
    modkill: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "seat": self.seat,
            "strike": self.count,
            "reason": self.reason.value,
            "penalty_votes": self.penalty_votes,
            "modkill": self.modkill,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StrikeGiven:
        return cls(
            seat=int(data["seat"]),
            count=int(data["strike"]),
            reason=StrikeReason(str(data["reason"])),
            penalty_votes=int(data["penalty_votes"]),
            modkill=bool(data["modkill"]),
        )


def give_strike(seat: SeatState, reason: StrikeReason) -> StrikeGiven:
    """P2/P3: a first strike costs +2 votes, a second one is a modkill."""
    count = seat.strikes + 1
    modkill = count >= MODKILL_STRIKE
    return StrikeGiven(
        seat=seat.number,
        count=count,
        reason=reason,
        penalty_votes=0 if modkill else PENALTY_VOTES,
        modkill=modkill,
    )


def validate_modkill(table: Table, seat: int) -> SeatState:
    """P5: only a living player can be modkilled."""
    s = table.seat(seat)
    if not s.alive:
        raise AlreadyOut()
    return s


def validate_replacement(table: Table, seat: int) -> SeatState:
    """P6: a seat can be handed over while its player is alive."""
    s = table.seat(seat)
    if not s.alive:
        raise ReplaceOnlyAlive()
    return s
