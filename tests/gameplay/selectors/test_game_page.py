"""gameplay.selectors.game_page: the GM's game page — the seats, the day's tally with its
voters, and who has not voted or acted yet."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor
from gameplay.selectors.game_page import game_page
from tests.gameplay.deadline_support import started_game, vote_all

pytestmark = pytest.mark.django_db


def test_day_page_tallies_the_votes_and_lists_the_missing_voters() -> None:
    game = started_game()
    for voter, target in ((1, 6), (2, 6), (3, 7)):
        services.vote_submit(game_id=game.pk, voter=voter, target=target)

    page = game_page(game)

    assert page.phase is not None and (page.phase.kind, page.phase.number) == ("day", 1)
    assert [r.seat.number for r in page.seats] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [(t.number, t.votes, t.voters) for t in page.tally] == [(6, 2, [1, 2]), (7, 1, [3])]
    assert [s.number for s in page.pending.not_voted] == [4, 5, 6, 7, 8]
    assert page.pending.to_remind == 5
    row = page.seats[0]
    assert row.current_vote is not None and row.current_vote.target == 6


def test_night_page_waits_for_the_roles_that_have_not_acted() -> None:
    game = started_game()
    vote_all(game)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))  # seat 6 is executed
    services.night_action_submit(game_id=game.pk, actor=4, act="heal", target=3)

    page = game_page(game)

    assert page.phase is not None and (page.phase.kind, page.phase.number) == ("night", 1)
    assert [s.number for s in page.pending.not_acted] == [3, 5]
    assert page.pending.mafia_shot_missing is True and page.pending.mafia_waiting == 2
    assert [(a.act, a.target) for a in page.seats[3].night_actions] == [("heal", 3)]
    # Facts: how and when seat 6 left (the panel words them for the player's gender).
    executed = page.seats[5]
    assert (executed.seat.death_cause, str(executed.died_in)) == ("executed", "День 1")
    outcomes = {p.outcome.kind: p.outcome for p in page.phases}
    executed_person = outcomes["day"].executed
    assert executed_person is not None
    assert (outcomes["day"].stage, executed_person.number) == ("done", 6)
    assert outcomes["night"].stage == "open"
