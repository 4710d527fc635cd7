"""RULES.md §1 verifiable randomness: the seeded deal and the SHA-256 commit-reveal.

The deal algorithm is re-implemented here from its published description (the ``deal`` module
doc), as anyone checking a finished game would, so a change to the algorithm cannot pass
unnoticed.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from gameplay.rules import (
    ChainError,
    Item,
    RevealedRound,
    Role,
    RoleCounts,
    SeededStream,
    commitment,
    deal,
    deal_for_roster,
    round_commitment,
    verify_chain,
    verify_commitment,
    verify_seed,
)
from gameplay.rules.errors import SetupError

ITEMS_IN_DRAW_ORDER = ("clock", "red_button", "book")


class _Stream:
    """``(seed, label)`` stream as published: SHA-256 blocks, 8-byte rejection sampling."""

    def __init__(self, seed: str, label: str) -> None:
        self.data = b""
        self.block = 0
        self.seed = seed
        self.label = label

    def randbelow(self, n: int) -> int:
        while True:
            while len(self.data) < 8:
                text = f"{self.seed}:{self.label}:{self.block}"
                self.data += hashlib.sha256(text.encode("utf-8")).digest()
                self.block += 1
            x, self.data = int.from_bytes(self.data[:8], "big"), self.data[8:]
            if x < 2**64 - 2**64 % n:
                return x % n


def _published_deal(seed: str, counts: dict[str, int]) -> tuple[list[str], dict[str, int]]:
    roles = []
    for role in ("mafia", "commissar", "doctor", "maniac", "civilian"):
        roles += [role] * counts[role]
    stream = _Stream(seed, "roles")
    for i in range(len(roles) - 1, 0, -1):
        j = stream.randbelow(i + 1)
        roles[i], roles[j] = roles[j], roles[i]
    n = len(roles)
    attempt = 0
    while True:
        attempt += 1
        stream = _Stream(seed, f"items/{attempt}")
        seats = list(range(1, n + 1))
        for i in range(3):
            j = i + stream.randbelow(n - i)
            seats[i], seats[j] = seats[j], seats[i]
        items = dict(zip(ITEMS_IN_DRAW_ORDER, seats[:3], strict=True))
        if sum(roles[s - 1] == "mafia" for s in items.values()) == 1:
            return roles, items


def _published_commitment(seed: str, roles: list[str], items: dict[str, int]) -> str:
    doc = {"algorithm": "sha256-stream-v1", "items": items, "roles": roles, "seed": seed}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SEEDS = ["a", "game-42", "Машина времени", "seed with spaces", "0" * 64]


@pytest.mark.parametrize("seed", SEEDS)
def test_commit_reveal_deal_matches_the_published_algorithm(seed: str):
    counts = RoleCounts()
    d = deal(seed, counts)
    roles, items = _published_deal(seed, counts.as_dict())
    assert [r.value for r in d.roles] == roles
    assert {i.value: s for i, s in d.items} == items
    assert d.commitment == _published_commitment(seed, roles, items)


def test_commit_reveal_stream_is_sha256_of_seed_label_and_block_number():
    first = hashlib.sha256(b"s:roles:0").digest()
    expected = int.from_bytes(first[:8], "big") % 1000
    assert SeededStream("s", "roles").randbelow(1000) == expected


def test_commit_reveal_stream_refuses_an_empty_range():
    with pytest.raises(ValueError):
        SeededStream("s", "x").randbelow(0)


@pytest.mark.parametrize("seed", SEEDS)
def test_commit_reveal_commitment_verifies_with_the_right_seed(seed: str):
    d = deal(seed, RoleCounts())
    published = d.commitment
    assert len(published) == 64 and int(published, 16) >= 0
    assert verify_commitment(seed, d.roles, dict(d.items), published)
    assert verify_seed(seed, RoleCounts(), published)
    # As pasted back from the board: surrounding whitespace and upper case are tolerated.
    assert verify_commitment(seed, d.roles, dict(d.items), f"  {published.upper()}\n")


def test_commit_reveal_tampered_role_fails():
    d = deal("tamper", RoleCounts())
    roles = list(d.roles)
    i = roles.index(Role.MAFIA)
    j = roles.index(Role.CIVILIAN)
    roles[i], roles[j] = roles[j], roles[i]
    assert not verify_commitment("tamper", roles, dict(d.items), d.commitment)


def test_commit_reveal_tampered_item_fails():
    d = deal("tamper", RoleCounts())
    items = dict(d.items)
    taken = set(items.values())
    items[Item.BOOK] = next(s for s in range(1, 27) if s not in taken)
    assert not verify_commitment("tamper", d.roles, items, d.commitment)
    swapped = dict(d.items)
    swapped[Item.CLOCK], swapped[Item.BOOK] = swapped[Item.BOOK], swapped[Item.CLOCK]
    assert not verify_commitment("tamper", d.roles, swapped, d.commitment)


def test_commit_reveal_tampered_seed_fails():
    d = deal("tamper", RoleCounts())
    assert not verify_commitment("tampeR", d.roles, dict(d.items), d.commitment)
    assert not verify_seed("tampeR", RoleCounts(), d.commitment)


def test_commit_reveal_verify_seed_recomputes_the_deal_from_the_counts():
    counts = RoleCounts(mafia=3, commissar=1, doctor=1, maniac=1, civilian=6)
    d = deal("recompute", counts)
    assert verify_seed("recompute", counts, d.commitment)
    # The same seed with other counts is another deal.
    other = RoleCounts(mafia=2, commissar=1, doctor=1, maniac=1, civilian=7)
    assert not verify_seed("recompute", other, d.commitment)


def test_commit_reveal_commitment_function_matches_deal_commitment():
    d = deal("fn", RoleCounts())
    assert commitment("fn", d.roles, dict(d.items)) == d.commitment


# --- determinism ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_determinism_same_seed_same_deal(seed: str):
    assert deal(seed, RoleCounts()) == deal(seed, RoleCounts())


def test_determinism_different_seeds_give_different_deals():
    deals = [deal(f"seed-{i}", RoleCounts()) for i in range(20)]
    # 26 seats: ~10^11 role arrangements; twenty seeds colliding would mean the seed is unused.
    assert len({d.roles for d in deals}) == 20
    assert len({d.commitment for d in deals}) == 20
    assert len({d.items for d in deals}) > 1


# --- rounds and the roster (sha256-stream-v2) -------------------------------------------------


def _published_roster_deal(
    seed: str, counts: dict[str, int], vk_ids: list[int]
) -> tuple[list[str], dict[str, int], list[int]]:
    """The v2 deal as the module doc publishes it: key ``seed "/" R`` with ``R`` the VK ids in
    ascending order joined by ",", then the v1 algorithm on that key."""
    roster = sorted(vk_ids)
    roles, items = _published_deal(f"{seed}/{','.join(str(v) for v in roster)}", counts)
    return roles, items, roster


def _published_roster_commitment(
    seed: str, roles: list[str], items: dict[str, int], roster: list[int]
) -> str:
    doc = {
        "algorithm": "sha256-stream-v2",
        "items": items,
        "roles": roles,
        "roster": roster,
        "seed": seed,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


ROSTER = [5003, 77, 1_000_001, 420, 9, 31337, 64, 2048, 1001]


@pytest.mark.parametrize("seed", SEEDS)
def test_roster_deal_matches_the_published_algorithm(seed: str):
    counts = RoleCounts.default_for(len(ROSTER))
    d = deal_for_roster(seed, counts, ROSTER)
    roles, items, roster = _published_roster_deal(seed, counts.as_dict(), ROSTER)
    assert list(d.roster) == roster
    assert [r.value for r in d.roles] == roles
    assert {i.value: s for i, s in d.items} == items
    assert d.commitment == _published_roster_commitment(seed, roles, items, roster)


def test_round_commitment_is_sha256_of_the_round_number_and_the_seed():
    seed = "ab" * 32
    expected = hashlib.sha256(f"vkmafia-round:1:{seed}".encode()).hexdigest()
    assert round_commitment(1, seed) == expected
    assert round_commitment(2, seed) != round_commitment(1, seed)


def test_the_same_roster_gets_the_same_deal_in_any_order_and_another_roster_another():
    counts = RoleCounts.default_for(len(ROSTER))
    one = deal_for_roster("s", counts, ROSTER)
    assert deal_for_roster("s", counts, list(reversed(ROSTER))) == one
    # Swapping one player for another reshuffles everyone: nobody can steer a seat's role.
    others = {deal_for_roster("s", counts, [*ROSTER[:-1], 2000 + k]).roles for k in range(20)}
    assert len(others) > 10


def test_roster_deal_refuses_a_bad_roster():
    counts = RoleCounts.default_for(len(ROSTER))
    with pytest.raises(SetupError):
        deal_for_roster("s", counts, ROSTER[:-1])  # one short of the counts
    with pytest.raises(SetupError):
        deal_for_roster("s", counts, [*ROSTER[:-1], ROSTER[0]])  # a VK id twice


def test_verify_chain_checks_every_round_and_deals_from_the_last():
    counts = RoleCounts.default_for(len(ROSTER))
    seeds = ["first", "second", "third"]
    rounds = [RevealedRound(n, round_commitment(n, s), s) for n, s in enumerate(seeds, 1)]
    assert verify_chain(rounds, counts, ROSTER) == deal_for_roster("third", counts, ROSTER)
    # Pasted from the board in upper case with spaces: still the same commitment.
    loose = [RevealedRound(r.number, f" {r.commitment.upper()} ", r.seed) for r in rounds]
    assert verify_chain(loose, counts, ROSTER).roster == tuple(sorted(ROSTER))
    forged = [rounds[0], RevealedRound(2, rounds[1].commitment, "other"), rounds[2]]
    with pytest.raises(ChainError, match="round 2 is forged"):
        verify_chain(forged, counts, ROSTER)
    with pytest.raises(ChainError, match="numbered"):
        verify_chain([rounds[0], rounds[2]], counts, ROSTER)
    with pytest.raises(ChainError, match="numbered"):
        verify_chain([rounds[1], rounds[0]], counts, ROSTER)
    with pytest.raises(ChainError):
        verify_chain([], counts, ROSTER)
