"""RULES.md §4 night actions: who may send what, at whom (and P7: the dead send nothing)."""

from __future__ import annotations

import pytest

from gameplay.rules import Act, Item, NightContext, Role, Submission, validate_action
from gameplay.rules.errors import (
    ActionNotAvailable,
    DeadCannotAct,
    HealRepeat,
    InvalidGuess,
    ItemNotHeld,
    ItemSpent,
    NotInGame,
    RoleStrikeUsed,
    RuleViolation,
    SelfTargetForbidden,
    TargetNotAlive,
    UnknownTarget,
)
from tests.rules.builders import (
    CYRILLIC,
    STANDARD_ITEMS,
    STANDARD_ROLES,
    make_table,
    standard_table,
)

# Standard table: 1, 2 mafia; 3 commissar; 4 doctor; 5 maniac; 6–10 civilians;
# clock at 6, red button at 7, book at 8.
CTX = NightContext(number=1)


def ok(actor: int, act: Act, target: int, guess: Role | None = None, **kw) -> Submission:
    table = kw.pop("table", None) or standard_table(**kw.pop("table_kw", {}))
    ctx = kw.pop("ctx", CTX)
    return validate_action(table, ctx, actor, act, target, guess)


def refused(exc: type[RuleViolation], actor: int, act: Act, target: int, guess=None, **kw):
    with pytest.raises(exc) as info:
        ok(actor, act, target, guess, **kw)
    assert CYRILLIC.search(info.value.reason), info.value.reason
    assert info.value.code == exc.__name__
    return info.value


# --- mafia_shot -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [1, 2, 3, 5, 10])
def test_mafia_shot_any_living_player_including_self_and_teammate(target: int):
    assert ok(1, Act.MAFIA_SHOT, target) == Submission(1, Act.MAFIA_SHOT, target)


def test_mafia_shot_by_any_living_mafia_member():
    assert ok(2, Act.MAFIA_SHOT, 6).actor == 2


def test_mafia_shot_at_a_dead_player_is_refused():
    refused(TargetNotAlive, 1, Act.MAFIA_SHOT, 6, table_kw={"dead": [6]})


# --- role_strike ------------------------------------------------------------------------------


@pytest.mark.parametrize("guess", [Role.COMMISSAR, Role.DOCTOR, Role.MANIAC])
def test_role_strike_guess_commissar_doctor_or_maniac(guess: Role):
    # The guess need not be right to be accepted: a wrong one costs the sender (§5 step 1).
    sub = ok(2, Act.ROLE_STRIKE, 9, guess)
    assert sub == Submission(2, Act.ROLE_STRIKE, 9, guess)


@pytest.mark.parametrize("guess", [Role.MAFIA, Role.CIVILIAN, None])
def test_role_strike_other_guesses_are_refused(guess: Role | None):
    refused(InvalidGuess, 1, Act.ROLE_STRIKE, 3, guess)


def test_role_strike_once_per_game_for_the_whole_mafia():
    used = NightContext(number=3, role_strike_used=True)
    refused(RoleStrikeUsed, 1, Act.ROLE_STRIKE, 3, Role.COMMISSAR, ctx=used)
    refused(RoleStrikeUsed, 2, Act.ROLE_STRIKE, 3, Role.COMMISSAR, ctx=used)


def test_role_strike_not_at_self():
    refused(SelfTargetForbidden, 1, Act.ROLE_STRIKE, 1, Role.MANIAC)


def test_role_strike_at_a_teammate_is_allowed():
    assert ok(1, Act.ROLE_STRIKE, 2, Role.DOCTOR).target == 2


def test_role_strike_at_a_dead_player_is_refused():
    refused(TargetNotAlive, 1, Act.ROLE_STRIKE, 3, Role.COMMISSAR, table_kw={"dead": [3]})


def test_guess_is_dropped_from_actions_other_than_the_role_strike():
    assert ok(3, Act.CHECK, 1, Role.MAFIA).guess is None


# --- commissar ------------------------------------------------------------------------------


@pytest.mark.parametrize("act", [Act.CHECK, Act.COMMISSAR_SHOT])
def test_commissar_check_or_shot_any_living_other_player(act: Act):
    assert ok(3, act, 1) == Submission(3, act, 1)
    assert ok(3, act, 5).target == 5


@pytest.mark.parametrize("act", [Act.CHECK, Act.COMMISSAR_SHOT])
def test_commissar_check_or_shot_not_at_self(act: Act):
    refused(SelfTargetForbidden, 3, act, 3)


@pytest.mark.parametrize("act", [Act.CHECK, Act.COMMISSAR_SHOT])
def test_commissar_check_or_shot_not_at_the_dead(act: Act):
    refused(TargetNotAlive, 3, act, 1, table_kw={"dead": [1]})


# --- doctor ---------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [4, 1, 9])
def test_heal_any_living_player_self_included(target: int):
    assert ok(4, Act.HEAL, target).target == target


def test_heal_not_last_nights_heal_target():
    ctx = NightContext(number=2, last_heal_target=9)
    refused(HealRepeat, 4, Act.HEAL, 9, ctx=ctx)
    assert ok(4, Act.HEAL, 10, ctx=ctx).target == 10


def test_heal_self_not_twice_in_a_row():
    ctx = NightContext(number=2, last_heal_target=4)
    refused(HealRepeat, 4, Act.HEAL, 4, ctx=ctx)


def test_heal_of_the_target_two_nights_ago_is_allowed():
    # Only the night before counts; the caller passes that night's heal target.
    assert ok(4, Act.HEAL, 9, ctx=NightContext(number=3, last_heal_target=10)).target == 9


def test_book_is_not_bound_by_the_doctors_heal_rule():
    table = standard_table(items={Item.CLOCK: 6, Item.RED_BUTTON: 7, Item.BOOK: 4})
    ctx = NightContext(number=2, last_heal_target=9)
    assert validate_action(table, ctx, 4, Act.BOOK, 9).act is Act.BOOK


def test_heal_not_at_the_dead():
    refused(TargetNotAlive, 4, Act.HEAL, 9, table_kw={"dead": [9]})


# --- maniac -------------------------------------------------------------------------------


def test_maniac_shot_any_living_other_player():
    assert ok(5, Act.MANIAC_SHOT, 1).target == 1
    refused(SelfTargetForbidden, 5, Act.MANIAC_SHOT, 5)
    refused(TargetNotAlive, 5, Act.MANIAC_SHOT, 1, table_kw={"dead": [1]})


# --- items ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("holder", "act"), [(6, Act.CLOCK), (7, Act.RED_BUTTON)])
def test_clock_and_red_button_any_living_other_player(holder: int, act: Act):
    assert ok(holder, act, 1) == Submission(holder, act, 1)
    refused(SelfTargetForbidden, holder, act, holder)
    refused(TargetNotAlive, holder, act, 1, table_kw={"dead": [1]})


def test_book_any_living_player_self_included():
    assert ok(8, Act.BOOK, 8).target == 8
    assert ok(8, Act.BOOK, 3).target == 3
    refused(TargetNotAlive, 8, Act.BOOK, 3, table_kw={"dead": [3]})


@pytest.mark.parametrize(
    ("actor", "act"),
    [(6, Act.RED_BUTTON), (6, Act.BOOK), (7, Act.CLOCK), (1, Act.CLOCK), (3, Act.BOOK)],
)
def test_item_not_held_is_refused(actor: int, act: Act):
    refused(ItemNotHeld, actor, act, 9)


@pytest.mark.parametrize(
    ("holder", "item"), [(6, Item.CLOCK), (7, Item.RED_BUTTON), (8, Item.BOOK)]
)
def test_spent_item_is_refused(holder: int, item: Item):
    table = make_table(*STANDARD_ROLES, items=STANDARD_ITEMS, used=[item])
    with pytest.raises(ItemSpent):
        validate_action(table, CTX, holder, Act(item.value), 9)


def test_items_are_usable_by_any_role_including_the_mafia():
    table = standard_table(items={Item.CLOCK: 1, Item.RED_BUTTON: 3, Item.BOOK: 5})
    assert validate_action(table, CTX, 1, Act.CLOCK, 9).act is Act.CLOCK
    assert validate_action(table, CTX, 3, Act.RED_BUTTON, 9).act is Act.RED_BUTTON
    assert validate_action(table, CTX, 5, Act.BOOK, 5).act is Act.BOOK


# --- wrong role, unknown, dead --------------------------------------------------------------


@pytest.mark.parametrize(
    ("actor", "act"),
    [
        (9, Act.MAFIA_SHOT),
        (9, Act.HEAL),
        (9, Act.CHECK),
        (3, Act.HEAL),
        (3, Act.MAFIA_SHOT),
        (3, Act.ROLE_STRIKE),
        (4, Act.CHECK),
        (4, Act.MANIAC_SHOT),
        (5, Act.MAFIA_SHOT),
        (5, Act.COMMISSAR_SHOT),
        (1, Act.CHECK),
        (1, Act.HEAL),
        (1, Act.MANIAC_SHOT),
    ],
)
def test_action_of_another_role_is_not_available(actor: int, act: Act):
    refused(ActionNotAvailable, actor, act, 10, Role.DOCTOR)


@pytest.mark.parametrize(
    ("actor", "act"),
    [(1, Act.MAFIA_SHOT), (3, Act.CHECK), (4, Act.HEAL), (5, Act.MANIAC_SHOT), (6, Act.CLOCK)],
)
def test_p7_the_dead_cannot_act(actor: int, act: Act):
    err = refused(DeadCannotAct, actor, act, 9, table_kw={"dead": [actor]})
    assert err.rule == "P7"


def test_unknown_actor_and_target_are_refused():
    refused(NotInGame, 99, Act.MAFIA_SHOT, 3)
    refused(UnknownTarget, 1, Act.MAFIA_SHOT, 99)


def test_a_spent_item_is_no_longer_usable():
    table = make_table(*STANDARD_ROLES, items=STANDARD_ITEMS, used=[Item.CLOCK])
    assert table.seat(6).usable_item is None
    assert table.seat(7).usable_item is Item.RED_BUTTON
    assert table.seat(9).usable_item is None
    assert table.holder_of(Item.CLOCK).number == 6
