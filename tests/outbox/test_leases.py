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
from outbox.leases import (
    outbox_claim,
    outbox_due_groups,
    outbox_postpone,
    outbox_record,
    outbox_release,
)
from outbox.outcomes import Failure, Settlement, outbox_settle
from tests.gameplay.factories import queued
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
    post = queued(post_board(game=game, text="Пост", kind="post"))
    message_row([1], "Личное")
    lease, rows = outbox_claim(limit=10, lease_seconds=60, channels=[OutboxChannel.BOARD])
    assert [r.pk for r in rows] == [post.pk]


def test_a_claim_takes_communities_in_turns_each_in_id_order() -> None:
    burst = [message_row([n], f"a{n}", group_id=77) for n in range(1, 11)]
    other = [message_row([100 + n], f"b{n}", group_id=88) for n in range(1, 3)]
    loose = message_row([200], "no community")  # counts as the default community, 77

    _, rows = outbox_claim(limit=5, lease_seconds=60, default_group=77)

    # Turn 1: 77's first and 88's first; turn 2: 77's second and 88's second; then 77's third.
    assert {r.pk for r in rows} == {burst[0].pk, other[0].pk, burst[1].pk, other[1].pk,
                                    burst[2].pk}  # fmt: skip
    _, rest = outbox_claim(limit=100, lease_seconds=60, default_group=77)
    assert [r.pk for r in rest] == [r.pk for r in burst[3:]] + [loose.pk]


def test_a_claim_takes_only_the_communities_given_and_as_many_rows_as_their_bound() -> None:
    first = [message_row([n], f"a{n}", group_id=77) for n in range(1, 6)]
    second = [message_row([100 + n], f"b{n}", group_id=88) for n in range(1, 6)]
    message_row([300], "c", group_id=99)

    _, rows = outbox_claim(limit=100, lease_seconds=60, groups={77: 2, 88: 4})

    assert [r.pk for r in rows] == [r.pk for r in first[:2] + second[:4]]
    assert outbox_claim(limit=100, lease_seconds=60, groups={})[1] == []


def test_board_topics_are_taken_in_turns_across_communities() -> None:
    def post(topic: int, group: int) -> Outbox:
        return Outbox.objects.create(
            channel=OutboxChannel.BOARD, topic_id=topic, text="пост", group_id=group
        )

    posts = [post(10 + n, 77) for n in range(3)]
    theirs = post(10, 88)  # the same topic id, in another community

    _, rows = outbox_claim(
        limit=100, lease_seconds=60, channels=[OutboxChannel.BOARD], max_topics=2,
        board_groups={77: 5, 88: 5},
    )  # fmt: skip

    assert [r.pk for r in rows] == [posts[0].pk, theirs.pk]  # 77's oldest topic, then 88's


def test_postponed_rows_stay_pending_with_no_attempt_and_are_due_later() -> None:
    waiting = message_row([1], "a", group_id=88)
    loose = message_row([2], "b")  # the default community's
    going = message_row([3], "c", group_id=77)
    until = timezone.now() + timedelta(seconds=30)

    assert outbox_postpone(groups=[88, 99], channels=["message"], until=until) == 1
    assert outbox_postpone(groups=[77], channels=["message"], until=until, default_group=77) == 2

    for row in (waiting, loose, going):
        row.refresh_from_db()
        assert row.status == OutboxStatus.PENDING and row.attempts == 0
        assert row.next_attempt_at == until and row.locked_until is None
    assert outbox_claim(limit=10, lease_seconds=60)[1] == []
    later = until + timedelta(seconds=1)
    assert outbox_due_groups(channels=["message"], default_group=77, now=later) == {77, 88}
    assert len(outbox_claim(limit=10, lease_seconds=60, now=later)[1]) == 3
