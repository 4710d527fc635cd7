"""G1 GM edits of a night draft (``amend_night``) and the stored form of a night."""

from __future__ import annotations

import json

import pytest

from gameplay.rules import NightResolution, Winner, amend_night
from tests.rules.builders import C, D, K, M, T, make_table, run_night, standard_table

DUTIES_BUT_3 = ((4, "heal", 10), (5, "maniac_shot", 8))


def test_amend_night_adds_a_death_and_logs_the_reason():
    table = standard_table()
    res = run_night(
        table, (1, "mafia_shot", 9), (3, "check", 1), (4, "heal", 2), (5, "maniac_shot", 6)
    )
    assert res.deaths == (6, 9)
    amended = amend_night(table, res, deaths=[6, 9, 10], reason="ошибка в подсчёте")
    assert amended.deaths == (6, 9, 10)
    assert 10 in amended.step4_deaths
    assert len(amended.gm_edits) == 1
    assert "ошибка в подсчёте" in amended.gm_edits[0]
    assert "№10" in amended.gm_edits[0]


def test_amend_night_removes_a_death():
    table = standard_table()
    res = run_night(table, (1, "role_strike", 3, "commissar"), (2, "mafia_shot", 9), *DUTIES_BUT_3)
    amended = amend_night(table, res, deaths=[9], reason="ролевой удар отменён ведущим")
    assert amended.deaths == (9,)
    assert amended.step1_deaths == ()
    # The commissar is alive again after the edit and had sent nothing: now struck (P1).
    assert [s.seat for s in amended.strikes] == [3]


def test_amend_night_recomputes_the_winner():
    table = make_table(M, C, D, T, T)
    res = run_night(table, (1, "mafia_shot", 4), (2, "check", 1), (3, "heal", 5))
    assert res.winner is None
    amended = amend_night(table, res, deaths=[1], reason="выстрел комиссара засчитан")
    assert amended.winner is Winner.TOWN
    back = amend_night(table, amended, deaths=[4], reason="отмена")
    assert back.winner is None
    assert len(back.gm_edits) == 2


def test_amend_night_recomputes_dawn_strikes():
    table = make_table(M, M, C, D, K, T, T, T, T, T)
    res = run_night(table, (1, "mafia_shot", 9), (3, "check", 1), (4, "heal", 2))
    assert [s.seat for s in res.strikes] == [5]  # the maniac missed
    amended = amend_night(table, res, deaths=[5, 9], reason="маньяк погибает")
    assert amended.strikes == ()  # the dead carry no strikes


def test_amend_night_no_strikes_when_the_edit_ends_the_game():
    table = make_table(M, C, D, T, strikes={3: 1})
    res = run_night(table, (1, "mafia_shot", 4), (2, "check", 1))
    # The doctor missed a second time: modkilled at dawn, which leaves 1 mafia vs 1 (§7.4).
    assert res.modkilled == (3,)
    assert res.winner is Winner.MAFIA
    amended = amend_night(table, res, deaths=[1], reason="мафия погибает")
    assert amended.winner is Winner.TOWN
    assert amended.modkilled == ()
    assert amended.strikes == ()


def test_amend_night_refuses_a_dead_seat():
    table = standard_table(dead=[10])
    res = run_night(table, (1, "mafia_shot", 9))
    with pytest.raises(ValueError):
        amend_night(table, res, deaths=[10], reason="x")


def test_amend_night_without_changes_still_logs():
    table = standard_table()
    res = run_night(table, (1, "mafia_shot", 9))
    amended = amend_night(table, res, deaths=[9], reason="проверено")
    assert amended.deaths == res.deaths
    assert amended.gm_edits and "проверено" in amended.gm_edits[0]


# --- stored form ----------------------------------------------------------------------------


def _busy_resolution() -> NightResolution:
    table = make_table(M, M, C, D, K, T, T, T, strikes={5: 1})
    res = run_night(
        table,
        (1, "mafia_shot", 6),
        (2, "role_strike", 7, "doctor"),
        (3, "check", 2),
        (4, "heal", 6),
    )
    return amend_night(table, res, deaths=[2, 8], reason="правка")


@pytest.mark.parametrize(
    "res",
    [
        _busy_resolution(),
        run_night(standard_table()),
        run_night(make_table(M, K, T, dead=[3]), (1, "mafia_shot", 2), (2, "maniac_shot", 1)),
        run_night(make_table(M, C, D, T, T), (1, "mafia_shot", 5), (2, "check", 1), (3, "heal", 4)),
    ],
    ids=["busy", "empty", "draw", "check"],
)
def test_night_resolution_as_dict_from_dict_round_trip(res: NightResolution):
    stored = json.loads(json.dumps(res.as_dict(), ensure_ascii=False))
    assert NightResolution.from_dict(stored) == res


def test_night_resolution_as_dict_lists_deaths_and_modkills_apart():
    res = _busy_resolution()
    d = res.as_dict()
    assert d["deaths"] == [2, 8]
    assert d["modkilled"] == [5]
    assert d["winner"] is None
    assert d["checks"] == [{"commissar": 3, "target": 2, "is_mafia": True}]
