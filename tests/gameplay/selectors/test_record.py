"""gameplay.selectors.record: the game's record for the panel — the roster with how each
player left, the item draws by deal round, and the event log with its filters."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.grammar import FEMALE, MALE, UNKNOWN
from gameplay.models import Seat
from gameplay.selectors.record import actors_matching, draw_rounds, event_log, roster
from tests.gameplay.deadline_support import started_game, vote_all
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_roster_says_how_and_when_each_player_left() -> None:
    game = started_game()
    vote_all(game)  # seat 6 is executed
    services.day_close(game_id=game.pk, by="gm:test")
    services.seat_modkill(game_id=game.pk, seat=8, by="gm:test", reason="тест")
    Seat.objects.filter(game=game, number__in=(1, 6)).update(sex=MALE)  # as VK tells it
    Seat.objects.filter(game=game, number=2).update(sex=FEMALE)

    record = roster(game)

    states = {r.seat.number: r.state for r in record.rows}
    assert states[6] == "казнён (День 1)"
    assert states[8].startswith("модкилл") and "Ночь 1" in states[8]
    assert (states[1], states[2], states[3]) == ("жив", "жива", "в игре")  # 3: VK did not say
    Seat.objects.filter(game=game, number=6).update(sex=FEMALE)
    assert {r.seat.number: r.state for r in roster(game).rows}[6] == "казнена (День 1)"
    Seat.objects.filter(game=game, number=6).update(sex=UNKNOWN)
    assert {r.seat.number: r.state for r in roster(game).rows}[6] == "казнь (День 1)"
    assert (record.alive, record.executed, record.modkilled, record.killed) == (6, 1, 1, 0)


def test_draws_are_grouped_by_deal_round_newest_first() -> None:
    game = make_game(players=10, start=False)
    services.deal_round_new(game_id=game.pk, by="gm:test", seed="second")  # dealt again

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
    # The name is the seat's and the VK user's who signed up with it.
    assert sorted(actors_matching(game, "Игрок 3")) == ["seat:3", "vk:7003"]
    assert actors_matching(game, "№4") == ["seat:4"]
    assert [e.actor for e in event_log(game, actor="4")] == ["seat:4"]
