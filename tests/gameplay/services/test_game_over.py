"""gameplay.services.game_over: the facts of the end-of-game post (the composition, every night
action that stood, the GM's decisions from the log) and the post they make."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor, Game
from gameplay.rules import Act, Role, RoleCounts, Winner
from gameplay.services.common import players
from gameplay.services.game_over import counts, decisions, game_over_post, night_log
from tests.gameplay.factories import act, civilians, make_game, number_of, seat, to_night, vk_id
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

COUNTS = RoleCounts(mafia=3, commissar=1, doctor=0, maniac=1, civilian=5)


def _night_one() -> int:
    g = make_game(n=10, counts=COUNTS, start=True)
    to_night(g)
    return g.pk


_night_one_rows = module_rows(_night_one)


@pytest.fixture
def game(_night_one_rows: int) -> Game:
    """Ten players (three mafia, no doctor), Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def test_the_composition_is_each_role_and_how_many_the_deal_gave_it(game: Game) -> None:
    assert counts(game=game) == [
        {"role": "mafia", "n": 3},
        {"role": "commissar", "n": 1},
        {"role": "doctor", "n": 0},
        {"role": "maniac", "n": 1},
        {"role": "civilian", "n": 5},
    ]


def test_the_night_log_lists_the_actions_that_stood_in_order(game: Game) -> None:
    first, second = seat(game, Role.MAFIA), seat(game, Role.MAFIA, 1)
    commissar, maniac = seat(game, Role.COMMISSAR), seat(game, Role.MANIAC)
    a, b, c = civilians(game)[:3]
    act(game, commissar, Act.CHECK, a)
    act(game, first, Act.MAFIA_SHOT, a)
    act(game, maniac, Act.MANIAC_SHOT, c)
    act(game, second, Act.MAFIA_SHOT, b)  # replaces the team's first shot
    act(game, first, Act.ROLE_STRIKE, c, guess=Role.COMMISSAR)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    log = night_log(game=game, seats=players(game))
    assert [(e["number"], e["actor"].number, e["target"].number, e["act"]) for e in log] == [
        (1, commissar.number, a.number, "check"),
        (1, maniac.number, c.number, "maniac_shot"),
        (1, second.number, b.number, "mafia_shot"),
        (1, first.number, c.number, "role_strike"),
    ]
    assert [e["guess"] for e in log] == ["", "", "", "commissar"]
    assert not any(e["item"] for e in log) and all(e["title"] for e in log)


def test_the_gms_decisions_are_the_override_events_with_their_facts(game: Game) -> None:
    civ = civilians(game)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_draft_edit(
        game_id=game.pk, by=Actor.gm("test"), deaths=[number_of(civ[0])], reason="да"
    )
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"))
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_publish(game_id=game.pk, by=Actor.gm("test"))
    services.strike_give(
        game_id=game.pk, seat=number_of(civ[1]), by=Actor.gm("test"), reason="флуд"
    )
    services.seat_modkill(
        game_id=game.pk, seat=number_of(civ[2]), by=Actor.gm("test"), reason="оскорбления"
    )
    services.game_end(game_id=game.pk, by=Actor.gm("test"), winner=Winner.MAFIA)
    got = decisions(game=game, seats=players(game))
    assert [d["kind"] for d in got] == [
        "night_edited",
        "mafia_shot_reopened",
        "strike_manual",
        "modkill",
        "game_finished",
    ]
    edited, reopened, strike, modkill, finished = got
    assert (edited["number"], edited["saved"]) == (1, [])
    assert [p.number for p in edited["died"]] == [civ[0].number]
    assert reopened == {"kind": "mafia_shot_reopened", "number": 1}
    assert (strike["person"].number, strike["person"].name, strike["count"]) == (
        civ[1].number,
        civ[1].name,
        1,
    )
    assert modkill["person"].number == civ[2].number
    assert finished == {"kind": "game_finished", "winner": "Мафия"}
    assert all("reason" not in d for d in got)  # a reason is never the board's


def test_the_post_names_the_winner_every_role_and_what_checks_the_deal(game: Game) -> None:
    seats = players(game)
    roster = [vk_id(n) for n in range(1, 11)]
    post = game_over_post(
        game=game, winner=Winner.TOWN, seats=seats, rounds=[(1, "hash1", "seed1")], roster=roster
    )
    assert post.startswith(f"Игра «{game.name}» окончена. Победа: Мирный город!")
    for s in seats:
        assert f"\n№{s.number} {s.name} — " in post
    assert "Раунд 1: хеш hash1, зерно seed1" in post
    assert f"VK id по местам: {','.join(map(str, roster))}" in post
    stopped = game_over_post(game=game, winner=None, seats=seats, rounds=[], roster=[])
    assert "Игра остановлена ведущим." in stopped and "Раунд" not in stopped
    assert f"Зерно раздачи: {game.seed}" in stopped and "VK id по местам" not in stopped
