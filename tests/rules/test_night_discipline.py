"""RULES.md §6 at night: P1 (missed duty actions), P2/P3 at dawn, P4 (no mafia shot), V7."""

from __future__ import annotations

import pytest

from gameplay.rules import (
    Act,
    Item,
    NightInput,
    StrikeGiven,
    StrikeReason,
    Submission,
    Winner,
    give_strike,
    resolve_night,
    validate_modkill,
    validate_replacement,
)
from gameplay.rules.errors import InvalidCommand
from tests.rules.builders import C, K, M, T, make_table, run_night, standard_table

# Standard table: 1, 2 mafia; 3 commissar; 4 doctor; 5 maniac; 6–10 civilians.
ALL_DUTIES = ((3, "check", 1), (4, "heal", 9), (5, "maniac_shot", 10))


def first_strike(seat: int) -> StrikeGiven:
    return StrikeGiven(seat, 1, StrikeReason.MISSED_ACTION, penalty_votes=2, modkill=False)


def test_p1_every_duty_role_that_acted_gets_no_strike():
    res = run_night(standard_table(), *ALL_DUTIES)
    assert res.missed == ()
    assert res.strikes == ()


@pytest.mark.parametrize("missing", [3, 4, 5])
def test_p1_duty_role_missing_its_action_is_struck_at_dawn(missing: int):
    actions = [a for a in ALL_DUTIES if a[0] != missing]
    res = run_night(standard_table(), *actions)
    assert res.missed == (missing,)
    assert res.strikes == (first_strike(missing),)
    assert res.modkilled == ()


def test_p1_mafia_and_civilians_have_no_duty():
    res = run_night(standard_table(), *ALL_DUTIES)  # no mafia shot, civilians silent
    assert {s.seat for s in res.strikes} == set()


def test_p1_using_an_item_is_not_the_role_action():
    items = {Item.CLOCK: 6, Item.RED_BUTTON: 5, Item.BOOK: 8}
    res = run_night(
        standard_table(items=items), (3, "check", 1), (4, "heal", 9), (5, "red_button", 9)
    )
    assert res.missed == (5,)


def test_p1_a_blocked_action_is_not_a_missed_one():
    res = run_night(standard_table(), *ALL_DUTIES, (6, "clock", 5))
    assert res.blocked == (5,)
    assert res.strikes == ()


def test_p1_an_action_aimed_at_a_player_removed_during_the_night_counts_as_sent():
    # 9 was modkilled after the doctor chose them (V7): the heal does nothing but was sent.
    table = standard_table(dead=[9])
    subs = [
        Submission(3, Act.CHECK, 1),
        Submission(4, Act.HEAL, 9),
        Submission(5, Act.MANIAC_SHOT, 10),
    ]
    res = resolve_night(table, NightInput.from_submissions(1, subs))
    assert res.strikes == ()
    assert res.healed == ()


def test_p1_a_duty_role_that_dies_this_night_is_not_struck():
    res = run_night(standard_table(), (3, "check", 1), (4, "heal", 9), (1, "mafia_shot", 5))
    assert 5 in res.deaths
    assert res.strikes == ()


def test_p1_a_duty_role_dead_before_the_night_is_not_struck():
    res = run_night(standard_table(dead=[5]), (3, "check", 1), (4, "heal", 9))
    assert res.strikes == ()


def test_p3_second_strike_at_dawn_is_a_modkill():
    res = run_night(standard_table(strikes={5: 1}), (3, "check", 1), (4, "heal", 9))
    assert res.strikes == (StrikeGiven(5, 2, StrikeReason.MISSED_ACTION, 0, True),)
    assert res.modkilled == (5,)
    assert 5 not in res.deaths  # modkills are reported apart from the night's deaths


def test_p3_dawn_modkill_can_decide_the_game():
    # 1 mafia, the maniac and two civilians: the maniac's modkill leaves 1 mafia vs 1 civilian
    # after the mafia shot kills one.
    table = make_table(M, K, T, T, strikes={2: 1})
    res = run_night(table, (1, "mafia_shot", 3))
    assert res.deaths == (3,)
    assert res.modkilled == (2,)
    assert res.winner is Winner.MAFIA


def test_p4_no_mafia_shot_is_flagged_but_not_struck():
    res = run_night(standard_table(), *ALL_DUTIES)
    assert res.no_mafia_shot
    assert all(s.seat not in (1, 2) for s in res.strikes)


def test_p4_a_mafia_shot_clears_the_flag():
    res = run_night(standard_table(), *ALL_DUTIES, (2, "mafia_shot", 9))
    assert not res.no_mafia_shot


def test_p4_a_shot_from_a_mafia_member_removed_during_the_night_is_no_shot():
    table = standard_table(dead=[1])
    res = resolve_night(table, NightInput(1, mafia_shot=Submission(1, Act.MAFIA_SHOT, 9)))
    assert res.no_mafia_shot
    assert res.deaths == ()


def test_v7_submissions_of_a_player_removed_during_the_night_are_void():
    table = standard_table(dead=[5, 7])  # maniac and the red button holder modkilled
    subs = [
        Submission(5, Act.MANIAC_SHOT, 9),
        Submission(7, Act.RED_BUTTON, 10),
        Submission(3, Act.CHECK, 1),
        Submission(4, Act.HEAL, 2),
    ]
    res = resolve_night(table, NightInput.from_submissions(1, subs))
    assert res.deaths == ()
    assert res.spent_items == ()


def test_v7_role_strike_at_a_removed_player_does_nothing_but_is_spent():
    table = standard_table(dead=[3])
    strike = Submission(1, Act.ROLE_STRIKE, 3, guess=None)
    res = resolve_night(table, NightInput(1, role_strike=strike))
    assert res.deaths == ()
    assert res.role_strike_spent


def test_p2_p3_give_strike_counts_from_the_seat():
    seat = standard_table().seat(9)
    assert give_strike(seat, StrikeReason.MISSED_VOTE) == StrikeGiven(
        9, 1, StrikeReason.MISSED_VOTE, 2, False
    )
    struck = standard_table(strikes={9: 1}).seat(9)
    assert give_strike(struck, StrikeReason.MANUAL).modkill


def test_strike_as_dict_round_trip():
    strike = StrikeGiven(9, 1, StrikeReason.MISSED_ACTION, 2, False)
    assert StrikeGiven.from_dict(strike.as_dict()) == strike


def test_p5_p6_only_living_players_can_be_modkilled_or_replaced():
    table = make_table(M, C, T, T, dead=[4])
    assert validate_modkill(table, 3).number == 3
    assert validate_replacement(table, 2).number == 2
    with pytest.raises(InvalidCommand):
        validate_modkill(table, 4)
    with pytest.raises(InvalidCommand):
        validate_replacement(table, 4)
