"""gameplay.services.retries: the GM's retry of a failed message, of the recipients VK
refused, and of a merged board post."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from rq import Queue

from gameplay.models import (
    Actor,
    FlagKind,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.common import post_board, send_message
from gameplay.services.retries import outbox_retry
from outbox.ids import outbox_random_id
from outbox.leases import outbox_claim
from outbox.outcomes import Failure, Settlement, outbox_settle
from tests.gameplay.factories import queued
from tests.vkbot.delivery_support import make_game, message_row

pytestmark = pytest.mark.django_db

E901 = Failure(901, "Can't send messages for users without permission")


def test_gm_retry_of_a_failed_message(rq_queues: dict[str, Queue], settings: Any) -> None:
    game = make_game(players=2)
    row = send_message(game=game, peer_ids=[1001], text="Текст", kind="day")[0]
    lease, _ = outbox_claim(limit=5, lease_seconds=60)
    outbox_settle(
        lease=lease,
        settlements=[
            Settlement(
                row.pk,
                "failed",
                result={"random_id": outbox_random_id(row.pk), "failed": {"1001": str(E901)}},
                failure=E901,
                undelivered={1001: E901},
            )
        ],
    )
    with transaction.atomic():
        assert outbox_retry(outbox_id=row.pk, by=Actor.gm("anna")).status == OutboxStatus.PENDING
    row.refresh_from_db()
    assert row.attempts == 0 and row.last_error == "" and row.next_attempt_at is None
    assert row.result is not None
    assert "failed" not in row.result and row.result["random_id"] == outbox_random_id(row.pk)
    event = GameEvent.objects.get(game=game, kind="outbox_retried")
    assert event.actor == "gm:anna" and event.data["recipients"] == [1001]
    assert event.data["error"].startswith("VK error 901")
    with pytest.raises(InvalidCommand, match="ещё в очереди"):
        outbox_retry(outbox_id=row.pk, by=Actor.gm("anna"))
    with pytest.raises(InvalidCommand) as unknown:
        outbox_retry(outbox_id=row.pk + 1000, by=Actor.gm("anna"))
    with pytest.raises(InvalidCommand) as foreign:  # another game's id: told nothing more
        outbox_retry(outbox_id=row.pk, by=Actor.gm("anna"), game_id=game.pk + 1)
    assert foreign.value.reason == unknown.value.reason == "Такого сообщения нет."


def test_gm_retry_of_recipients_refused_in_a_sent_message() -> None:
    game = make_game(players=2)
    row = send_message(game=game, peer_ids=[1001, 1002], text="Текст", kind="day")[0]
    lease, _ = outbox_claim(limit=5, lease_seconds=60)
    result = {
        "random_id": outbox_random_id(row.pk),
        "sent": {"1001": 3},
        "failed": {"1002": str(E901)},
    }
    outbox_settle(
        lease=lease,
        settlements=[Settlement(row.pk, "sent", result=result, undelivered={1002: E901})],
    )
    row.refresh_from_db()
    assert row.status == OutboxStatus.SENT and "1002" in row.last_error
    outbox_retry(outbox_id=row.pk, by=Actor.gm("anna"))
    row.refresh_from_db()
    assert row.status == OutboxStatus.PENDING
    assert row.result is not None
    assert row.result["sent"] == {"1001": 3} and "failed" not in row.result
    with pytest.raises(InvalidCommand):
        outbox_retry(outbox_id=row.pk, by=Actor.gm("anna"))
    delivered = message_row([5], "Готово")
    Outbox.objects.filter(pk=delivered.pk).update(status=OutboxStatus.SENT)
    with pytest.raises(InvalidCommand, match="уже доставлено"):
        outbox_retry(outbox_id=delivered.pk, by=Actor.gm("anna"))


def test_gm_retry_of_a_merged_board_post_retries_its_whole_comment() -> None:
    game = make_game(topic_id=77)
    posts = [queued(post_board(game=game, text=f"Пост {n}", kind="post")) for n in range(3)]
    lease, _ = outbox_claim(limit=5, lease_seconds=60)
    record = {"guid": "g", "group": [p.pk for p in posts[:2]], "parts": 1, "comments": {}}
    outbox_settle(
        lease=lease,
        settlements=[
            Settlement(p.pk, "failed", result={"board": record}, failure=Failure(15, "closed"))
            for p in posts[:2]
        ]
        + [Settlement(posts[2].pk, "sent", result={})],
    )
    assert ModerationFlag.objects.filter(game=game, kind=FlagKind.DELIVERY).count() == 1
    outbox_retry(outbox_id=posts[1].pk, by=Actor.gm("anna"))
    statuses = [Outbox.objects.get(pk=p.pk).status for p in posts]
    assert statuses == [OutboxStatus.PENDING, OutboxStatus.PENDING, OutboxStatus.SENT]
    first = Outbox.objects.get(pk=posts[0].pk)
    assert first.result is not None and first.result["board"]["guid"] == "g"


# --- the drain job after a commit ---------------------------------------------------------------
