"""One private-message night action costs a fixed number of SQL queries: the same in a
7-player game as in a 26-player game with 50 other games running; a vote or a night action
alone in its transaction of the pipeline costs at most :data:`MOST_ALONE` statements, counted
as ``make bench`` counts them (``bench/queries.py``: its BEGIN and COMMIT included); and a
burst of one game's votes or night actions in one transaction of the pipeline costs less than
half the queries with the game's unit of work kept (``gameplay.unit_of_work``) than without
it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from bench.games import day_votes, night_messages
from gameplay.buttons import Payload
from gameplay.context import serving
from gameplay.models import NightAction, Vote
from gameplay.rules import Item, Role
from tests.gameplay.factories import topic_of
from tests.vkbot.bot_support import (
    GROUP_ID,
    board_post,
    make_game,
    phase,
    pm,
    press,
    roles_26,
    to_night,
)
from vkbot import pipeline
from vkbot.handlers import dispatch
from vkbot.pipeline import LONGPOLL, apply_update, apply_updates

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

#: Statements of one board vote, and of one night action by private message, applied alone
#: (issue 26: at most 8).
MOST_ALONE = 8

SMALL = {
    1: (Role.MAFIA, Item.CLOCK),
    2: (Role.COMMISSAR, None),
    3: (Role.CIVILIAN, Item.RED_BUTTON),
    4: (Role.CIVILIAN, Item.BOOK),
}


def cost(update: dict[str, Any]) -> int:
    with CaptureQueriesContext(connection) as ctx, transaction.atomic():
        dispatch(update)
    return len(ctx.captured_queries)


def actions(game: Any) -> int:
    return NightAction.objects.filter(phase__game=game, current=True).count()


def measure(game: Any, commissar: int, target: int, name: str) -> list[int]:
    """Three ways of sending the same kind of action: a seat number, a name, a button."""
    night = phase(game)
    updates: list[Callable[[], dict[str, Any]]] = [
        lambda: pm(commissar, f"проверка {target}"),
        lambda: pm(commissar, f"проверка {name}"),
        lambda: press(
            commissar, Payload("check", game=game.pk, phase=night.pk, target=target).encode()
        ),
    ]
    out = []
    for make in updates:
        out.append(cost(make()))
        assert actions(game) == 1
    return out


def test_night_action_cost_does_not_grow(django_assert_max_num_queries: Any) -> None:
    small = make_game()
    to_night(small)
    measured = measure(small, 1003, 5, "Дарья")
    print("queries per night action (number, name, button):", measured)

    big = make_game(roles_26(), vk_base=100_000)
    for i in range(50):
        other = make_game(SMALL, vk_base=200_000 + 10 * i)
        if i % 2:
            to_night(other)
    to_night(big)
    night = phase(big)
    for expected, update in zip(
        measured,
        [
            pm(100_007, "проверка 20"),
            pm(100_007, "проверка Игрок 20"),
            press(100_007, Payload("check", game=big.pk, phase=night.pk, target=20).encode()),
        ],
        strict=True,
    ):
        with django_assert_max_num_queries(expected), transaction.atomic():
            dispatch(update)
    assert actions(big) == 1


# --- the unit of work's cache: a burst of one game's events --------------------------------


def queries(run: Callable[[], Any]) -> int:
    with CaptureQueriesContext(connection) as ctx:
        run()
    return len(ctx.captured_queries)


def burst(base: int) -> dict[str, int]:
    """Queries of a day's 26 board votes and of a night's 12 private-message actions, each
    burst one batch of the pipeline, and of one vote and one action alone in theirs."""
    day = make_game(roles_26(), vk_base=base)
    votes = [board_post(topic_of(day), base + v, f"голос {t}") for v, t in day_votes().items()]
    night = make_game(roles_26(), vk_base=base + 1000)
    to_night(night)
    actions = [pm(base + 1000 + s, text) for s, text in night_messages()]
    alone = make_game(roles_26(), vk_base=base + 2000)
    counts = {
        "votes": queries(lambda: apply_updates(votes, None, group_id=GROUP_ID)),
        "actions": queries(lambda: apply_updates(actions, None, group_id=GROUP_ID)),
    }
    assert Vote.objects.filter(phase__game=day, current=True).count() == len(votes)
    assert NightAction.objects.filter(phase__game=night).count() == len(actions)
    with serving(GROUP_ID):
        counts["vote"] = queries(
            lambda: apply_update(
                board_post(topic_of(alone), base + 2003, "голос 1"), source=LONGPOLL
            )
        )
        to_night(alone)
        counts["action"] = queries(
            lambda: apply_update(pm(base + 2007, "проверка 1"), source=LONGPOLL)
        )
    return counts


def test_the_kept_unit_of_work_saves_a_burst_more_than_half_its_queries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = burst(300_000)
    monkeypatch.setattr(pipeline.unit_of_work, "kept", contextlib.nullcontext)
    unkept = burst(400_000)
    print("queries with the kept unit of work:", kept, "without:", unkept)
    assert 2 * kept["votes"] < unkept["votes"] and 2 * kept["actions"] < unkept["actions"]
    assert kept["vote"] <= unkept["vote"] and kept["action"] <= unkept["action"]
    # the figures of docs/architecture.md, «The unit of work»
    assert kept == {"votes": 41, "actions": 27, "vote": 8, "action": 8}


@pytest.mark.django_db(transaction=True)
def test_a_vote_or_a_night_action_alone_costs_at_most_8_statements() -> None:
    """As the bench counts: ``apply_update`` in a transaction of its own, BEGIN to COMMIT."""
    base = 600_000
    game = make_game(roles_26(), vk_base=base)
    statements: dict[str, list[str]] = {}

    def alone(name: str, update: dict[str, Any]) -> None:
        with CaptureQueriesContext(connection) as ctx:
            assert apply_update(update, source=LONGPOLL)
        statements[name] = [q["sql"] for q in ctx.captured_queries]

    with serving(GROUP_ID):
        alone("vote", board_post(topic_of(game), base + 3, "голос 1"))
        to_night(game)
        alone("action", pm(base + 7, "проверка 1"))
    assert Vote.objects.filter(phase__game=game, voter__number=3).exists()
    assert NightAction.objects.filter(phase__game=game, actor__number=7, current=True).exists()
    for name, sqls in statements.items():
        print(name, len(sqls), *[sql[:90] for sql in sqls], sep="\n  ")
        assert sqls[0].startswith("BEGIN") and sqls[-1] == "COMMIT", name  # (SQLite: IMMEDIATE)
        assert len(sqls) <= MOST_ALONE, (name, sqls)
