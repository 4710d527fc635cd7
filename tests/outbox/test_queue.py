"""outbox.queue: the drain job enqueued after a commit, at most one waiting, the tick's
safety net."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from rq import Queue

from gameplay.models import (
    Outbox,
    OutboxStatus,
)
from gameplay.services.common import post_board, send_message
from ops.outages import Outage
from outbox import queue
from outbox.queue import DRAIN_QUEUED_KEY, delivery_started, enqueue_delivery, ensure_delivery
from tests.vkbot.delivery_support import make_game

pytestmark = pytest.mark.django_db


def _drain_jobs(queue: Queue) -> list[str]:
    names = [j.func_name for j in queue.get_jobs()]
    return [n for n in names if n is not None and n.endswith("drain_outbox")]


@pytest.mark.django_db(transaction=True)
def test_a_commit_with_outbox_rows_enqueues_one_drain(rq_queues: dict[str, Queue]) -> None:
    queue = rq_queues["vk"]
    game = make_game(topic_id=9)
    rq_queues["vk"].empty()
    queue.connection.delete(DRAIN_QUEUED_KEY)
    with transaction.atomic():
        send_message(game=game, peer_ids=range(1, 250), text="Всем", kind="all")  # three rows
        post_board(game=game, text="Пост", kind="post")
        assert _drain_jobs(queue) == []  # not before the commit
        assert (
            sum(
                1
                for _, func, _ in transaction.get_connection().run_on_commit
                if func.__name__ == "_enqueue_after_commit"
            )
            == 1
        )  # once per transaction
    assert _drain_jobs(queue) == ["vkbot.delivery.jobs.drain_outbox"]
    send_message(game=game, peer_ids=[1], text="Ещё", kind="more")
    assert len(_drain_jobs(queue)) == 1  # one is waiting already: no second
    delivery_started()  # the job starts: the next commit needs a new one
    send_message(game=game, peer_ids=[1], text="И ещё", kind="more")
    assert len(_drain_jobs(queue)) == 2
    delivery_started()
    with pytest.raises(RuntimeError), transaction.atomic():
        send_message(game=game, peer_ids=[1], text="Откат", kind="more")
        raise RuntimeError("rolled back")
    assert len(_drain_jobs(queue)) == 2


def test_no_drain_when_delivery_is_off(
    rq_queues: dict[str, Queue], django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.OUTBOX_DELIVERY_ENABLED = False
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        send_message(game=None, peer_ids=[1], text="Тихо", kind="quiet")
    assert callbacks == [] and _drain_jobs(rq_queues["vk"]) == []
    assert enqueue_delivery() is False


def test_a_redis_failure_after_commit_does_not_reach_the_caller(
    rq_queues: dict[str, Queue],
    django_capture_on_commit_callbacks: Any,
    monkeypatch: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import redis

    calls: list[dict[str, Any]] = []

    def broken(**kwargs: Any) -> bool:
        calls.append(kwargs)
        raise redis.exceptions.ConnectionError("down")

    monkeypatch.setattr("outbox.queue.enqueue_delivery", broken)
    monkeypatch.setattr("outbox.queue._redis", Outage("Redis", logging.getLogger("outbox.queue"),
                                                      who="Outbox drain"))  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        # no exception reaches the caller
        rows = send_message(game=None, peer_ids=[1], text="Текст", kind="x")
    queue._enqueue_after_commit()  # another commit's, while Redis is still away
    assert calls == [{}, {}]
    # One line for the outage, not one per commit.
    assert caplog.text.count("Outbox drain: Redis is unavailable (ConnectionError: down)") == 1
    assert Outbox.objects.get(pk=rows[0].pk).status == OutboxStatus.PENDING
    monkeypatch.setattr("outbox.queue.enqueue_delivery", lambda **kwargs: True)
    queue._enqueue_after_commit()
    assert "Outbox drain: Redis is back after" in caplog.text


def test_a_flag_whose_job_is_gone_does_not_block_the_next_drain(
    rq_queues: dict[str, Queue],
) -> None:
    queue = rq_queues["vk"]
    assert enqueue_delivery() is True
    assert enqueue_delivery() is False  # one is waiting
    queue.empty()  # an operator empties the queue; the flag stays
    assert enqueue_delivery() is True
    assert len(_drain_jobs(queue)) == 1


def test_a_drain_taken_by_a_worker_killed_before_it_started_does_not_block_the_next(
    rq_queues: dict[str, Queue],
) -> None:
    from rq.job import JobStatus

    queue = rq_queues["vk"]
    assert enqueue_delivery() is True
    [job] = queue.get_jobs()
    # What a worker does when it takes a job: rq moves it to its intermediate list; killed
    # there, the job stays "queued" though no worker will run it.
    queue.connection.lmove(queue.key, queue.intermediate_queue_key)
    assert job.get_status(refresh=True) == JobStatus.QUEUED
    assert queue.get_job_ids() == []
    assert enqueue_delivery() is True
    assert len(_drain_jobs(queue)) == 1
    assert enqueue_delivery() is False  # and that one does wait
    queue.connection.delete(queue.intermediate_queue_key)


def test_the_tick_safety_net_enqueues_a_drain_only_for_due_rows_with_none_waiting(
    rq_queues: dict[str, Queue], django_capture_on_commit_callbacks: Any
) -> None:
    from gameplay import jobs

    queue = rq_queues["vk"]
    assert ensure_delivery() is False  # nothing is due
    with django_capture_on_commit_callbacks(execute=False):  # the commit's drain is lost
        [row] = send_message(game=None, peer_ids=[1], text="Текст", kind="x")
    Outbox.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() + timedelta(minutes=1))
    assert ensure_delivery() is False  # in backoff: its own scheduled drain sends it
    Outbox.objects.filter(pk=row.pk).update(
        next_attempt_at=None, locked_until=timezone.now() + timedelta(minutes=1)
    )
    assert ensure_delivery() is False  # leased by a worker sending it now
    Outbox.objects.filter(pk=row.pk).update(locked_until=timezone.now() - timedelta(seconds=1))
    report = jobs.tick()  # the lease ran out (the worker died): due again
    assert report["drain_enqueued"] is True
    assert _drain_jobs(queue) == ["vkbot.delivery.jobs.drain_outbox"]
    assert jobs.tick()["drain_enqueued"] is False  # one is waiting already
    assert len(_drain_jobs(queue)) == 1


def test_a_later_drain_is_scheduled_once(rq_queues: dict[str, Queue]) -> None:
    queue = rq_queues["vk"]
    assert enqueue_delivery(delay=30) is True
    assert enqueue_delivery(delay=40) is False  # one is due earlier already
    assert enqueue_delivery(delay=5) is True  # earlier than the scheduled one
    assert len(queue.scheduled_job_registry.get_job_ids()) == 2
    for job_id in queue.scheduled_job_registry.get_job_ids():
        queue.scheduled_job_registry.remove(job_id, delete_job=True)
