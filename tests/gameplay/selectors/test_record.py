"""gameplay.selectors.record: the game's record for the panel — the roster with how each
player left, the item draws by deal round, and the event log with its filters."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.selectors.record import (
    PeopleNames,
    actors_matching,
    draw_rounds,
    event_log,
    roster,
)
from tests.gameplay.deadline_support import started_game, vote_all
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_roster_says_how_and_when_each_player_left() -> None:
    game = started_game()
    vote_all(game)  # seat 6 is executed
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    services.seat_modkill(game_id=game.pk, seat=8, by=Actor.gm("test"), reason="тест")

    record = roster(game)

    # Facts, not words: the panel words them for the player's gender (panel.labels.seat_state,
    # tests/panel/test_game_state_pages.py).
    left = {r.seat.number: (r.seat.alive, r.seat.death_cause, r.died_in) for r in record.rows}
    assert left[6][:2] == (False, "executed") and str(left[6][2]) == "День 1"
    assert left[8][:2] == (False, "modkill") and str(left[8][2]) == "Ночь 1"
    assert left[1] == left[2] == left[3] == (True, "", None)
    assert (record.alive, record.executed, record.modkilled, record.killed) == (6, 1, 1, 0)


def test_draws_are_grouped_by_deal_round_newest_first() -> None:
    game = make_game(players=10, start=False)
    services.deal_round_new(game_id=game.pk, by=Actor.gm("test"), seed="second")  # dealt again

    rounds = draw_rounds(game)

    assert [number for number, _ in rounds] == [2, 1]
    for number, draws in rounds:
        assert [d.attempt for d in draws] == sorted(d.attempt for d in draws)
        assert {d.deal_round for d in draws} == {number}
        assert [d.accepted for d in draws][-1] is True


def test_event_log_newest_first_filtered_by_kind_seat_and_actor() -> None:
    game = started_game()
    services.vote_submit(game_id=game.pk, voter=3, target=6)
    services.vote_submit(game_id=game.pk, voter=4, target=7)

    log = list(event_log(game))
    assert [e.seq for e in log] == sorted((e.seq for e in log), reverse=True)
    votes = event_log(game, kind=log[0].kind)
    assert [(e.data["voter"], e.data["target"]) for e in votes] == [(4, 7), (3, 6)]
    assert [e.data["voter"] for e in event_log(game, kind=log[0].kind, seat=6)] == [3]

    # «Кто» matches what the log shows for an actor (the panel's words, given): the name is
    # the seat's and the VK user's who signed up with it; a number is a seat's.
    def shown(actor: str, names: PeopleNames) -> str:
        kind, _, value = actor.partition(":")
        if kind == "seat":
            return f"№{value} {names.seats.get(int(value), '')}"
        return names.vk.get(int(value), "") if kind == "vk" else "бот"

    assert sorted(actors_matching(game, "Игрок 3", shown)) == ["seat:3", "vk:7003"]
    assert actors_matching(game, "№4", shown) == ["seat:4"]
    assert "system" in actors_matching(game, "Бот", shown)
    mine = actors_matching(game, "4", shown)
    assert [e.actor for e in event_log(game, actors=mine)] == ["seat:4"]
