"""SQL statements per event through the real ingestion pipeline (``apply_update``: the event
recorded, the handlers, the service, the Outbox), counted with Django's
``CaptureQueriesContext``: a private-message night action («проверка 1» by the commissar) and
a board vote («голос 1» in the day's topic), with 1 game in the database and with 100 (the
``day``/``night`` snapshots: 100 running 26-player games, the night one with a whole Day 1 of
votes behind it). The measured game is in the same state in both cases.

The count includes the ``BEGIN`` and ``COMMIT`` of the pipeline's transaction (Django logs
both); an update alone in its transaction runs its handlers in no savepoint
(``vkbot.pipeline``), and ``tests/vkbot/test_handlers_queries.py`` counts it the same way.
Each count of 100 games keeps its statements by verb and table (:func:`statement_kind`): what
the targets' report names as where the statements go.

The hot path's own figure (:func:`hot_path`): a whole day's 26 board votes of one game applied
as one batch of the pipeline (as runbot applies a burst), with the unit of work keeping the
locked game between them and without it (``gameplay.unit_of_work.kept`` switched off), per
vote; and one vote alone, with and without.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any
from unittest import mock

from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from vkbot import pipeline
from vkbot.pipeline import LONGPOLL, apply_update, apply_updates

from .e2e import GROUP_ID, bench_games, make_vk
from .env import Databases
from .games import COMMISSAR, create_game, day_votes
from .snapshots import play_day

NIGHT_ACTION = "night action (private message)"
BOARD_VOTE = "vote (board post)"


@dataclass
class QueryCount:
    event: str
    one_game: int
    many_games: int
    games: int
    #: The statements of the many-games count by verb and table (``SELECT gameplay_seat``).
    statements: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_TABLE = re.compile(r'\b(?:FROM|INTO|UPDATE)\s+"?([\w.]+)"?', re.IGNORECASE)


def statement_kind(sql: str) -> str:
    """A statement's verb and first table (``SELECT gameplay_seat``); savepoints by verb."""
    words = sql.split(None, 2)
    verb = words[0].upper() if words else "?"
    if verb == "RELEASE" or verb == "ROLLBACK":
        return f"{verb} SAVEPOINT" if "SAVEPOINT" in sql.upper() else verb
    table = _TABLE.search(sql)
    return f"{verb} {table.group(1)}" if table and verb != "SAVEPOINT" else verb


def _count(update: dict[str, Any]) -> tuple[int, dict[str, int]]:
    with CaptureQueriesContext(connection) as captured:
        if not apply_update(update, source=LONGPOLL):
            raise RuntimeError("the measured event was not applied")
    kinds = Counter(statement_kind(q["sql"]) for q in captured.captured_queries)
    return len(captured.captured_queries), dict(kinds)


def _vote(state: Any, game: Any) -> tuple[int, dict[str, int]]:
    return _count(state.inject_board_post(game.vk(3), game.topic_id, "голос 1"))


def _action(state: Any, game: Any) -> tuple[int, dict[str, int]]:
    return _count(state.inject_message(game.vk(COMMISSAR), "проверка 1"))


def measure(databases: Databases, games: int) -> list[QueryCount]:
    state = make_vk(games)
    with override_settings(OUTBOX_DELIVERY_ENABLED=False):
        databases.restore("empty")
        game = create_game(1)
        vote_one, _ = _vote(state, game)
        play_day(game)
        action_one, _ = _action(state, game)

        databases.restore("day")
        vote_many, vote_kinds = _vote(state, bench_games(1)[0])
        databases.restore("night")
        action_many, action_kinds = _action(state, bench_games(1)[0])
    return [
        QueryCount(NIGHT_ACTION, action_one, action_many, games, action_kinds),
        QueryCount(BOARD_VOTE, vote_one, vote_many, games, vote_kinds),
    ]


@dataclass
class HotPath:
    """SQL statements per board vote with the unit of work and without it: in a day's burst
    (``votes`` votes in one batch) and alone."""

    votes: int
    burst_kept: float
    burst_unkept: float
    alone_kept: int
    alone_unkept: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _day_burst(databases: Databases, *, kept: bool) -> tuple[int, int]:
    """Statements of a day's votes applied as one batch, and of one vote alone; the number of
    votes is the first of the returned counts' divisor (:func:`hot_path`)."""
    switch = (
        contextlib.nullcontext()
        if kept
        else mock.patch.object(pipeline.unit_of_work, "kept", contextlib.nullcontext)
    )
    state = make_vk(2)
    with override_settings(OUTBOX_DELIVERY_ENABLED=False), switch:
        databases.restore("empty")
        game = create_game(1)
        updates = [
            state.inject_board_post(game.vk(voter), game.topic_id, f"голос {target}")
            for voter, target in sorted(day_votes().items())
        ]
        with CaptureQueriesContext(connection) as captured:
            if apply_updates(updates, None, group_id=GROUP_ID) != len(updates):
                raise RuntimeError("the day's votes were not all applied")
        burst = len(captured.captured_queries)
        alone, _ = _vote(state, create_game(2))
    return burst, alone


def hot_path(databases: Databases) -> HotPath:
    votes = len(day_votes())
    burst_kept, alone_kept = _day_burst(databases, kept=True)
    burst_unkept, alone_unkept = _day_burst(databases, kept=False)
    return HotPath(
        votes=votes,
        burst_kept=round(burst_kept / votes, 1),
        burst_unkept=round(burst_unkept / votes, 1),
        alone_kept=alone_kept,
        alone_unkept=alone_unkept,
    )
