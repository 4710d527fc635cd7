"""outbox.leases: a message row waiting for a retry holds the later rows of its peers back,
and only of those peers; outbox.outcomes: a held row is due again at once, no attempt
counted."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel
from outbox.leases import outbox_claim
from outbox.outcomes import Settlement, outbox_settle
from tests.vkbot.delivery_support import message_row

pytestmark = pytest.mark.django_db


def test_a_row_in_backoff_holds_its_peers_later_rows_and_only_theirs() -> None:
    now = timezone.now()
    retry_at = now + timedelta(seconds=30)
    waiting = message_row([1], "Ваш голос принят", next_attempt_at=retry_at, attempts=2)
    broadcast = message_row([1, 2, 3], "День 2")
    reply = message_row([1], "Статус")
    other = message_row([4], "Статус")
    lease, rows = outbox_claim(limit=10, lease_seconds=60, now=now)
    assert [r.pk for r in rows] == [broadcast.pk, other.pk]  # the reply to 1 waits whole
    assert lease.held == {broadcast.pk: frozenset({1})}  # 2 and 3 get the broadcast now
    reply.refresh_from_db()
    assert reply.next_attempt_at == retry_at and reply.locked_until is None  # put off
    assert reply.attempts == 0
    # Once the first row is due again, they are claimed together (in order: the plan).
    later = retry_at + timedelta(seconds=61)
    lease, rows = outbox_claim(limit=10, lease_seconds=60, now=later)
    assert {r.pk for r in rows} >= {waiting.pk, broadcast.pk, reply.pk}
    assert lease.held == {}


def test_a_row_another_worker_is_sending_holds_without_putting_off() -> None:
    now = timezone.now()
    message_row([1], "Первое", locked_until=now + timedelta(seconds=60))
    second = message_row([1], "Второе")
    assert outbox_claim(limit=10, lease_seconds=60, now=now)[1] == []
    second.refresh_from_db()
    assert second.next_attempt_at is None  # due: taken as soon as the first is settled


def test_delivered_refused_and_other_communities_recipients_hold_nothing() -> None:
    now = timezone.now()
    later = now + timedelta(seconds=30)
    done = {"random_id": 5, "sent": {"1": 9}, "failed": {"2": "VK error 901: x"}}
    message_row([1, 2], "Раньше", next_attempt_at=later, result=done)
    message_row([3], "Другое сообщество", group_id=999, next_attempt_at=later)
    Outbox.objects.create(channel=OutboxChannel.CHAT, peer_ids=[2_000_000_001], text="Беседа",
                          next_attempt_at=later)  # fmt: skip
    Outbox.objects.create(channel=OutboxChannel.EVENT_ANSWER, peer_ids=[1], text="",
                          payload={}, next_attempt_at=later)  # fmt: skip
    chat = Outbox.objects.create(channel=OutboxChannel.CHAT, peer_ids=[2_000_000_002],
                                 text="Другая беседа")  # fmt: skip
    rows = [message_row([1, 2, 3], "Сейчас"), chat]
    lease, claimed = outbox_claim(limit=10, lease_seconds=60, now=now)
    assert {r.pk for r in claimed} == {r.pk for r in rows}
    assert lease.held == {}


def test_a_held_row_is_due_again_at_once_without_an_attempt_counted() -> None:
    row = message_row([1, 2], "День 2")
    lease, [claimed] = outbox_claim(limit=10, lease_seconds=60)
    assert claimed.attempts == 1
    result = {"random_id": 7, "sent": {"2": 11}}
    outbox_settle(lease=lease, settlements=[Settlement(row.pk, "held", result=result)])
    row.refresh_from_db()
    assert (row.status, row.attempts, row.next_attempt_at, row.locked_until) == (
        "pending",
        0,
        None,
        None,
    )
    assert row.result == result
