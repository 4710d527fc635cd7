"""RULES.md §7: the first of four conditions that holds decides the game."""

from __future__ import annotations

import pytest

from gameplay.rules import Winner, decide_winner
from tests.rules.builders import C, D, K, M, T, make_table, run_night


def living(*roles) -> Winner | None:
    return decide_winner(make_table(*roles))


def test_s7_1_nobody_alive_is_a_draw():
    assert decide_winner(make_table(M, K, T, dead=[1, 2, 3])) is Winner.DRAW


@pytest.mark.parametrize("roles", [(T,), (C, D, T), (C,), (D, T, T, T)])
def test_s7_2_no_mafia_and_no_maniac_is_a_town_win(roles):
    assert living(*roles) is Winner.TOWN


@pytest.mark.parametrize(
    "roles",
    [
        (K,),  # the maniac alone
        (K, T),  # M + T = 1
        (K, C),
        (K, M),  # maniac vs 1 mafia + 0 town: rule 3 comes before rule 4
    ],
)
def test_s7_3_maniac_with_at_most_one_other_wins(roles):
    assert living(*roles) is Winner.MANIAC


@pytest.mark.parametrize(
    "roles",
    [
        (M, T),
        (M, M, T, T),
        (M, M, T, K),  # M = 2 >= T + K = 2
        (M, M, M, C, D, T),
        (M,),  # the last survivor is mafia
        (M, M),
    ],
)
def test_s7_4_mafia_at_parity_with_everyone_else_wins(roles):
    assert living(*roles) is Winner.MAFIA


@pytest.mark.parametrize(
    "roles",
    [
        (M, T, T),
        (M, K, T),  # M + T = 2, and M = 1 < T + K = 2
        (M, M, K, T, T),
        (M, M, M, M, M, M, C, D, K) + (T,) * 17,
        (K, T, T),
    ],
)
def test_s7_game_goes_on_when_no_condition_holds(roles):
    assert living(*roles) is None


def test_s7_the_dead_do_not_count():
    table = make_table(M, M, T, T, T, T, dead=[3, 4, 5])
    assert decide_winner(table) is Winner.MAFIA
    table = make_table(M, K, T, T, dead=[1, 4])
    assert decide_winner(table) is Winner.MANIAC


def test_s7_mafia_and_maniac_killing_each_other_last_is_a_draw():
    table = make_table(M, K, T, dead=[3])
    res = run_night(table, (1, "mafia_shot", 2), (2, "maniac_shot", 1))
    assert res.deaths == (1, 2)
    assert res.winner is Winner.DRAW


def test_s7_checked_after_a_night():
    table = make_table(M, C, T, T)
    res = run_night(table, (1, "mafia_shot", 3), (2, "commissar_shot", 1))
    assert res.deaths == (1, 3)
    assert res.winner is Winner.TOWN


def test_s7_night_win_for_the_maniac():
    table = make_table(M, K, T, T)
    res = run_night(table, (1, "mafia_shot", 3), (2, "maniac_shot", 4))
    assert res.winner is Winner.MANIAC


def test_s7_winners_have_russian_titles():
    titles = {w: w.title for w in Winner}
    assert titles[Winner.TOWN] and titles[Winner.DRAW]
    assert len(set(titles.values())) == 4
