"""The hot path finds and locks a vote's or a night action's game in the query that finds it
(``gameplay.services.common``: ``lock_topic_game_hot``, ``hot_seats_of_user``) and reads what
the game holds after the lock: racing the close of the phase through the pipeline, the event
lands before the close (and counts) or after it (and is refused), never in a closed phase."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from gameplay import services
from gameplay.context import serving
from gameplay.models import Actor, NightAction, Phase, PhaseKind, Vote
from tests.gameplay.factories import topic_of
from tests.gameplay.test_race import race
from tests.vkbot.bot_support import GROUP_ID, board_post, make_game, pm, roles_26, to_night
from vkbot.pipeline import LONGPOLL, apply_update

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def applied(update: dict[str, Any]) -> Callable[[], bool]:
    def run() -> bool:
        with serving(GROUP_ID):
            return apply_update(update, source=LONGPOLL)

    return run


@pytest.mark.parametrize("how", ["board", "pm"])
def test_a_vote_racing_the_days_close_lands_before_it_or_is_refused(how: str) -> None:
    for round_ in range(4):
        base = 700_000 + 1000 * round_
        game = make_game(roles_26(), vk_base=base)
        update = (
            board_post(topic_of(game), base + 3, "голос 1")
            if how == "board"
            else pm(base + 3, "голос 1")
        )
        vote, close = race(
            applied(update), partial(services.day_close, game_id=game.pk, by=Actor.gm("gm"))
        )
        assert vote is True, vote
        assert not isinstance(close, Exception), close
        day = Phase.objects.get(game=game, kind=PhaseKind.DAY, number=1)
        tally = (day.result or {})["tally"]
        if Vote.objects.filter(phase__game=game).exists():
            # Landed before the close: counted (seat 1 did not vote: its +2), the voter not
            # struck.
            assert tally["1"] == 3 and "3" not in tally, tally
        else:
            # Refused after it: nobody voted, everyone struck (+2).
            assert tally["1"] == 2 and tally["3"] == 2, tally


def test_a_night_action_racing_the_nights_close_lands_before_it_or_is_refused() -> None:
    for round_ in range(4):
        base = 800_000 + 1000 * round_
        game = make_game(roles_26(), vk_base=base)
        to_night(game)
        action, close = race(
            applied(pm(base + 7, "проверка 1")),
            partial(services.night_close, game_id=game.pk, by=Actor.gm("gm")),
        )
        assert action is True, action
        assert not isinstance(close, Exception), close
        night = Phase.objects.get(game=game, kind=PhaseKind.NIGHT, number=1)
        draft = (night.result or {})["draft"]
        # The check stands in the night's resolution exactly when it landed before the close.
        checked = bool(draft["checks"] or draft["pending_check"])
        assert NightAction.objects.filter(phase=night).exists() == checked, draft
