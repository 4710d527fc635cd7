"""G1 GM edits of a night draft (``amend_night``) and the stored form of a night."""

from __future__ import annotations

import json

import pytest

from gameplay.rules import Act, Fact, GmEdit, NightResolution, NightStep, Why, Winner, amend_night
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
    assert amended.gm_edits == (GmEdit(died=(10,), saved=(), reason="ошибка в подсчёте"),)


def test_amend_night_removes_a_death():
    table = standard_table()
    res = run_night(table, (1, "role_strike", 3, "commissar"), (2, "mafia_shot", 9), *DUTIES_BUT_3)
    amended = amend_night(table, res, deaths=[9], reason="ролевой удар отменён ведущим")
    assert amended.deaths == (9,)
    assert amended.gm_edits == (
        GmEdit(died=(), saved=(3, 8), reason="ролевой удар отменён ведущим"),
    )
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
    assert back.gm_edits == (
        GmEdit(died=(1,), saved=(4,), reason="выстрел комиссара засчитан"),
        GmEdit(died=(4,), saved=(1,), reason="отмена"),
    )


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
    assert amended.gm_edits == (GmEdit(died=(), saved=(), reason="проверено"),)


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


def test_a_night_stored_before_facts_reads_its_sentences_as_they_are():
    """A phase stored before the explanation was facts: its lines, step titles and GM edits
    were Russian sentences; they are kept as they are, and stored back unchanged."""
    stored = json.loads(json.dumps(run_night(standard_table(), (1, "mafia_shot", 9)).as_dict()))
    old = {
        **stored,
        "steps": [
            {"number": 1, "title": "Ролевой удар", "lines": ["Ролевого удара не было."]},
            {
                "number": 4,
                "title": "Выстрелы",
                "lines": [
                    "Выстрел мафии: №1 (Мафия) стреляет в №9 (Мирный житель).",
                    "№9 (Мирный житель) погибает.",
                ],
            },
        ],
        "gm_edits": ["Ведущий: без изменений. Причина: проверено"],
    }
    res = NightResolution.from_dict(old)
    assert res.steps[1] == NightStep(
        4,
        (
            "Выстрел мафии: №1 (Мафия) стреляет в №9 (Мирный житель).",
            "№9 (Мирный житель) погибает.",
        ),
        title="Выстрелы",
    )
    assert res.gm_edits == ("Ведущий: без изменений. Причина: проверено",)
    assert res.deaths == (9,)
    again = res.as_dict()
    assert again["steps"] == old["steps"] and again["gm_edits"] == old["gm_edits"]
    # An edit of such a draft adds a structured edit after the old sentence.
    amended = amend_night(standard_table(), res, deaths=[], reason="врач успел")
    assert amended.gm_edits[1:] == (GmEdit(died=(), saved=(9,), reason="врач успел"),)
    assert NightResolution.from_dict(json.loads(json.dumps(amended.as_dict()))) == amended


def test_the_stored_night_keeps_its_facts():
    res = _busy_resolution()
    d = json.loads(json.dumps(res.as_dict(), ensure_ascii=False))
    assert d["steps"][0] == {  # 7 is a civilian: the striker dies
        "number": 1,
        "lines": [{"code": "role_strike_miss", "actor": 2, "target": 7, "guess": "doctor"}],
    }
    assert d["steps"][4]["lines"] == [{"code": "check", "actor": 3, "target": 2, "is_mafia": True}]
    assert d["gm_edits"] == [{"died": [8], "saved": [], "reason": "правка"}]
    assert Fact.from_dict(d["steps"][3]["lines"][0]) == Fact(
        Why.SHOT, act=Act.MAFIA_SHOT, actor=1, target=6
    )
