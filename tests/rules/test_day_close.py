"""RULES.md §3 closing a day: V4/P2 strikes, P3 modkills, V5 the execution, V7, §7 after it."""

from __future__ import annotations

from gameplay.rules import (
    PENALTY_VOTES,
    Ballot,
    DayInput,
    Fact,
    StrikeGiven,
    StrikeReason,
    Why,
    Winner,
    close_day,
)
from tests.rules.builders import C, D, K, M, T, make_table

EIGHT = (M, M, C, D, K, T, T, T)


def ballots(*pairs: tuple[int, int]) -> dict[int, Ballot]:
    return {voter: Ballot(voter, target) for voter, target in pairs}


def test_p2_first_strike_is_worth_two_votes():
    assert PENALTY_VOTES == 2


def test_v4_p2_missing_vote_gives_a_strike_and_two_votes_in_the_same_tally():
    table = make_table(*EIGHT)
    votes = ballots((1, 6), (2, 6), (3, 7), (4, 7), (5, 8), (6, 5), (7, 5))  # 8 did not vote
    result = close_day(table, DayInput(1, votes))
    assert result.strikes == (
        StrikeGiven(
            seat=8, count=1, reason=StrikeReason.MISSED_VOTE, penalty_votes=2, modkill=False
        ),
    )
    assert result.modkilled == ()
    assert result.penalties == {8: 2}
    assert result.tally == {5: 2, 6: 2, 7: 2, 8: 3}
    # The two penalty votes make 8 the strict leader: penalty votes count (V5).
    assert result.executed == 8
    assert result.winner is None


def test_p3_second_strike_is_a_modkill_before_the_tally_and_votes_for_them_are_dropped():
    table = make_table(*EIGHT, strikes={8: 1})
    votes = ballots((1, 8), (2, 8), (3, 8), (4, 8), (5, 6), (6, 7), (7, 6))
    result = close_day(table, DayInput(2, votes))
    assert result.strikes == (
        StrikeGiven(
            seat=8, count=2, reason=StrikeReason.MISSED_VOTE, penalty_votes=0, modkill=True
        ),
    )
    assert result.modkilled == (8,)
    assert 8 not in result.tally
    assert result.tally == {6: 2, 7: 1}
    assert result.executed == 6


def test_v5_strict_plurality_is_executed():
    table = make_table(*EIGHT)
    votes = ballots((1, 6), (2, 6), (3, 6), (4, 7), (5, 7), (6, 7), (7, 1), (8, 6))
    result = close_day(table, DayInput(1, votes))
    assert result.strikes == ()
    assert result.tally == {1: 1, 6: 4, 7: 3}
    assert result.executed == 6


def test_v5_tie_for_the_most_votes_executes_nobody():
    table = make_table(*EIGHT)
    votes = ballots((1, 6), (2, 6), (3, 6), (4, 7), (5, 7), (6, 7), (7, 1), (8, 1))
    result = close_day(table, DayInput(1, votes))
    assert result.tally == {1: 2, 6: 3, 7: 3}
    assert result.executed is None
    assert result.winner is None
    assert result.explanation == (Fact(Why.TIE, seats=(6, 7), votes=3),)


def test_v5_tie_made_by_penalty_votes_executes_nobody():
    table = make_table(*EIGHT)
    votes = ballots((1, 6), (2, 6), (3, 6), (4, 8), (5, 7), (6, 7), (7, 1))  # 8 missed
    result = close_day(table, DayInput(1, votes))
    assert result.tally == {1: 1, 6: 3, 7: 2, 8: 3}
    assert result.executed is None


def test_v5_no_votes_at_all_executes_nobody():
    table = make_table(*EIGHT)
    result = close_day(table, DayInput(1, {}, excused=frozenset(range(1, 9))))
    assert result.tally == {}
    assert result.executed is None
    assert result.strikes == ()


def test_v4_everybody_missing_gives_everybody_a_strike_and_a_tie():
    table = make_table(*EIGHT)
    result = close_day(table, DayInput(1, {}))
    assert [s.seat for s in result.strikes] == list(range(1, 9))
    assert result.tally == dict.fromkeys(range(1, 9), 2)
    assert result.executed is None
    assert result.explanation[-1] == Fact(Why.TIE, seats=tuple(range(1, 9)), votes=2)


def test_p2_penalty_votes_from_a_missed_night_action_count_in_the_next_day():
    table = make_table(*EIGHT)
    votes = ballots((1, 5), (2, 6), (3, 6), (4, 7), (5, 7), (6, 1), (7, 2), (8, 3))
    result = close_day(table, DayInput(2, votes, carried_penalties={5: 2}))
    assert result.strikes == ()
    assert result.tally == {1: 1, 2: 1, 3: 1, 5: 3, 6: 2, 7: 2}
    assert result.penalties == {5: 2}
    assert result.executed == 5


def test_p2_carried_penalty_votes_of_a_dead_player_are_dropped():
    table = make_table(*EIGHT, dead=[5])
    votes = ballots((1, 6), (2, 6), (3, 7), (4, 7), (6, 1), (7, 2), (8, 6))
    result = close_day(table, DayInput(2, votes, carried_penalties={5: 2}))
    assert 5 not in result.tally
    assert result.penalties == {}
    assert result.executed == 6


def test_v7_voters_excused_after_a_modkill_are_not_struck():
    # 8 was modkilled during the day; 6 and 7 had voted for them and did not vote again.
    table = make_table(*EIGHT, dead=[8])
    votes = ballots((1, 6), (2, 6), (3, 7), (4, 1), (5, 1))
    result = close_day(table, DayInput(3, votes, excused=frozenset({6, 7})))
    assert result.strikes == ()
    assert result.tally == {1: 2, 6: 2, 7: 1}
    assert result.executed is None


def test_v7_votes_of_and_for_a_player_removed_during_the_day_are_void():
    table = make_table(*EIGHT, dead=[8])
    # The service has not dropped them: close_day must still ignore them.
    votes = ballots((1, 6), (2, 7), (3, 6), (4, 1), (5, 8), (6, 8), (7, 8), (8, 7))
    result = close_day(table, DayInput(3, votes))
    assert result.tally == {1: 1, 6: 2, 7: 1}
    assert result.executed == 6
    assert result.strikes == ()


def test_p7_dead_players_are_not_struck_for_not_voting():
    table = make_table(*EIGHT, dead=[7, 8])
    votes = ballots((1, 6), (2, 6), (3, 5), (4, 5), (5, 1), (6, 1))
    result = close_day(table, DayInput(2, votes))
    assert result.strikes == ()


def test_s7_execution_of_the_last_mafia_wins_for_the_town():
    table = make_table(M, C, T, T)
    votes = ballots((1, 2), (2, 1), (3, 1), (4, 1))
    result = close_day(table, DayInput(1, votes))
    assert result.executed == 1
    assert result.winner is Winner.TOWN


def test_s7_execution_that_leaves_mafia_at_parity_wins_for_the_mafia():
    table = make_table(M, T, T, T, dead=[4])
    votes = ballots((1, 2), (2, 3), (3, 2))
    result = close_day(table, DayInput(3, votes))
    assert result.executed == 2
    assert result.winner is Winner.MAFIA


def test_s7_modkills_that_decide_the_game_stop_the_execution():
    table = make_table(M, T, T, T, strikes={1: 1})
    votes = ballots((2, 3), (3, 4), (4, 3))  # 3 leads, but the mafia's modkill ends the game
    result = close_day(table, DayInput(2, votes))
    assert result.modkilled == (1,)
    assert result.winner is Winner.TOWN
    assert result.executed is None
    assert result.explanation == (Fact(Why.VOTE_MODKILL, seat=1), Fact(Why.MODKILLS_DECIDE))


def test_s7_no_execution_and_no_modkill_decides_nothing():
    table = make_table(*EIGHT)
    votes = ballots((1, 6), (2, 7), (3, 6), (4, 7), (5, 1), (6, 1), (7, 2), (8, 2))
    result = close_day(table, DayInput(1, votes))
    assert result.executed is None
    assert result.winner is None


def test_day_result_explains_itself_in_facts_and_serialises():
    table = make_table(*EIGHT, strikes={8: 1})
    votes = ballots((1, 6), (2, 6), (3, 7), (4, 7), (5, 6), (6, 7))  # 7 and 8 missed
    result = close_day(table, DayInput(2, votes, carried_penalties={3: 2}))
    assert result.explanation == (
        Fact(Why.PENALTY_CARRIED, seat=3, votes=2),
        Fact(Why.VOTE_STRIKE, seat=7, votes=2),
        Fact(Why.VOTE_MODKILL, seat=8),
        Fact(Why.EXECUTION, seat=7, votes=5),
    )
    d = result.as_dict()
    assert d["explanation"] == [
        {"code": "penalty_carried", "seat": 3, "votes": 2},
        {"code": "vote_strike", "seat": 7, "votes": 2},
        {"code": "vote_modkill", "seat": 8},
        {"code": "execution", "seat": 7, "votes": 5},
    ]
    assert d["executed"] == result.executed
    assert d["modkilled"] == [8]
    assert d["tally"] == {str(k): v for k, v in result.tally.items()}
    assert [s["seat"] for s in d["strikes"]] == [7, 8]


def test_a_day_without_votes_or_penalties_says_so():
    table = make_table(*EIGHT)
    result = close_day(table, DayInput(3, {}, excused=frozenset(range(1, 9))))
    assert result.executed is None
    assert result.explanation == (Fact(Why.NO_VOTES),)
