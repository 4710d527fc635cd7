"""Day: vote validation, early close and the tally (RULES.md §3, with P1–P3 of §6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .discipline import StrikeGiven, StrikeReason, give_strike
from .errors import EarlyVoteFinal
from .facts import Fact, Why
from .roles import EarlyClose, Winner
from .state import Table
from .targets import require_vote_target
from .validation import require_living_actor
from .winner import decide_winner

#: From this day on an early vote is final and can close the day (RULES.md V6).
EARLY_VOTE_FROM_DAY = 3


@dataclass(frozen=True, slots=True)
class Ballot:
    """A voter's current vote."""

    voter: int
    target: int
    early: bool = False


@dataclass(frozen=True, slots=True)
class AcceptedVote:
    ballot: Ballot
    #: The player asked for an early vote on Day 1–2: it counts as an ordinary vote (V6).
    early_ignored: bool = False
    #: The vote replaced an earlier one of the same voter (V2).
    replaced: Ballot | None = None


def validate_vote(
    table: Table,
    day_number: int,
    voter: int,
    target: int,
    *,
    early: bool = False,
    current: Ballot | None = None,
) -> AcceptedVote:
    """Check a vote against V1, V2, V6 and P7; raise a ``RuleViolation`` or accept it."""
    require_living_actor(table, voter)
    require_vote_target(table, voter, target)
    if (
        current is not None
        and current.early
        and day_number >= EARLY_VOTE_FROM_DAY
        and (held := table.get(current.target)) is not None
        and held.alive
    ):
        # V6: final — unless its target was removed during the day (V7 unlocks it).
        raise EarlyVoteFinal()
    early_counts = early and day_number >= EARLY_VOTE_FROM_DAY
    return AcceptedVote(
        ballot=Ballot(voter=voter, target=target, early=early_counts),
        early_ignored=early and not early_counts,
        replaced=current,
    )


def early_close_reached(
    table: Table, day_number: int, ballots: Mapping[int, Ballot], rule: EarlyClose
) -> bool:
    """V6: from Day 3, more than half (``majority``) or all (``all``) living players hold
    early votes."""
    if day_number < EARLY_VOTE_FROM_DAY:
        return False
    living = table.alive_numbers
    early = sum(1 for b in ballots.values() if b.early and b.voter in living and b.target in living)
    if rule is EarlyClose.ALL:
        return early == len(living) and early > 0
    return 2 * early > len(living)


@dataclass(frozen=True, slots=True)
class DayInput:
    number: int
    #: Current, non-void votes by voter.
    ballots: Mapping[int, Ballot]
    #: Penalty votes announced earlier that count in this day's tally (first strikes for a
    #: missed night action, P2), by seat.
    carried_penalties: Mapping[int, int] = field(default_factory=dict)
    #: Voters whose vote was voided by a modkill during the day and who did not vote again:
    #: they are not struck (V7).
    excused: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class DayResult:
    number: int
    strikes: tuple[StrikeGiven, ...]
    modkilled: tuple[int, ...]
    tally: dict[int, int]
    penalties: dict[int, int]
    executed: int | None
    winner: Winner | None
    #: What the close did, step by step (facts: the panel words them).
    explanation: tuple[Fact, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "strikes": [s.as_dict() for s in self.strikes],
            "modkilled": list(self.modkilled),
            "tally": {str(k): v for k, v in sorted(self.tally.items())},
            "penalties": {str(k): v for k, v in sorted(self.penalties.items())},
            "executed": self.executed,
            "winner": self.winner.value if self.winner else None,
            "explanation": [f.as_dict() for f in self.explanation],
        }


def close_day(table: Table, day: DayInput) -> DayResult:
    """Close a day: strikes for missing votes (V4, P2, P3), then the tally and execution (V5).

    Order: every living player without a vote and not excused gets a strike; a first strike
    adds 2 penalty votes to this tally, a second strike is a modkill before the tally (votes
    by and for the modkilled player are dropped). If the modkills decide the game (RULES.md
    §7), nobody is executed. Otherwise the strictly highest count, penalty votes included, is
    executed; a tie for the highest count, or no votes at all, executes nobody.
    """
    lines: list[Fact] = []
    penalties: dict[int, int] = {
        seat: votes
        for seat, votes in day.carried_penalties.items()
        if votes and seat in table and table.seat(seat).alive
    }
    for seat, votes in sorted(penalties.items()):
        lines.append(Fact(Why.PENALTY_CARRIED, seat=seat, votes=votes))
    strikes = _missed_vote_strikes(table, day, penalties, lines)
    modkilled = tuple(s.seat for s in strikes if s.modkill)
    after = table.without(modkilled)
    living = after.alive_numbers
    tally: dict[int, int] = {}
    for b in day.ballots.values():
        if b.voter in living and b.target in living:
            tally[b.target] = tally.get(b.target, 0) + 1
    for seat, votes in penalties.items():
        if seat in living:
            tally[seat] = tally.get(seat, 0) + votes
    penalties = {k: v for k, v in penalties.items() if k in living}
    executed, winner = _execution(after, tally, modkilled, lines)
    return DayResult(
        number=day.number,
        strikes=tuple(sorted(strikes, key=lambda s: s.seat)),
        modkilled=tuple(sorted(modkilled)),
        tally=dict(sorted(tally.items())),
        penalties=dict(sorted(penalties.items())),
        executed=executed,
        winner=winner,
        explanation=tuple(lines),
    )


def _missed_vote_strikes(
    table: Table, day: DayInput, penalties: dict[int, int], lines: list[Fact]
) -> list[StrikeGiven]:
    """V4, P2, P3: a strike for every living player without a vote who is not excused; a first
    strike adds its penalty votes to ``penalties``. Explained in ``lines``."""
    strikes: list[StrikeGiven] = []
    for s in table.alive:
        if s.number in day.ballots or s.number in day.excused:
            continue
        strike = give_strike(s, StrikeReason.MISSED_VOTE)
        strikes.append(strike)
        if strike.modkill:
            lines.append(Fact(Why.VOTE_MODKILL, seat=s.number))
        else:
            penalties[s.number] = penalties.get(s.number, 0) + strike.penalty_votes
            lines.append(Fact(Why.VOTE_STRIKE, seat=s.number, votes=strike.penalty_votes))
    return strikes


def _execution(
    after: Table, tally: dict[int, int], modkilled: tuple[int, ...], lines: list[Fact]
) -> tuple[int | None, Winner | None]:
    """V5 and §7 on the table after the modkills: who is executed (the strictly highest count)
    and the winner. Explained in ``lines``."""
    winner = decide_winner(after) if modkilled else None
    executed: int | None = None
    if winner is not None:
        lines.append(Fact(Why.MODKILLS_DECIDE))
    elif tally:
        top = max(tally.values())
        leaders = sorted(seat for seat, votes in tally.items() if votes == top)
        if len(leaders) == 1:
            executed = leaders[0]
            lines.append(Fact(Why.EXECUTION, seat=executed, votes=top))
        else:
            lines.append(Fact(Why.TIE, seats=tuple(leaders), votes=top))
        if executed is not None:
            winner = decide_winner(after.without([executed]))
    else:
        lines.append(Fact(Why.NO_VOTES))
    return executed, winner
