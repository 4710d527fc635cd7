"""SQL statements per event through the real ingestion pipeline (``apply_update``: the event
recorded, the handlers, the service, the Outbox), counted with Django's
``CaptureQueriesContext``: a private-message night action («проверка 1» by the commissar) and
a board vote («голос 1» in the day's topic), with 1 game in the database and with 100 (the
``day``/``night`` snapshots: 100 running 26-player games, the night one with a whole Day 1 of
votes behind it). The measured game is in the same state in both cases.

The count includes the savepoints the pipeline opens (one for the event record, one for the
handlers) but not the ``BEGIN``/``COMMIT`` of its transaction, which Django does not log.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from vkbot.pipeline import LONGPOLL, apply_update

from .e2e import bench_games, make_vk
from .env import Databases
from .games import COMMISSAR, create_game
from .snapshots import play_day

NIGHT_ACTION = "night action (private message)"
BOARD_VOTE = "vote (board post)"


@dataclass
class QueryCount:
    event: str
    one_game: int
    many_games: int
    games: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _count(update: dict[str, Any]) -> int:
    with CaptureQueriesContext(connection) as captured:
        if not apply_update(update, source=LONGPOLL):
            raise RuntimeError("the measured event was not applied")
    return len(captured.captured_queries)


def _vote(state: Any, game: Any) -> int:
    return _count(state.inject_board_post(game.vk(3), game.topic_id, "голос 1"))


def _action(state: Any, game: Any) -> int:
    return _count(state.inject_message(game.vk(COMMISSAR), "проверка 1"))


def measure(databases: Databases, games: int) -> list[QueryCount]:
    state = make_vk(games)
    with override_settings(OUTBOX_DELIVERY_ENABLED=False):
        databases.restore("empty")
        game = create_game(1)
        vote_one = _vote(state, game)
        play_day(game)
        action_one = _action(state, game)

        databases.restore("day")
        vote_many = _vote(state, bench_games(1)[0])
        databases.restore("night")
        action_many = _action(state, bench_games(1)[0])
    return [
        QueryCount(NIGHT_ACTION, action_one, action_many, games),
        QueryCount(BOARD_VOTE, vote_one, vote_many, games),
    ]
