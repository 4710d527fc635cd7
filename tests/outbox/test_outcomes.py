"""outbox.outcomes: backoff with jitter, give-up after the last attempt, the GM's flags."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.utils import timezone

from gameplay.models import (
    FlagKind,
    ModerationFlag,
    OutboxStatus,
)
from gameplay.services.common import send_message
from outbox.leases import outbox_claim
from outbox.outcomes import Failure, Settlement, outbox_settle, retry_delay
from tests.vkbot.delivery_support import make_game

pytestmark = pytest.mark.django_db

E10 = Failure(10, "Internal server error")


def test_retry_delay_grows_exponentially_with_jitter_and_a_cap(settings: Any) -> None:
    settings.OUTBOX_RETRY_BASE_MS = 1000
    settings.OUTBOX_RETRY_MAX_SECONDS = 60
    rng = random.Random(1)
    for attempts, full in [(1, 1), (2, 2), (3, 4), (5, 16), (7, 60), (30, 60)]:
        delays = [retry_delay(attempts, rng=rng) for _ in range(200)]
        assert all(full / 2 <= d <= full for d in delays)
        assert max(delays) - min(delays) > full / 4  # jittered, not one fixed value


def test_a_retry_backs_off_and_gives_up_after_max_attempts(settings: Any) -> None:
    settings.OUTBOX_MAX_ATTEMPTS = 3
    settings.OUTBOX_RETRY_BASE_MS = 1000
    game = make_game(players=2)
    row = send_message(game=game, peer_ids=[1001, 1002], text="Текст", kind="day")[0]
    now = timezone.now()
    for attempt in (1, 2):
        lease, (claimed,) = outbox_claim(limit=5, lease_seconds=60, now=now)
        outbox_settle(
            lease=lease,
            settlements=[
                Settlement(
                    row.pk,
                    "retry",
                    result={"random_id": 1, "sent": {"1001": 7}},
                    failure=E10,
                    waiting=[1002],
                )
            ],
            now=now,
        )
        claimed.refresh_from_db()
        assert claimed.status == OutboxStatus.PENDING and claimed.attempts == attempt
        assert claimed.last_error == "VK error 10: Internal server error"
        assert claimed.next_attempt_at is not None
        wait = (claimed.next_attempt_at - now).total_seconds()
        assert 2 ** (attempt - 1) / 2 <= wait <= 2 ** (attempt - 1)
        assert outbox_claim(limit=5, lease_seconds=60, now=now)[1] == []  # not due yet
        now = claimed.next_attempt_at
    lease, _ = outbox_claim(limit=5, lease_seconds=60, now=now)
    outbox_settle(
        lease=lease,
        settlements=[
            Settlement(
                row.pk,
                "retry",
                result={"random_id": 1, "sent": {"1001": 7}},
                failure=E10,
                waiting=[1002],
            )
        ],
        now=now,
    )
    row.refresh_from_db()
    # Delivered to one player and given up for the other: sent, the rest told to the GM.
    assert row.status == OutboxStatus.SENT
    assert row.result is not None
    assert row.result["failed"] == {
        "1002": "VK error 10: Internal server error (gave up after 3 attempts)"
    }
    flag = ModerationFlag.objects.get(game=game, kind=FlagKind.DELIVERY)
    assert flag.vk_user_id == 1002
    assert "внутренняя ошибка VK; 3 попытки, отправка остановлена" in flag.text


def test_a_created_chat_is_not_settled_here() -> None:
    """Linking a created chat is a service's write (gameplay.services.settle): the outbox's own
    settle refuses such a round and changes nothing."""
    game = make_game()
    [row] = send_message(game=game, peer_ids=[1001], text="Привет", kind="test")
    lease, _ = outbox_claim(limit=10, lease_seconds=60)
    with pytest.raises(ValueError):
        outbox_settle(
            lease=lease, settlements=[Settlement(row.pk, "sent", created_chat=2_000_000_001)]
        )
    row.refresh_from_db()
    assert row.status == OutboxStatus.PENDING
