"""Done when (each peer reads its messages in commit order): a game's start and a day — votes,
votes changed, the close — delivered against the local VK with injected errors 6 and 10 (for
whole requests, and error 10 for single calls inside an ``execute``),
while the players keep acting between drains; every player receives their messages in the
order their Outbox rows were committed, each once.

The drains run in this process between the commits, so rows in backoff (a refused request)
are still pending when the next rows to the same players are committed: the order must hold
across rounds, not only within one.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from gameplay import services
from gameplay.models import Actor, Outbox, OutboxChannel, OutboxStatus, Seat
from localvk import RunningServer
from tests.gameplay.factories import number_of
from tests.vkbot.delivery_support import (
    make_game,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.delivery.drain import Drainer
from vkbot.delivery.rows import MAX_MESSAGE_LENGTH, part_random_id, split_text

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

PLAYERS = 26
#: VK refuses a share of the requests (the whole request), fails a share of the calls inside
#: an ``execute`` on their own, and answers a share of the requests slowly.
FAULTS: dict[str, Any] = {
    "error_rates": {6: 0.1, 10: 0.25},
    "inner_error_rates": {10: 0.1},
    "delay": 0.3,
    "delay_rate": 0.3,
    "seed": 7,
}


def _drain(**limits: float) -> None:
    """A drain run: what is due now (``wait_up_to=0``) or, given, until nothing is pending."""
    with Drainer() as drainer:
        drainer.run(max_seconds=limits.get("max_seconds", 5.0), wait_up_to=limits.get("wait", 0))


def out_of_order(vk: RunningServer, peers: list[int], since: int = 0) -> dict[int, list[int]]:
    """Per player whose messages of the rows from id ``since`` on did not arrive in the order
    of their rows (or not once each): those row ids in the order the local VK received them."""
    rows = Outbox.objects.filter(channel=OutboxChannel.MESSAGE, status=OutboxStatus.SENT).order_by(
        "id"
    )
    row_of: dict[tuple[int, int], int] = {}
    expected: dict[int, list[int]] = {peer: [] for peer in peers}
    for row in rows:
        assert row.result is not None
        base = int(row.result["random_id"])
        pieces = len(split_text(row.text, MAX_MESSAGE_LENGTH))
        for peer in row.peer_ids:
            for part in range(pieces):
                row_of[(peer, part_random_id(base, part))] = row.pk
            if peer in expected and row.pk >= since:
                expected[peer].extend([row.pk] * pieces)
    wrong: dict[int, list[int]] = {}
    for peer in peers:
        got = [row_of.get((peer, m.random_id), -1) for m in vk.state.sent_messages(peer)]
        got = [pk for pk in got if pk >= since or pk == -1]
        if got != expected[peer]:
            wrong[peer] = got
    return wrong


def test_every_player_reads_a_start_and_a_day_in_commit_order_under_vk_errors(
    vk: RunningServer, settings: Any
) -> None:
    settings.OUTBOX_RETRY_BASE_MS = 200
    settings.OUTBOX_RETRY_MAX_SECONDS = 1
    settings.OUTBOX_MAX_ATTEMPTS = 40
    topic = vk.state.create_topic("Машина времени")
    game = make_game(topic_id=topic.id, players=PLAYERS)
    services.game_deal(game_id=game.pk, by=Actor.gm("test"))
    vk.state.faults.configure(**FAULTS)

    services.game_start(game_id=game.pk, by=Actor.gm("test"))
    _drain(max_seconds=60, wait=5)
    seats = list(Seat.objects.filter(game=game, number__isnull=False).order_by("number"))
    peers = [seat.vk_user_id for seat in seats]
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()
    at_start = out_of_order(vk, peers)
    print(f"start: players whose messages arrived out of order: {len(at_start)} of {PLAYERS}")
    assert at_start == {}

    day_from = Outbox.objects.order_by("-id").values_list("id", flat=True)[0] + 1
    rng = random.Random(5)
    for n, seat in enumerate(seats):  # every player votes; each vote is confirmed
        for _ in range(1 + n % 2):  # every other one changes their mind at once
            target = rng.choice([number_of(s) for s in seats if s.number != seat.number])
            services.vote_submit(game_id=game.pk, vk_user_id=seat.vk_user_id, target=target)
            _drain()
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    _drain(max_seconds=60, wait=5)

    assert (
        vk.state.faults.injected.get("error_10", 0) + vk.state.faults.injected.get("error_6", 0) > 5
    ), "the errors were injected"
    assert vk.state.faults.injected.get("inner_error_10", 0) > 5, "and inside execute"
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()
    wrong = out_of_order(vk, peers, since=day_from)
    print(f"day: players whose messages arrived out of order: {len(wrong)} of {PLAYERS}")
    assert wrong == {}
    assert out_of_order(vk, peers) == {}  # and the start's before the day's
