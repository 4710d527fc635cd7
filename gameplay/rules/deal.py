"""The verifiable deal: roles and items from one seed, and the commit-reveal (RULES.md §1).

Everything random in a game comes from its seed through the documented stream below, so anyone
can recompute a finished game's deal from the published seed and role counts (``verify_seed``)
without this code: the algorithm is small enough to re-implement in any language.

Stream ``(seed, label)``: block ``i`` (from 0) is ``SHA-256(utf8(seed) ":" utf8(label) ":" i)``
with ``i`` in decimal; the blocks are concatenated into a byte stream. ``randbelow(n)`` reads the
next 8 bytes as a big-endian integer ``x``, rejects it when ``x >= 2**64 - 2**64 % n`` (reading 8
more bytes) and returns ``x % n``.

Roles: the multiset ``mafia × M, commissar × C, doctor × D, maniac × K, civilian × T`` in that
order is shuffled with Fisher–Yates (``for i from len-1 down to 1: swap(i, randbelow(i+1))``) on
the stream ``(seed, "roles")``; position ``i`` is seat ``i + 1``.

Items: draw ``k`` (from 1) uses the stream ``(seed, "items/k")`` and a partial Fisher–Yates over
the seat list ``[1..N]``: ``for i in 0, 1, 2: swap(i, i + randbelow(N - i))``; the first three
seats get the clock, the red button and the book. Draws repeat until exactly one item sits with
the mafia; every draw is kept.

Commitment: SHA-256 (hex) of the canonical JSON (sorted keys, no spaces, UTF-8)
``{"algorithm": "sha256-stream-v1", "items": {"book": s, "clock": s, "red_button": s},
"roles": ["mafia", …], "seed": "…"}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .errors import SetupError
from .roles import ITEM_ORDER, Item, Role
from .state import SeatState, Table
from .winner import decide_winner

ALGORITHM = "sha256-stream-v1"
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
            raise SetupError("Для игры нужно хотя бы 4 игрока.")
        mafia = max(1, round(players * 6 / 26))
        specials = 1 if players >= 7 else 0
        civilian = players - mafia - 3 * specials
        if specials == 0:
            civilian -= 1  # a commissar still plays in the smallest games
            return cls(mafia=mafia, commissar=1, doctor=0, maniac=0, civilian=civilian)
        return cls(mafia=mafia, commissar=1, doctor=1, maniac=1, civilian=civilian)

    def validate(self) -> None:
        """Raise ``SetupError`` (Russian reason for the GM) for an impossible setup."""
        counts = (self.mafia, self.commissar, self.doctor, self.maniac, self.civilian)
        if any(c < 0 for c in counts):
            raise SetupError("Число игроков каждой роли не может быть отрицательным.")
        if self.mafia < 1:
            raise SetupError("Нужна хотя бы одна мафия.")
        if max(self.commissar, self.doctor, self.maniac) > 1:
            raise SetupError("Комиссар, доктор и маньяк могут быть только в одном экземпляре.")
        if self.total - self.mafia < len(ITEM_ORDER) - 1:
            raise SetupError(
                "Нужно хотя бы двое игроков вне мафии: ровно один из трёх предметов "
                "должен оказаться у мафии."
            )
        roles = self.pool()
        table = Table.of(SeatState(i + 1, r) for i, r in enumerate(roles))
        if decide_winner(table) is not None:
            raise SetupError(
                "С таким составом игра закончится, не начавшись: мафии должно быть меньше, "
                "чем остальных игроков."
            )


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

    @property
    def item_by_seat(self) -> dict[int, Item]:
        return {seat: item for item, seat in self.items}

    @property
    def commitment(self) -> str:
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
        raise SetupError("Предметы невозможно раздать так, чтобы ровно один был у мафии.")
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
    raise SetupError("Не удалось раздать предметы: попробуйте ещё раз.")  # pragma: no cover


def deal(seed: str, counts: RoleCounts) -> Deal:
    """Deal roles and items for ``counts.total`` seats from ``seed``."""
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise SetupError("Зерно раздачи должно быть текстом в UTF-8.") from None
    counts.validate()
    roles = shuffle_roles(seed, counts)
    draws = draw_items(seed, roles)
    return Deal(seed=seed, roles=roles, items=draws[-1].holders, draws=draws)


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
