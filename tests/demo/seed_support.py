"""What the tests of ``demo_seed`` share: its fixtures and the local VK it runs against."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from demo import config
from localvk import LocalVK
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY


@pytest.fixture(autouse=True)
def debug_on(settings: Any) -> None:
    """``manage.py demo_seed`` runs with DEBUG on only (the test runner turns it off)."""
    settings.DEBUG = True


@pytest.fixture(autouse=True)
def drain_flags(rq_queues: Any) -> Iterator[None]:
    """The seed enqueues Outbox drains: leave no «drain queued» flag to the next tests."""
    redis = rq_queues["vk"].connection
    redis.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
    yield
    redis.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)


def local_vk() -> LocalVK:
    return LocalVK(
        group_id=config.GROUP_ID,
        group_token=config.GROUP_TOKEN,
        user_tokens={config.USER_TOKEN: config.ADMIN_USER_ID},
        group_rps=10_000,
        user_rps=10_000,
    )
