"""The verifiable deal: roles and items from one seed, and the commit-reveal (RULES.md §1).

Everything random in a game comes from its seed through the documented stream below, so anyone
can recompute a finished game's deal from the published seeds and the roster without this code
(``manage.py verify`` does it): the algorithm is small enough to re-implement in any language.

Rounds. A game's seed is drawn by the server (``secrets``, 32 random bytes written as 64 hex
digits) when sign-up opens, before anyone knows the roster, and its commitment is posted in the
board at once: round ``N``'s commitment is the SHA-256 (hex) of ``utf8("vkmafia-round:" N ":"
seed)`` with ``N`` in decimal (``printf 'vkmafia-round:1:%s' SEED | sha256sum``). Nobody sees
the seed before the game ends; the GM cannot pick it. A new seed is drawn only when the GM
explicitly opens a new round (an override): round ``N + 1`` with its own public commitment. At
the end every round's seed is revealed; the deal played is the last round's.

Roster. The deal depends on the seed and the final roster only: ``R`` is the players' VK ids
in ascending numeric order, in decimal, joined by ``,`` (``"1001,1002,1010"``); seat ``i``
(from 1) is the ``i``-th VK id of ``R``. The same roster therefore always gets the same deal
from a round's seed: removing a player and adding them back changes nothing, and nobody can tell
in advance which roster gets which deal. The key of the deal is ``K = seed "/" R``.

Stream ``(key, label)``: block ``i`` (from 0) is ``SHA-256(utf8(key) ":" utf8(label) ":" i)``
with ``i`` in decimal; the blocks are concatenated into a byte stream. ``randbelow(n)`` reads the
next 8 bytes as a big-endian integer ``x``, rejects it when ``x >= 2**64 - 2**64 % n`` (reading 8
more bytes) and returns ``x % n``.

Roles: the multiset ``mafia × M, commissar × C, doctor × D, maniac × K, civilian × T`` in that
order is shuffled with Fisher–Yates (``for i from len-1 down to 1: swap(i, randbelow(i+1))``) on
the stream ``(K, "roles")``; position ``i`` is seat ``i + 1``.

Items: draw ``k`` (from 1) uses the stream ``(K, "items/k")`` and a partial Fisher–Yates over
the seat list ``[1..N]``: ``for i in 0, 1, 2: swap(i, i + randbelow(N - i))``; the first three
seats get the clock, the red button and the book. Draws repeat until exactly one item sits with
the mafia; every draw is kept.

Deal hash (posted at the start, before the seed is revealed): SHA-256 (hex) of the canonical
JSON (sorted keys, no spaces, UTF-8) ``{"algorithm": "sha256-stream-v2", "items": {"book": s,
"clock": s, "red_button": s}, "roles": ["mafia", …], "roster": [1001, …], "seed": "…"}``.

Games dealt before rounds existed (algorithm ``sha256-stream-v1``) used the seed itself as the
key (no roster) and the same JSON without ``roster``: :func:`deal` and :func:`verify_seed`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .errors import (
    BadRoster,
    DecidedAtStart,
    ItemDrawFailed,
    ItemsUndealable,
    NegativeRoleCount,
    NoMafia,
    RosterSizeMismatch,
    SeedNotUtf8,
    SpecialRoleRepeated,
    TooFewOutsideMafia,
    TooFewPlayers,
)
from .roles import ITEM_ORDER, Item, Role
from .state import SeatState, Table
from .winner import decide_winner

ALGORITHM = "sha256-stream-v1"
#: The deal from a round's seed and the roster (the module doc).
ALGORITHM_ROSTER = "sha256-stream-v2"
ROUND_PREFIX = "vkmafia-round"
MAX_ITEM_DRAWS = 10_000
_U64 = 2**64


class SeededStream:
    """Deterministic random numbers from a seed and a label (see the module doc)."""

    def __init__(self, seed: str, label: str) -> None:
        self._prefix = f"{seed}:{label}:".encode()
        self._block = 0
        self._buffer = b""

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            digest = hashlib.sha256(self._prefix + str(self._block).encode()).digest()
            self._buffer += digest
            self._block += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _U64 - _U64 % n
        while True:
            x = int.from_bytes(self._take(8), "big")
            if x < limit:
                return x % n


@dataclass(frozen=True, slots=True)
class RoleCounts:
    """How many of each role a game has (a per-game setting; RULES.md §1)."""

    mafia: int = 6
    commissar: int = 1
    doctor: int = 1
    maniac: int = 1
    civilian: int = 17

    @property
    def total(self) -> int:
        return self.mafia + self.commissar + self.doctor + self.maniac + self.civilian

    def as_dict(self) -> dict[str, int]:
        return {
            "mafia": self.mafia,
            "commissar": self.commissar,
            "doctor": self.doctor,
            "maniac": self.maniac,
            "civilian": self.civilian,
        }

    def pool(self) -> list[Role]:
        """The roles to shuffle, in the documented canonical order."""
        return (
            [Role.MAFIA] * self.mafia
            + [Role.COMMISSAR] * self.commissar
            + [Role.DOCTOR] * self.doctor
            + [Role.MANIAC] * self.maniac
            + [Role.CIVILIAN] * self.civilian
        )

    @classmethod
    def default_for(cls, players: int) -> RoleCounts:
        """RULES.md's 26-player table scaled to ``players`` (6 mafia per 26, one of each
        special role from 7 players up)."""
        if players < 4:
            raise TooFewPlayers()
        mafia = max(1, round(players * 6 / 26))
        specials = 1 if players >= 7 else 0
        civilian = players - mafia - 3 * specials
        if specials == 0:
            civilian -= 1  # a commissar still plays in the smallest games
            return cls(mafia=mafia, commissar=1, doctor=0, maniac=0, civilian=civilian)
        return cls(mafia=mafia, commissar=1, doctor=1, maniac=1, civilian=civilian)

    def validate(self) -> None:
        """Raise a ``SetupError`` (its text is for the GM) for an impossible setup."""
        counts = (self.mafia, self.commissar, self.doctor, self.maniac, self.civilian)
        if any(c < 0 for c in counts):
            raise NegativeRoleCount()
        if self.mafia < 1:
            raise NoMafia()
        if max(self.commissar, self.doctor, self.maniac) > 1:
            raise SpecialRoleRepeated()
        if self.total - self.mafia < len(ITEM_ORDER) - 1:
            raise TooFewOutsideMafia()
        roles = self.pool()
        table = Table.of(SeatState(i + 1, r) for i, r in enumerate(roles))
        if decide_winner(table) is not None:
            raise DecidedAtStart()


@dataclass(frozen=True, slots=True)
class ItemDraw:
    """One draw of the three items: ``holders`` maps each item to a seat number."""

    attempt: int
    holders: tuple[tuple[Item, int], ...]
    mafia_items: int

    @property
    def accepted(self) -> bool:
        return self.mafia_items == 1

    def as_dict(self) -> dict[str, object]:
        return {
            "attempt": self.attempt,
            "holders": {item.value: seat for item, seat in self.holders},
            "mafia_items": self.mafia_items,
        }


@dataclass(frozen=True, slots=True)
class Deal:
    seed: str
    roles: tuple[Role, ...]
    items: tuple[tuple[Item, int], ...]
    draws: tuple[ItemDraw, ...]
    #: The VK ids by seat (seat ``i + 1`` is ``roster[i]``); empty for a v1 deal.
    roster: tuple[int, ...] = ()

    @property
    def item_by_seat(self) -> dict[int, Item]:
        return {seat: item for item, seat in self.items}

    @property
    def commitment(self) -> str:
        if self.roster:
            return roster_commitment(self.seed, self.roles, dict(self.items), self.roster)
        return commitment(self.seed, self.roles, dict(self.items))


def shuffle_roles(seed: str, counts: RoleCounts) -> tuple[Role, ...]:
    roles = counts.pool()
    stream = SeededStream(seed, "roles")
    for i in range(len(roles) - 1, 0, -1):
        j = stream.randbelow(i + 1)
        roles[i], roles[j] = roles[j], roles[i]
    return tuple(roles)


def draw_items(seed: str, roles: Sequence[Role]) -> tuple[ItemDraw, ...]:
    """Draw the items among all seats until exactly one sits with the mafia; every draw kept."""
    n = len(roles)
    mafia_seats = {i + 1 for i, r in enumerate(roles) if r is Role.MAFIA}
    if not mafia_seats or n - len(mafia_seats) < len(ITEM_ORDER) - 1:
        raise ItemsUndealable()
    draws: list[ItemDraw] = []
    for attempt in range(1, MAX_ITEM_DRAWS + 1):
        stream = SeededStream(seed, f"items/{attempt}")
        seats = list(range(1, n + 1))
        for i in range(len(ITEM_ORDER)):
            j = i + stream.randbelow(n - i)
            seats[i], seats[j] = seats[j], seats[i]
        holders = tuple(zip(ITEM_ORDER, seats[: len(ITEM_ORDER)], strict=True))
        mafia_items = sum(1 for _, seat in holders if seat in mafia_seats)
        draw = ItemDraw(attempt=attempt, holders=holders, mafia_items=mafia_items)
        draws.append(draw)
        if draw.accepted:
            return tuple(draws)
    raise ItemDrawFailed()  # pragma: no cover


def _check_seed(seed: str) -> None:
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise SeedNotUtf8() from None


def deal(seed: str, counts: RoleCounts) -> Deal:
    """The v1 deal for ``counts.total`` seats from ``seed`` alone (games dealt before rounds)."""
    _check_seed(seed)
    counts.validate()
    roles = shuffle_roles(seed, counts)
    draws = draw_items(seed, roles)
    return Deal(seed=seed, roles=roles, items=draws[-1].holders, draws=draws)


def sorted_roster(vk_ids: Iterable[int]) -> tuple[int, ...]:
    """The roster as the deal reads it: distinct positive VK ids, ascending."""
    ids = [int(v) for v in vk_ids]
    if any(v < 1 for v in ids) or len(set(ids)) != len(ids):
        raise BadRoster()
    return tuple(sorted(ids))


def roster_key(seed: str, roster: Sequence[int]) -> str:
    """The deal's key ``seed "/" R`` (the module doc)."""
    return f"{seed}/{','.join(str(v) for v in roster)}"


def deal_for_roster(seed: str, counts: RoleCounts, vk_ids: Iterable[int]) -> Deal:
    """The deal of a round's ``seed`` for these players: seat ``i`` is the ``i``-th smallest
    VK id; the same roster always gets the same deal (the module doc)."""
    _check_seed(seed)
    roster = sorted_roster(vk_ids)
    counts.validate()
    if len(roster) != counts.total:
        raise RosterSizeMismatch(players=len(roster), roles=counts.total)
    key = roster_key(seed, roster)
    roles = shuffle_roles(key, counts)
    draws = draw_items(key, roles)
    return Deal(seed=seed, roles=roles, items=draws[-1].holders, draws=draws, roster=roster)


def round_commitment(number: int, seed: str) -> str:
    """Round ``number``'s public commitment to its seed: SHA-256 of ``vkmafia-round:N:seed``."""
    return hashlib.sha256(f"{ROUND_PREFIX}:{int(number)}:{seed}".encode()).hexdigest()


def canonical_deal_json(seed: str, roles: Sequence[Role], items: Mapping[Item, int]) -> str:
    return json.dumps(
        {
            "algorithm": ALGORITHM,
            "items": {Item(k).value: int(v) for k, v in items.items()},
            "roles": [Role(r).value for r in roles],
            "seed": seed,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def roster_commitment(
    seed: str, roles: Sequence[Role], items: Mapping[Item, int], roster: Sequence[int]
) -> str:
    """The deal hash of a deal from a round's seed and the roster (published at the start)."""
    text = json.dumps(
        {
            "algorithm": ALGORITHM_ROSTER,
            "items": {Item(k).value: int(v) for k, v in items.items()},
            "roles": [Role(r).value for r in roles],
            "roster": [int(v) for v in roster],
            "seed": seed,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def commitment(seed: str, roles: Sequence[Role], items: Mapping[Item, int]) -> str:
    """SHA-256 (hex) of the canonical deal: published at the start, checked after the end."""
    return hashlib.sha256(canonical_deal_json(seed, roles, items).encode("utf-8")).hexdigest()


def verify_commitment(
    seed: str, roles: Sequence[Role], items: Mapping[Item, int], published: str
) -> bool:
    """Does the revealed seed and deal match the commitment published at the start?"""
    return commitment(seed, roles, items) == published.strip().lower()


def verify_seed(seed: str, counts: RoleCounts, published: str) -> bool:
    """Recompute the whole deal from the revealed seed and check it against the commitment."""
    return deal(seed, counts).commitment == published.strip().lower()


# --- the chain of rounds ---------------------------------------------------------------------


class ChainError(ValueError):
    """A revealed chain of rounds that does not hold (English, one line, for ``verify``)."""


@dataclass(frozen=True, slots=True)
class RevealedRound:
    """A round as published: its number, the commitment posted when it opened, its seed."""

    number: int
    commitment: str
    seed: str


def verify_chain(
    rounds: Sequence[RevealedRound], counts: RoleCounts, vk_ids: Iterable[int]
) -> Deal:
    """Check every round's commitment against its revealed seed (rounds numbered 1, 2, … in
    order) and recompute the deal from the last round's seed and the roster. Raises
    ``ChainError`` for a forged or broken chain (``SetupError`` for impossible counts)."""
    if not rounds:
        raise ChainError("no rounds given: the chain starts with round 1")
    numbers = [r.number for r in rounds]
    if numbers != list(range(1, len(rounds) + 1)):
        got = ", ".join(str(n) for n in numbers)
        raise ChainError(f"rounds must be numbered 1, 2, 3... in order, got {got}")
    for r in rounds:
        expected = round_commitment(r.number, r.seed)
        if expected != r.commitment.strip().lower():
            raise ChainError(
                f"round {r.number} is forged: its seed hashes to {expected}, not to the "
                f"published commitment {r.commitment.strip()}"
            )
    return deal_for_roster(rounds[-1].seed, counts, vk_ids)
