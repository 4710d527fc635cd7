"""gameplay.selectors.status: «статус», what a player sent in the current phase and, for the
mafia, the team's standing actions."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.selectors.status import player_status
from tests.gameplay.deadline_support import started_game, vote_all
from tests.gameplay.factories import seat_no

pytestmark = pytest.mark.django_db


def test_day_status_is_the_players_standing_vote() -> None:
    game = started_game()
    services.vote_submit(game_id=game.pk, voter=3, target=6)
    services.vote_submit(game_id=game.pk, voter=3, target=7)  # a change: the last one stands

    voted = player_status(seat_no(game, 3))
    silent = player_status(seat_no(game, 4))

    assert voted.phase is not None and (voted.phase.kind, voted.phase.number) == ("day", 1)
    assert voted.vote is not None and voted.vote.target.number == 7
    assert silent.vote is None and silent.actions == [] and silent.team == []


def test_night_status_shows_the_mafia_its_team_and_the_teams_shot() -> None:
    game = started_game()
    vote_all(game)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_action_submit(game_id=game.pk, actor=2, act="mafia_shot", target=7)
    services.night_action_submit(game_id=game.pk, actor=4, act="heal", target=3)

    mafia = player_status(seat_no(game, 1))
    doctor = player_status(seat_no(game, 4))

    assert [s.number for s in mafia.team] == [2]
    assert mafia.team_shot is not None and mafia.team_shot.target.number == 7
    assert mafia.actions == [] and mafia.team_strike is None
    assert [(a.act, a.target.number) for a in doctor.actions] == [("heal", 3)]
    assert doctor.team_shot is None and doctor.team == []
