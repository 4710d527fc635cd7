"""vkbot.sharing.Leases: what a runbot holds between two renewals — the leases lost, the ones
over its share (the latest taken go first), those released once their loops have ended."""

from __future__ import annotations

from vkbot.sharing import Leases


def test_the_leases_over_the_share_are_the_latest_taken_and_not_those_leaving() -> None:
    leases = Leases()
    leases.take({5, 3})
    leases.take({5, 3, 9, 1})
    assert leases.serving() == [3, 5, 1, 9]
    assert leases.excess(2) == [1, 9]
    leases.leaving.add(3)
    assert leases.excess(2) == [9]
    assert leases.excess(5) == [] and leases.excess(0) == [5, 1, 9]


def test_a_lease_lost_is_forgotten_and_reported_unless_it_was_being_released() -> None:
    leases = Leases()
    leases.take({1, 2, 3})
    leases.leaving.add(2)
    assert leases.lose({3}) == [1]
    assert leases.held == {3: 3} and leases.leaving == set()
    leases.take({3, 4})
    assert leases.held == {3: 3, 4: 4}
    leases.drop(3)
    assert leases.serving() == [4]
