"""Immutable snapshots of a game that the rule functions read.

The services build a ``Table`` from the database rows of one game, call a rule function, and
write back what it returns. Nothing here knows about Django, the clock or global randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from .errors import UnknownTarget
from .roles import Faction, Item, Role


@dataclass(frozen=True, slots=True)
class SeatState:
    """One seat at the table. ``number`` is the public seat number (RULES.md V8)."""

    number: int
    role: Role
    alive: bool = True
    strikes: int = 0
    item: Item | None = None
    item_used: bool = False

    @property
    def is_mafia(self) -> bool:
        return self.role.faction is Faction.MAFIA

    @property
    def usable_item(self) -> Item | None:
        """The item this seat can still use, if any."""
        return self.item if self.item is not None and not self.item_used else None


@dataclass(frozen=True, slots=True)
class Table:
    """All seats of a game, in seat order."""

    seats: tuple[SeatState, ...]
    _index: dict[int, SeatState] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {s.number: s for s in self.seats}
        if len(index) != len(self.seats):
            raise ValueError("seat numbers must be unique")
        object.__setattr__(self, "_index", index)

    @classmethod
    def of(cls, seats: Iterable[SeatState]) -> Table:
        return cls(tuple(sorted(seats, key=lambda s: s.number)))

    def __iter__(self) -> Iterator[SeatState]:
        return iter(self.seats)

    def __len__(self) -> int:
        return len(self.seats)

    def __contains__(self, number: object) -> bool:
        return number in self._index

    def seat(self, number: int) -> SeatState:
        """The seat with this number, or ``UnknownTarget``."""
        try:
            return self._index[number]
        except (KeyError, TypeError):
            raise UnknownTarget() from None

    def get(self, number: int) -> SeatState | None:
        return self._index.get(number)

    @property
    def alive(self) -> tuple[SeatState, ...]:
        return tuple(s for s in self.seats if s.alive)

    @property
    def alive_numbers(self) -> frozenset[int]:
        return frozenset(s.number for s in self.seats if s.alive)

    def holder_of(self, item: Item) -> SeatState | None:
        for s in self.seats:
            if s.item is item:
                return s
        return None

    def updated(self, *changes: SeatState) -> Table:
        """A copy with the given seats replaced (matched by number)."""
        by_number = {c.number: c for c in changes}
        return Table(tuple(by_number.get(s.number, s) for s in self.seats))

    def without(self, numbers: Iterable[int]) -> Table:
        """A copy in which these seats are dead."""
        gone = set(numbers)
        return Table(tuple(replace(s, alive=False) if s.number in gone else s for s in self.seats))
