"""rules/targets.py: what a player may send, at whom — the lists the buttons offer are exactly
what the validation accepts (RULES.md §4 at night, V1 by day)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gameplay.rules import (
    Act,
    Item,
    NightContext,
    Role,
    SeatState,
    Table,
    night_acts,
    valid_targets,
    validate_action,
    validate_vote,
    vote_targets,
)
from gameplay.rules.errors import (
    ActionNotAvailable,
    ItemNotHeld,
    ItemSpent,
    RoleStrikeUsed,
    RuleViolation,
)
from tests.rules.builders import standard_table
from tests.rules.test_properties import tables

#: The refusals that mean "this act is not yours to send", whatever the target.
NOT_YOURS = (ActionNotAvailable, ItemNotHeld, ItemSpent, RoleStrikeUsed)


def _accepts(table: Table, ctx: NightContext, actor: int, act: Act, target: int) -> bool:
    try:
        validate_action(table, ctx, actor, act, target, Role.DOCTOR)
    except RuleViolation:
        return False
    return True


# --- night_acts ------------------------------------------------------------------------------


def test_night_acts_are_the_roles_acts_then_the_unused_item():
    mafia_with_clock = SeatState(1, Role.MAFIA, item=Item.CLOCK)
    assert night_acts(mafia_with_clock, role_strike_used=False) == [
        Act.MAFIA_SHOT,
        Act.ROLE_STRIKE,
        Act.CLOCK,
    ]
    assert night_acts(mafia_with_clock, role_strike_used=True) == [Act.MAFIA_SHOT, Act.CLOCK]
    commissar = SeatState(3, Role.COMMISSAR, item=Item.BOOK, item_used=True)
    assert night_acts(commissar, role_strike_used=False) == [Act.CHECK, Act.COMMISSAR_SHOT]
    assert night_acts(SeatState(6, Role.CIVILIAN), role_strike_used=False) == []
    assert night_acts(SeatState(7, Role.CIVILIAN, item=Item.RED_BUTTON), role_strike_used=True) == [
        Act.RED_BUTTON
    ]


def test_a_seat_that_is_out_has_no_night_acts():
    assert night_acts(SeatState(4, Role.DOCTOR, alive=False), role_strike_used=False) == []


@settings(max_examples=150, deadline=None)
@given(table=tables(), used=st.booleans())
def test_night_acts_are_what_validation_takes_from_the_seat(table: Table, used: bool):
    ctx = NightContext(number=2, role_strike_used=used)
    for seat in table.alive:
        acts = night_acts(seat, role_strike_used=used)
        for act in Act:
            try:
                validate_action(table, ctx, seat.number, act, seat.number, Role.DOCTOR)
            except NOT_YOURS:
                assert act not in acts, (seat, act)
            except RuleViolation:
                assert act in acts, (seat, act)  # refused for its target, not for the act
            else:
                assert act in acts, (seat, act)


# --- valid_targets ---------------------------------------------------------------------------


def test_valid_targets_leave_out_self_where_forbidden_and_the_last_heal():
    table = standard_table(dead=[9])
    ctx = NightContext(number=2, last_heal_target=4)
    assert valid_targets(table, ctx, 3, Act.CHECK) == [1, 2, 4, 5, 6, 7, 8, 10]
    assert valid_targets(table, ctx, 4, Act.HEAL) == [1, 2, 3, 5, 6, 7, 8, 10]
    assert valid_targets(table, ctx, 1, Act.MAFIA_SHOT) == [1, 2, 3, 4, 5, 6, 7, 8, 10]


def test_no_valid_targets_for_an_act_that_is_not_the_senders():
    table = standard_table(dead=[2])
    ctx = NightContext(number=2, role_strike_used=True)
    assert valid_targets(table, ctx, 3, Act.HEAL) == []
    assert valid_targets(table, ctx, 1, Act.ROLE_STRIKE) == []
    assert valid_targets(table, ctx, 2, Act.MAFIA_SHOT) == []  # out of the game
    assert valid_targets(table, ctx, 99, Act.MAFIA_SHOT) == []  # not in it
    assert valid_targets(table, ctx, 9, Act.CLOCK) == []  # the clock is seat 6's


@settings(max_examples=150, deadline=None)
@given(
    table=tables(),
    used=st.booleans(),
    last_heal=st.one_of(st.none(), st.integers(0, 11)),
)
def test_valid_targets_are_exactly_what_validation_accepts(
    table: Table, used: bool, last_heal: int | None
):
    ctx = NightContext(number=2, role_strike_used=used, last_heal_target=last_heal)
    for actor in [*(s.number for s in table), 0, len(table) + 1]:
        for act in Act:
            accepted = [t.number for t in table if _accepts(table, ctx, actor, act, t.number)]
            assert valid_targets(table, ctx, actor, act) == accepted, (actor, act)


# --- vote_targets ----------------------------------------------------------------------------


def test_vote_targets_are_every_other_living_player():
    table = standard_table(dead=[5])
    assert [s.number for s in vote_targets(table, 3)] == [1, 2, 4, 6, 7, 8, 9, 10]


@settings(max_examples=150, deadline=None)
@given(table=tables(), day=st.integers(1, 5))
def test_vote_targets_are_exactly_what_validate_vote_accepts(table: Table, day: int):
    for voter in table.alive:
        accepted = []
        for target in table:
            try:
                validate_vote(table, day, voter.number, target.number)
            except RuleViolation:
                continue
            accepted.append(target.number)
        assert [s.number for s in vote_targets(table, voter.number)] == accepted
