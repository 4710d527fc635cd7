"""RULES.md §3 day votes: V1 (who may vote for whom), V2 (changes), V6 (early votes), V7, P7."""

from __future__ import annotations

import pytest

from gameplay.rules import (
    EARLY_VOTE_FROM_DAY,
    Ballot,
    EarlyClose,
    early_close_reached,
    validate_vote,
)
from gameplay.rules.errors import (
    DeadCannotAct,
    EarlyVoteFinal,
    NotInGame,
    SelfVote,
    UnknownTarget,
    VoteTargetNotAlive,
)
from tests.rules.builders import CYRILLIC, C, D, K, M, T, make_table

SIX = (M, C, D, K, T, T)


def test_v6_early_votes_count_from_day_three():
    assert EARLY_VOTE_FROM_DAY == 3


# --- V1 ---------------------------------------------------------------------------------------


def test_v1_vote_for_another_living_player_is_accepted():
    accepted = validate_vote(make_table(*SIX), 1, voter=1, target=2)
    assert accepted.ballot == Ballot(voter=1, target=2, early=False)
    assert accepted.replaced is None
    assert not accepted.early_ignored


def test_v1_self_vote_is_refused():
    with pytest.raises(SelfVote) as info:
        validate_vote(make_table(*SIX), 1, voter=3, target=3)
    assert CYRILLIC.search(info.value.reason)


def test_v1_vote_for_a_dead_player_is_refused():
    with pytest.raises(VoteTargetNotAlive) as info:
        validate_vote(make_table(*SIX, dead=[4]), 2, voter=1, target=4)
    assert CYRILLIC.search(info.value.reason)


def test_v1_p7_dead_voter_is_refused_with_dead_cannot_act():
    with pytest.raises(DeadCannotAct) as info:
        validate_vote(make_table(*SIX, dead=[4]), 2, voter=4, target=1)
    assert info.value.rule == "P7"
    assert CYRILLIC.search(info.value.reason)


def test_v8_unknown_voter_and_unknown_target_are_refused():
    table = make_table(*SIX)
    with pytest.raises(NotInGame):
        validate_vote(table, 1, voter=99, target=1)
    with pytest.raises(UnknownTarget):
        validate_vote(table, 1, voter=1, target=99)


# --- V2 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("day", [1, 2, 3, 5])
def test_v2_an_ordinary_vote_can_be_changed(day: int):
    table = make_table(*SIX)
    first = validate_vote(table, day, voter=1, target=2).ballot
    second = validate_vote(table, day, voter=1, target=5, current=first)
    assert second.ballot == Ballot(voter=1, target=5, early=False)
    assert second.replaced == first


# --- V6 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("day", [1, 2])
def test_v6_early_vote_on_days_one_and_two_is_ignored_and_changeable(day: int):
    table = make_table(*SIX)
    accepted = validate_vote(table, day, voter=1, target=2, early=True)
    assert accepted.early_ignored, "the voter must be told the word was ignored"
    assert accepted.ballot == Ballot(voter=1, target=2, early=False)
    changed = validate_vote(table, day, voter=1, target=5, current=accepted.ballot)
    assert changed.ballot.target == 5
    # Even a ballot marked early by mistake stays changeable on days 1–2.
    again = validate_vote(table, day, voter=1, target=6, current=Ballot(1, 5, early=True))
    assert again.ballot.target == 6


@pytest.mark.parametrize("day", [3, 4, 10])
def test_v6_early_vote_from_day_three_is_final(day: int):
    table = make_table(*SIX)
    accepted = validate_vote(table, day, voter=1, target=2, early=True)
    assert accepted.ballot == Ballot(voter=1, target=2, early=True)
    assert not accepted.early_ignored
    with pytest.raises(EarlyVoteFinal) as info:
        validate_vote(table, day, voter=1, target=5, current=accepted.ballot)
    assert CYRILLIC.search(info.value.reason)
    with pytest.raises(EarlyVoteFinal):
        validate_vote(table, day, voter=1, target=5, early=True, current=accepted.ballot)


def test_v6_an_ordinary_vote_can_become_early_on_day_three():
    table = make_table(*SIX)
    ordinary = validate_vote(table, 3, voter=1, target=2).ballot
    early = validate_vote(table, 3, voter=1, target=4, early=True, current=ordinary)
    assert early.ballot == Ballot(1, 4, early=True)


def test_v7_early_vote_for_a_modkilled_player_is_unlocked():
    table = make_table(*SIX, dead=[6])  # 6 was modkilled after 1's early vote for them
    accepted = validate_vote(table, 3, voter=1, target=2, current=Ballot(1, 6, early=True))
    assert accepted.ballot.target == 2


def _early(voters: list[int], target: int) -> dict[int, Ballot]:
    return {v: Ballot(v, target, early=True) for v in voters}


@pytest.mark.parametrize(
    ("living", "needed"),
    [(4, 3), (5, 3), (6, 4), (7, 4), (20, 11), (21, 11)],
)
def test_v6_majority_is_strictly_more_than_half_of_the_living(living: int, needed: int):
    roles = (M,) + (T,) * (living - 1)
    table = make_table(*roles, T, T, dead=[living + 1, living + 2])  # the dead don't count
    target = 1
    voters = list(range(2, needed + 1))  # needed - 1 early votes
    ballots = _early(voters, target)
    assert not early_close_reached(table, 3, ballots, EarlyClose.MAJORITY)
    ballots[needed + 1] = Ballot(needed + 1, target, early=True)
    assert early_close_reached(table, 3, ballots, EarlyClose.MAJORITY)


def test_v6_all_rule_needs_every_living_player():
    table = make_table(M, T, T, T, T, dead=[5])
    ballots = _early([1, 2, 3], 4)
    assert not early_close_reached(table, 3, ballots, EarlyClose.ALL)
    ballots[4] = Ballot(4, 1, early=True)
    assert early_close_reached(table, 3, ballots, EarlyClose.ALL)


def test_v6_ordinary_votes_do_not_count_toward_early_close():
    table = make_table(M, T, T, T, T)
    ballots = {v: Ballot(v, 1) for v in (2, 3, 4, 5)}
    assert not early_close_reached(table, 3, ballots, EarlyClose.MAJORITY)
    assert not early_close_reached(table, 3, ballots, EarlyClose.ALL)


@pytest.mark.parametrize("day", [1, 2])
@pytest.mark.parametrize("rule", list(EarlyClose))
def test_v6_days_one_and_two_never_close_early(day: int, rule: EarlyClose):
    table = make_table(M, T, T, T, T)
    ballots = {v: Ballot(v, 1 if v != 1 else 2, early=True) for v in range(1, 6)}
    assert not early_close_reached(table, day, ballots, rule)
    assert early_close_reached(table, 3, ballots, rule)


def test_v7_early_votes_of_and_for_a_removed_player_do_not_count():
    table = make_table(M, T, T, T, T, T, dead=[6])
    # 3 living early votes of 5 living would close the day; here one is by the dead seat 6
    # and one is for it, so only one counts.
    ballots = {2: Ballot(2, 1, early=True), 6: Ballot(6, 1, early=True)}
    ballots[3] = Ballot(3, 6, early=True)
    assert not early_close_reached(table, 3, ballots, EarlyClose.MAJORITY)
