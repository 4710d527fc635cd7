"""The open phase as the GM's game page shows it (:mod:`.game_page`): who has not voted or
acted yet, and a day's tally so far with what closing it now would do. Both work on the rows
the page has already read: no query of their own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gameplay.models import NightAction, Phase, PhaseKind, Seat, Strike, Vote
from gameplay.rules import DayResult, Role, Slot, close_day
from gameplay.rules.roles import DUTY_ROLES

from .close import day_input_of_rows


@dataclass(frozen=True)
class Pending:
    not_voted: list[Seat] = field(default_factory=list)
    not_acted: list[Seat] = field(default_factory=list)
    mafia_shot_missing: bool = False
    #: Living mafia members a reminder would reach while the team has no shot.
    mafia_waiting: int = 0

    @property
    def to_remind(self) -> int:
        """How many players a reminder now would reach (as ``deadlines.phase_remind``)."""
        return len(self.not_voted) + len(self.not_acted) + self.mafia_waiting


def pending(
    phase: Phase, seats: Sequence[Seat], votes: Iterable[Vote], actions: Iterable[NightAction]
) -> Pending:
    """Living players who have not voted (day) or sent their role action (night), and whether
    the mafia has no shot yet (the same people ``selectors.deadlines.pending_actors`` finds,
    from rows already loaded)."""
    living = [s for s in seats if s.alive and s.number is not None]
    if phase.kind == PhaseKind.DAY:
        voted = {v.voter_id for v in votes if v.current and not v.void}
        return Pending(not_voted=[s for s in living if s.pk not in voted])
    standing = [a for a in actions if a.current]
    acted = {a.actor_id for a in standing if a.slot == Slot.ROLE}
    shot = any(a.slot == Slot.MAFIA_SHOT for a in standing)
    mafia = sum(1 for s in living if s.role == Role.MAFIA)
    missing = mafia > 0 and not shot
    waiting = mafia if missing else 0
    if phase.reopened_for == Slot.MAFIA_SHOT:
        return Pending(mafia_shot_missing=missing, mafia_waiting=waiting)
    duty = [s for s in living if s.role in DUTY_ROLES and s.pk not in acted]
    return Pending(not_acted=duty, mafia_shot_missing=missing, mafia_waiting=waiting)


@dataclass
class TallyRow:
    number: int
    name: str
    votes: int
    penalty: int
    voters: list[int]

    @property
    def total(self) -> int:
        return self.votes + self.penalty


@dataclass(frozen=True)
class DayTally:
    """A day's votes so far: the tally (most votes first), the early votes (voter, target)
    and what closing the day now would do."""

    tally: list[TallyRow]
    early_votes: list[tuple[int, int]]
    projection: DayResult


def day_tally(
    phase: Phase, players: list[Seat], votes: list[Vote], strikes: list[Strike]
) -> DayTally:
    """The tally of the open day ``phase``: each living target's votes and voters, and the
    penalty votes carried to it."""
    table, day = day_input_of_rows(phase, players, votes, strikes)
    ballots, carried = day.ballots, day.carried_penalties
    living = table.alive_numbers
    rows: dict[int, TallyRow] = {}
    names = {s.number: s.name for s in players}
    for b in ballots.values():
        if b.voter in living and b.target in living:
            row = rows.setdefault(b.target, TallyRow(b.target, names[b.target], 0, 0, []))
            row.votes += 1
            row.voters.append(b.voter)
    for number, votes_ in carried.items():
        if votes_ and number in living:
            row = rows.setdefault(number, TallyRow(number, names[number], 0, 0, []))
            row.penalty += votes_
    tally = sorted(rows.values(), key=lambda r: (-r.total, r.number))
    for row in tally:
        row.voters.sort()
    early = sorted((b.voter, b.target) for b in ballots.values() if b.early)
    return DayTally(tally=tally, early_votes=early, projection=close_day(table, day))
