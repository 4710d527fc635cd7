"""The bench's lower bounds of VK requests: VK's limits alone, and with the reply-latency
target on top (a reply must go out within so many seconds of its commit)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.bound import lower_bound, send_instants, timely_bound
from gameplay.models import Outbox, OutboxChannel

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def reply(at: float, peer: int, text: str = "Статус игры") -> Outbox:
    return Outbox(channel=OutboxChannel.MESSAGE, text=text, peer_ids=[peer],
                  created_at=T0 + timedelta(seconds=at))  # fmt: skip


def post(at: float, topic: int = 7) -> Outbox:
    return Outbox(channel=OutboxChannel.BOARD, text="Голос учтён", topic_id=topic,
                  created_at=T0 + timedelta(seconds=at))  # fmt: skip


def test_send_instants_are_the_fewest_that_leave_no_commit_waiting_longer() -> None:
    assert send_instants([], 2.0) == 0
    assert send_instants([0.0, 1.0, 2.0], 2.0) == 1  # one send at 2.0 covers all three
    assert send_instants([0.0, 2.1, 4.2, 6.3, 8.4], 2.0) == 5  # each more than 2 s after the last
    assert send_instants([0.3, 2.3, 4.3, 6.3, 8.3], 2.0) == 3  # sends at 2.3, 6.3 and 10.3
    assert send_instants([5.0, 0.0], 1.0) == 2  # order does not matter


def test_replies_spread_wider_than_the_target_need_a_request_each_window() -> None:
    replies = [reply(at, peer=100 + int(at)) for at in (0.0, 3.0, 6.0, 9.0, 12.0)]
    assert lower_bound(replies) == 1  # one execute could carry them all, at the end
    assert timely_bound(replies, 2.0) == 5  # but not within 2 s of each
    assert timely_bound(replies, 60.0) == 1


def test_board_posts_keep_vk_limits_alone() -> None:
    """No latency target holds a board comment: a day's posts may share one."""
    rows = [post(at) for at in (0.0, 5.0, 10.0)] + [reply(0.0, peer=1), reply(0.5, peer=2)]
    assert lower_bound(rows) == 2  # one comment (user token), one execute (group token)
    assert timely_bound(rows, 2.0) == 2
