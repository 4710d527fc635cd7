"""gameplay.selectors.table: the seated players, the current phase, the rules' snapshot of
the seats and the night's standing submissions."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.rules import Act, Role
from gameplay.rules.night import Submission
from gameplay.selectors.table import current_phase, players, standing_submissions, table_of
from tests.gameplay.deadline_support import started_game, vote_all

pytestmark = pytest.mark.django_db


def test_players_and_their_table_snapshot() -> None:
    game = started_game()
    services.seat_modkill(game_id=game.pk, seat=8, by=Actor.gm("test"), reason="тест")

    seats = players(game)
    table = table_of(seats)

    assert [s.number for s in seats] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert len(table) == 8
    assert table.seat(1).role is Role.MAFIA and table.seat(5).role is Role.MANIAC
    assert table.seat(8).alive is False and table.seat(7).alive is True
    assert 9 not in table


def test_current_phase_and_the_standing_submissions_of_the_night() -> None:
    game = started_game()
    day = current_phase(game)
    assert day is not None and (day.kind, day.number) == ("day", 1)
    vote_all(game)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    night = current_phase(game)
    assert night is not None
    services.night_action_submit(game_id=game.pk, actor=1, act="mafia_shot", target=7)
    services.night_action_submit(game_id=game.pk, actor=2, act="mafia_shot", target=8)  # replaces
    services.night_action_submit(game_id=game.pk, actor=4, act="heal", target=3)

    assert (night.kind, night.number) == ("night", 1)
    assert standing_submissions(night) == [
        Submission(actor=2, act=Act.MAFIA_SHOT, target=8),
        Submission(actor=4, act=Act.HEAL, target=3),
    ]
