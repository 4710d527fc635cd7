"""outbox.leases: claims never overlap, a lease is a fence, claims by channel."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gameplay.models import (
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
)
from gameplay.services.common import post_board
from outbox.leases import outbox_claim, outbox_record, outbox_release
from outbox.outcomes import Failure, Settlement, outbox_settle
from tests.vkbot.delivery_support import make_game, message_row

pytestmark = pytest.mark.django_db

E901 = Failure(901, "Can't send messages for users without permission")


def test_claims_never_overlap_and_a_lease_is_a_fence() -> None:
    rows = [message_row([n], f"t{n}") for n in range(1, 6)]
    first_lease, first = outbox_claim(limit=3, lease_seconds=60)
    second_lease, second = outbox_claim(limit=10, lease_seconds=600)
    assert [r.pk for r in first] == [r.pk for r in rows[:3]]
    assert [r.pk for r in second] == [r.pk for r in rows[3:]]
    assert outbox_claim(limit=10, lease_seconds=60)[1] == []
    assert all(r.attempts == 1 for r in first + second)

    # The first worker's lease expires; a third takes its rows over.
    later = timezone.now() + timedelta(seconds=61)
    third_lease, third = outbox_claim(limit=10, lease_seconds=60, now=later)
    assert [r.pk for r in third] == [r.pk for r in rows[:3]]
    # The first worker's late outcome changes nothing; the third's counts.
    stale = [Settlement(r.pk, "failed", failure=E901) for r in first]
    assert outbox_settle(lease=first_lease, settlements=stale) == 0
    assert outbox_record(lease=first_lease, results={rows[0].pk: {"random_id": 9}}) == set()
    assert (
        outbox_settle(
            lease=third_lease, settlements=[Settlement(r.pk, "sent", result={}) for r in third]
        )
        == 3
    )
    assert Outbox.objects.filter(status=OutboxStatus.SENT).count() == 3
    assert not ModerationFlag.objects.exists()
    assert outbox_release(lease=second_lease, ids=[r.pk for r in second]) == 2
    assert Outbox.objects.get(pk=rows[3].pk).locked_until is None


def test_only_some_channels_can_be_claimed() -> None:
    game = make_game(topic_id=5)
    post = post_board(game=game, text="Пост", kind="post")
    message_row([1], "Личное")
    lease, rows = outbox_claim(limit=10, lease_seconds=60, channels=[OutboxChannel.BOARD])
    assert [r.pk for r in rows] == [post.pk]
