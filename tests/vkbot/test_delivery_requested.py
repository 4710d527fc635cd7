"""Every Outbox row the bot's own answers write asks for a drain once its transaction commits,
so a reply («статус», a refusal, a button's answer, an invite link, an intruder's removal, an
answer in the board) goes out at once, not with the next unrelated message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gameplay.models import Outbox
from gameplay.services.replies import answer_event, reply
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "write",
    [
        lambda: reply(vk_user_id=42, text="Статус: вы не в игре."),
        lambda: answer_event(event_id="e1", user_id=42, peer_id=42, snackbar="Ок"),
    ],
    ids=["reply", "event_answer"],
)
def test_a_bot_answer_enqueues_the_drain_after_commit(
    write: Callable[[], Any], rq_queues: Any, django_capture_on_commit_callbacks: Any
) -> None:
    queue = rq_queues["vk"]
    queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            write()
        assert Outbox.objects.count() == 1
        assert len(callbacks) == 1
        assert len(queue.get_job_ids()) == 1
    finally:
        queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
