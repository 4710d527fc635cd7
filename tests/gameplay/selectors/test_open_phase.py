"""gameplay.selectors.open_phase: who has not voted or acted yet, and a day's tally so far with
its voters and penalty votes, from rows already loaded."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor, Game, NightAction, Phase, Seat, Strike, Vote
from gameplay.selectors.open_phase import day_tally, pending
from tests.gameplay.deadline_support import day, night, started_game, vote_all

pytestmark = pytest.mark.django_db


def players(game: Game) -> list[Seat]:
    return list(Seat.objects.filter(game=game, number__isnull=False).order_by("number"))


def votes(phase: Phase) -> list[Vote]:
    return list(Vote.objects.filter(phase=phase).order_by("created_at", "id"))


def test_a_day_tallies_votes_and_penalties_and_waits_for_the_rest() -> None:
    game = started_game()
    for voter, target in ((1, 6), (2, 6), (3, 7)):
        services.vote_submit(game_id=game.pk, voter=voter, target=target)
    services.strike_give(game_id=game.pk, seat=7, by=Actor.gm("test"), reason="P4")
    phase = day(game)
    strikes = list(Strike.objects.filter(seat__game=game))

    tally = day_tally(phase, players(game), votes(phase), strikes)
    waiting = pending(phase, players(game), votes(phase), [])

    rows = {t.number: t for t in tally.tally}
    assert (rows[6].votes, rows[6].penalty, rows[6].voters) == (2, 0, [1, 2])
    assert (rows[7].votes, rows[7].voters) == (1, [3]) and rows[7].penalty > 0
    assert [t.total for t in tally.tally] == sorted((t.total for t in tally.tally), reverse=True)
    assert tally.projection is not None
    assert [s.number for s in waiting.not_voted] == [4, 5, 6, 7, 8]
    assert waiting.to_remind == 5 and not waiting.not_acted


def test_a_night_waits_for_the_roles_that_have_not_acted_and_the_mafias_shot() -> None:
    game = started_game()
    vote_all(game)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))  # seat 6 is executed
    services.night_action_submit(game_id=game.pk, actor=4, act="heal", target=3)
    phase = night(game)

    waiting = pending(phase, players(game), [], NightAction.objects.filter(phase=phase))

    assert [s.number for s in waiting.not_acted] == [3, 5]
    assert waiting.mafia_shot_missing is True and waiting.mafia_waiting == 2
    assert waiting.to_remind == 4 and not waiting.not_voted
