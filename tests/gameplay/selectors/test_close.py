"""gameplay.selectors.close: the GM's preview of closing the open phase names who would be
executed, struck or killed, and changes its fingerprint when the outcome would change."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.selectors.close import close_preview
from tests.gameplay.deadline_support import DOCTOR, MAFIA, MANIAC, started_game, vote_all

pytestmark = pytest.mark.django_db


def test_day_preview_names_the_executed_and_the_struck_without_closing() -> None:
    game = started_game()
    vote_all(game, except_seats=(8,))  # seats 1–5, 7 vote 6; 6 votes 7; 8 does not vote

    preview = close_preview(game)

    assert preview is not None and preview.night is None and preview.day is not None
    assert preview.day.executed == 6
    assert [s.seat for s in preview.day.strikes] == [8]
    assert preview.names[6] == "Игрок 6" and preview.roles[6] == "civilian"
    assert preview.phase.status == "open"  # a preview closes nothing


def test_fingerprint_follows_the_outcome() -> None:
    game = started_game()
    vote_all(game)
    before, again = close_preview(game), close_preview(game)
    assert before is not None and again is not None and again.fingerprint == before.fingerprint
    for voter in (1, 2, 3, 4, 5):
        services.vote_submit(game_id=game.pk, voter=voter, target=7)

    after = close_preview(game)

    assert after is not None and after.day is not None and after.day.executed == 7
    assert after.fingerprint != before.fingerprint


def test_night_preview_resolves_the_standing_actions_and_none_without_an_open_phase() -> None:
    game = started_game(auto_publish=True)
    vote_all(game)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_action_submit(game_id=game.pk, actor=MAFIA[0], act="mafia_shot", target=7)
    services.night_action_submit(game_id=game.pk, actor=MANIAC, act="maniac_shot", target=8)
    services.night_action_submit(game_id=game.pk, actor=DOCTOR, act="heal", target=8)

    preview = close_preview(game)

    assert preview is not None and preview.day is None and preview.night is not None
    assert set(preview.night.step1_deaths) | set(preview.night.step4_deaths) == {7}
    assert preview.publishes is True
    services.game_end(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    assert close_preview(game) is None
