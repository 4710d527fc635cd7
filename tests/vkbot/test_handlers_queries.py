"""One private-message night action costs a fixed number of SQL queries: the same in a
7-player game as in a 26-player game with 50 other games running."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from gameplay.buttons import Payload
from gameplay.models import NightAction
from gameplay.rules import Item, Role
from tests.vkbot.bot_support import make_game, phase, pm, press, roles_26, to_night
from vkbot.handlers import dispatch

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

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
