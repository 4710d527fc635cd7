"""RULES.md §5 the five steps of a night, each on its own and together.

Standard table: 1, 2 mafia; 3 commissar; 4 doctor; 5 maniac; 6–10 civilians; clock at 6, red
button at 7, book at 8. Expected outcomes below are read off RULES.md §5, not off the code.
"""

from __future__ import annotations

import pytest

from gameplay.rules import (
    Act,
    CheckResult,
    Fact,
    Item,
    NightInput,
    Role,
    Submission,
    Why,
    resolve_night,
)
from tests.rules.builders import run_night, standard_table

CLOCK_AT_DOCTOR = {Item.CLOCK: 4, Item.RED_BUTTON: 7, Item.BOOK: 8}


def alive_after(res, table) -> set[int]:
    return set(table.alive_numbers) - set(res.deaths)


# --- step 1: role strike --------------------------------------------------------------------


@pytest.mark.parametrize(("target", "guess"), [(3, "commissar"), (4, "doctor"), (5, "maniac")])
def test_step1_role_strike_right_guess_kills_the_target(target: int, guess: str):
    res = run_night(standard_table(), (1, "role_strike", target, guess))
    assert res.step1_deaths == (target,)
    assert res.deaths == (target,)
    assert res.role_strike_spent


@pytest.mark.parametrize(("target", "guess"), [(3, "doctor"), (9, "maniac"), (2, "commissar")])
def test_step1_role_strike_wrong_guess_kills_the_sender(target: int, guess: str):
    res = run_night(standard_table(), (1, "role_strike", target, guess))
    assert res.step1_deaths == (1,)
    assert res.deaths == (1,)
    assert res.role_strike_spent


def test_step1_the_last_role_strike_sent_stands():
    res = run_night(
        standard_table(), (1, "role_strike", 3, "doctor"), (2, "role_strike", 3, "commissar")
    )
    assert res.deaths == (3,)


def test_step1_no_role_strike_spends_nothing():
    res = run_night(standard_table(), (1, "mafia_shot", 9))
    assert not res.role_strike_spent
    assert res.step1_deaths == ()


def test_step1_role_strike_cannot_be_healed():
    res = run_night(
        standard_table(),
        (1, "role_strike", 3, "commissar"),
        (4, "heal", 3),
        (8, "book", 3),
    )
    assert res.deaths == (3,)


def test_step1_sender_of_a_wrong_guess_cannot_be_healed():
    res = run_night(standard_table(), (2, "role_strike", 9, "doctor"), (4, "heal", 2))
    assert res.deaths == (2,)


def test_step1_role_strike_cannot_be_blocked():
    res = run_night(standard_table(), (1, "role_strike", 5, "maniac"), (6, "clock", 1))
    assert res.blocked == (1,)
    assert res.deaths == (5,)


# --- step 2: clock --------------------------------------------------------------------------


def test_step2_clock_blocks_the_maniac_shot():
    table = standard_table()
    res = run_night(table, (5, "maniac_shot", 9), (6, "clock", 5))
    assert res.blocked == (5,)
    assert res.deaths == ()


def test_step2_clock_blocks_the_heal():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (4, "heal", 9), (6, "clock", 4))
    assert res.blocked == (4,)
    assert res.deaths == (9,)
    assert 9 not in res.healed


def test_step2_clock_blocks_the_commissar_shot_and_check():
    shot = run_night(standard_table(), (3, "commissar_shot", 1), (6, "clock", 3))
    assert shot.deaths == ()
    check = run_night(standard_table(), (3, "check", 1), (6, "clock", 3))
    assert check.checks == ()


def test_step2_clock_blocks_item_use_and_the_item_is_still_spent():
    res = run_night(standard_table(), (7, "red_button", 9), (6, "clock", 7))
    assert res.deaths == ()
    assert Item.RED_BUTTON in res.spent_items
    book = run_night(standard_table(), (1, "mafia_shot", 9), (8, "book", 9), (6, "clock", 8))
    assert book.deaths == (9,)
    assert Item.BOOK in book.spent_items


def test_step2_clock_on_the_shooter_means_no_mafia_shot():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (6, "clock", 1))
    assert res.blocked == (1,)
    assert res.deaths == ()


def test_step2_clock_on_another_mafia_member_does_not_stop_the_shot():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (6, "clock", 2))
    assert res.blocked == (2,)
    assert res.deaths == (9,)


def test_step2_the_shooter_is_whoever_sent_the_standing_shot():
    # 2 sent first, 1 replaced it: 1 is the shooter, blocking 2 changes nothing.
    res = run_night(standard_table(), (2, "mafia_shot", 9), (1, "mafia_shot", 10), (6, "clock", 2))
    assert res.deaths == (10,)
    res = run_night(standard_table(), (2, "mafia_shot", 9), (1, "mafia_shot", 10), (6, "clock", 1))
    assert res.deaths == ()


def test_step2_clock_blocks_every_action_of_its_target():
    items = {Item.CLOCK: 6, Item.RED_BUTTON: 1, Item.BOOK: 8}
    res = run_night(
        standard_table(items=items),
        (1, "mafia_shot", 9),
        (1, "red_button", 10),
        (6, "clock", 1),
    )
    assert res.deaths == ()
    assert Item.RED_BUTTON in res.spent_items


def test_step2_clock_holder_killed_in_step1_blocks_nobody():
    res = run_night(
        standard_table(items=CLOCK_AT_DOCTOR),
        (1, "role_strike", 4, "doctor"),
        (4, "clock", 5),
        (5, "maniac_shot", 9),
    )
    assert res.blocked == ()
    assert res.deaths == (4, 9)


def test_step2_clock_of_a_mafia_member_who_missed_a_role_strike_blocks_nobody():
    items = {Item.CLOCK: 2, Item.RED_BUTTON: 7, Item.BOOK: 8}
    res = run_night(
        standard_table(items=items),
        (2, "role_strike", 9, "commissar"),
        (2, "clock", 5),
        (5, "maniac_shot", 10),
    )
    assert res.blocked == ()
    assert res.deaths == (2, 10)


# --- step 1 deaths perform nothing later ----------------------------------------------------


def test_shooter_who_dies_of_a_missed_role_strike_fires_no_mafia_shot():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (1, "role_strike", 10, "doctor"))
    assert res.deaths == (1,)


def test_mafia_shot_still_happens_when_another_member_missed_the_role_strike():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (2, "role_strike", 10, "doctor"))
    assert res.deaths == (2, 9)


def test_doctor_killed_in_step1_heals_nobody():
    res = run_night(
        standard_table(),
        (1, "role_strike", 4, "doctor"),
        (4, "heal", 9),
        (2, "mafia_shot", 9),
    )
    assert res.deaths == (4, 9)
    assert res.healed == ()


def test_maniac_killed_in_step1_does_not_shoot():
    res = run_night(standard_table(), (1, "role_strike", 5, "maniac"), (5, "maniac_shot", 9))
    assert res.deaths == (5,)


def test_commissar_killed_in_step1_neither_shoots_nor_checks():
    shot = run_night(standard_table(), (1, "role_strike", 3, "commissar"), (3, "commissar_shot", 2))
    assert shot.deaths == (3,)
    check = run_night(standard_table(), (1, "role_strike", 3, "commissar"), (3, "check", 2))
    assert check.checks == ()


def test_item_holder_killed_in_step1_uses_no_item():
    items = {Item.CLOCK: 6, Item.RED_BUTTON: 5, Item.BOOK: 3}
    res = run_night(
        standard_table(items=items),
        (1, "role_strike", 5, "maniac"),
        (5, "red_button", 9),
    )
    assert res.deaths == (5,)
    book = run_night(
        standard_table(items=items),
        (1, "role_strike", 3, "commissar"),
        (3, "book", 9),
        (2, "mafia_shot", 9),
    )
    assert book.deaths == (3, 9)


# --- step 3: heals ---------------------------------------------------------------------------


def test_step3_doctor_heal_saves_the_mafia_target():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (4, "heal", 9))
    assert res.deaths == ()
    assert res.healed == (9,)
    assert res.saved == (9,)
    assert res.heal_target == 9


def test_step3_book_saves_its_target():
    res = run_night(standard_table(), (5, "maniac_shot", 10), (8, "book", 10))
    assert res.deaths == ()
    assert res.saved == (10,)
    assert res.spent_items == (Item.BOOK,)
    assert res.heal_target is None  # the book is not the doctor's heal


def test_step3_doctor_can_heal_self():
    res = run_night(standard_table(), (1, "mafia_shot", 4), (4, "heal", 4))
    assert res.deaths == ()


def test_step3_book_holder_can_heal_self():
    res = run_night(standard_table(), (1, "mafia_shot", 8), (8, "book", 8))
    assert res.deaths == ()


def test_step3_heal_saves_from_every_kill_at_once():
    res = run_night(
        standard_table(),
        (1, "mafia_shot", 9),
        (5, "maniac_shot", 9),
        (3, "commissar_shot", 9),
        (7, "red_button", 9),
        (4, "heal", 9),
    )
    assert res.deaths == ()
    assert res.saved == (9,)


def test_step3_heal_protects_only_its_target():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (4, "heal", 10), (8, "book", 2))
    assert res.deaths == (9,)
    assert res.healed == (2, 10)
    assert res.saved == ()


def test_step3_heal_and_book_together_each_protect_their_target():
    res = run_night(
        standard_table(),
        (1, "mafia_shot", 9),
        (5, "maniac_shot", 10),
        (4, "heal", 9),
        (8, "book", 10),
    )
    assert res.deaths == ()
    assert res.saved == (9, 10)


# --- step 4: kills, all at once -----------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [(1, "mafia_shot", 9), (5, "maniac_shot", 9), (3, "commissar_shot", 9), (7, "red_button", 9)],
)
def test_step4_each_kill_kills_an_unhealed_target(action: tuple):
    res = run_night(standard_table(), action)
    assert res.step4_deaths == (9,)
    assert res.deaths == (9,)


def test_step4_maniac_and_commissar_shooting_each_other_both_die():
    res = run_night(standard_table(), (5, "maniac_shot", 3), (3, "commissar_shot", 5))
    assert res.deaths == (3, 5)


def test_step4_mafia_shooter_and_maniac_shooting_each_other_both_die():
    res = run_night(standard_table(), (1, "mafia_shot", 5), (5, "maniac_shot", 1))
    assert res.deaths == (1, 5)


def test_step4_red_button_holder_shot_the_same_night_still_kills():
    res = run_night(standard_table(), (1, "mafia_shot", 7), (7, "red_button", 9))
    assert res.deaths == (7, 9)


def test_step4_several_kills_on_one_target_are_one_death():
    res = run_night(standard_table(), (1, "mafia_shot", 9), (5, "maniac_shot", 9))
    assert res.step4_deaths == (9,)


def test_step4_mafia_may_shoot_one_of_their_own():
    res = run_night(standard_table(), (2, "mafia_shot", 1))
    assert res.deaths == (1,)


def test_step4_a_role_strike_victim_is_not_killed_twice():
    res = run_night(standard_table(), (1, "role_strike", 3, "commissar"), (2, "mafia_shot", 3))
    assert res.step1_deaths == (3,)
    assert res.step4_deaths == ()


def test_items_are_extra_to_the_role_action():
    items = {Item.CLOCK: 6, Item.RED_BUTTON: 3, Item.BOOK: 4}
    res = run_night(
        standard_table(items=items),
        (3, "check", 1),
        (3, "red_button", 9),
        (1, "mafia_shot", 10),
        (5, "maniac_shot", 6),
        (4, "heal", 10),
        (4, "book", 6),
    )
    assert res.deaths == (9,)
    assert res.checks == (CheckResult(3, 1, True),)
    assert res.saved == (6, 10)
    assert set(res.spent_items) == {Item.RED_BUTTON, Item.BOOK}


# --- step 5: check --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "is_mafia"), [(1, True), (2, True), (4, False), (5, False), (9, False)]
)
def test_step5_check_reads_mafia_only_for_mafia_members(target: int, is_mafia: bool):
    res = run_night(standard_table(), (3, "check", target))
    assert res.checks == (CheckResult(commissar=3, target=target, is_mafia=is_mafia),)
    assert res.steps[4].lines == (Fact(Why.CHECK, actor=3, target=target, is_mafia=is_mafia),)


def test_step5_maniac_reads_not_mafia():
    res = run_night(standard_table(), (3, "check", 5))
    assert res.checks[0].is_mafia is False


def test_step5_commissar_killed_in_step4_gets_no_answer():
    res = run_night(standard_table(), (1, "mafia_shot", 3), (3, "check", 1))
    assert res.deaths == (3,)
    assert res.checks == ()


def test_step5_commissar_healed_in_step3_gets_the_answer():
    res = run_night(standard_table(), (1, "mafia_shot", 3), (4, "heal", 3), (3, "check", 1))
    assert res.deaths == ()
    assert res.checks == (CheckResult(3, 1, True),)


def test_step5_blocked_commissar_gets_no_answer():
    res = run_night(standard_table(), (3, "check", 2), (6, "clock", 3))
    assert res.checks == ()


def test_step5_the_commissar_check_and_shot_replace_each_other():
    res = run_night(standard_table(), (3, "commissar_shot", 1), (3, "check", 2))
    assert res.deaths == ()
    assert res.checks == (CheckResult(3, 2, True),)
    res = run_night(standard_table(), (3, "check", 2), (3, "commissar_shot", 1))
    assert res.deaths == (1,)
    assert res.checks == ()


# --- explanation ---------------------------------------------------------------------------


def test_explanation_of_a_quiet_night_says_each_step_did_nothing():
    res = run_night(standard_table())
    assert [(s.number, s.lines) for s in res.steps] == [
        (1, (Fact(Why.NO_ROLE_STRIKE),)),
        (2, (Fact(Why.NO_CLOCK),)),
        (3, (Fact(Why.NO_HEAL),)),
        (4, (Fact(Why.NO_SHOTS),)),
        (5, (Fact(Why.NO_CHECK),)),
    ]
    assert all(not s.title for s in res.steps)  # the panel names the steps


def test_explanation_states_every_action_of_a_busy_night_and_what_it_did():
    res = run_night(
        standard_table(),
        (1, "role_strike", 4, "doctor"),
        (2, "mafia_shot", 9),
        (3, "check", 1),
        (4, "heal", 9),
        (5, "maniac_shot", 3),
        (6, "clock", 5),
        (7, "red_button", 10),
        (8, "book", 10),
    )
    assert [s.number for s in res.steps] == [1, 2, 3, 4, 5]
    assert [s.lines for s in res.steps] == [
        (Fact(Why.ROLE_STRIKE_HIT, actor=1, target=4, guess=Role.DOCTOR),),
        (Fact(Why.CLOCK_BLOCKS, actor=6, target=5),),
        (
            Fact(Why.ACTOR_DEAD, act=Act.HEAL, actor=4, target=9),  # the doctor died in step 1
            Fact(Why.HEAL, act=Act.BOOK, actor=8, target=10),
        ),
        (
            Fact(Why.SHOT, act=Act.MAFIA_SHOT, actor=2, target=9),
            Fact(Why.ACTOR_BLOCKED, act=Act.MANIAC_SHOT, actor=5, target=3),
            Fact(Why.SHOT, act=Act.RED_BUTTON, actor=7, target=10),
            Fact(Why.KILLED, seat=9),
            Fact(Why.SAVED, seat=10),
        ),
        (Fact(Why.CHECK, actor=3, target=1, is_mafia=True),),
    ]


def test_explanation_of_a_missed_role_strike_and_actions_at_a_seat_removed_in_the_night():
    sent = run_night(
        standard_table(), (2, "role_strike", 3, "doctor"), (6, "clock", 9), (1, "mafia_shot", 9)
    )
    assert sent.deaths == (2, 9)
    night = NightInput.from_submissions(
        1,
        [
            Submission(2, Act.ROLE_STRIKE, 3, Role.DOCTOR),
            Submission(6, Act.CLOCK, 9),
            Submission(1, Act.MAFIA_SHOT, 9),
        ],
    )
    res = resolve_night(standard_table(dead=[9]), night)  # 9 modkilled during the night
    assert res.steps[0].lines == (Fact(Why.ROLE_STRIKE_MISS, actor=2, target=3, guess=Role.DOCTOR),)
    assert res.steps[1].lines == (Fact(Why.CLOCK_TARGET_GONE, actor=6, target=9),)
    assert res.steps[3].lines == (Fact(Why.TARGET_GONE, act=Act.MAFIA_SHOT, actor=1, target=9),)


def test_an_empty_night_changes_nothing():
    table = standard_table()
    res = resolve_night(table, NightInput(number=1))
    assert res.deaths == ()
    assert res.blocked == () and res.healed == () and res.checks == ()
    assert res.spent_items == ()
    assert alive_after(res, table) == set(range(1, 11))
