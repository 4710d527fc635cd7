"""The Outbox writes of the delivery (outbox.leases, outbox.outcomes): leases, outcomes, backoff,
give-up, the GM's retry, and the drain job enqueued after a commit."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from rq import Queue

from gameplay.models import (
    FlagKind,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.common import post_board, send_message
from gameplay.services.retries import outbox_retry
from outbox.ids import outbox_random_id
from outbox.leases import outbox_claim, outbox_record, outbox_release
from outbox.outcomes import Failure, Settlement, outbox_settle, retry_delay
from outbox.queue import DRAIN_QUEUED_KEY, delivery_started, enqueue_delivery, ensure_delivery
from tests.vkbot.delivery_support import make_game, message_row

pytestmark = pytest.mark.django_db

E901 = Failure(901, "Can't send messages for users without permission")
E10 = Failure(10, "Internal server error")


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
    post = post_board(game, "Пост", kind="post")
    message_row([1], "Личное")
    lease, rows = outbox_claim(limit=10, lease_seconds=60, channels=[OutboxChannel.BOARD])
    assert [r.pk for r in rows] == [post.pk]


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
    row = send_message(game, [1001, 1002], "Текст", kind="day")[0]
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
    assert row.result["failed"] == {
        "1002": "VK error 10: Internal server error (gave up after 3 attempts)"
    }
    flag = ModerationFlag.objects.get(game=game, kind=FlagKind.DELIVERY)
    assert flag.vk_user_id == 1002
    assert "внутренняя ошибка VK (ошибка VK 10); 3 попытки, отправка остановлена" in flag.text


def test_gm_retry_of_a_failed_message(rq_queues: dict[str, Queue], settings: Any) -> None:
    game = make_game(players=2)
    row = send_message(game, [1001], "Текст", kind="day")[0]
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
        assert outbox_retry(outbox_id=row.pk, by="gm:anna").status == OutboxStatus.PENDING
    row.refresh_from_db()
    assert row.attempts == 0 and row.last_error == "" and row.next_attempt_at is None
    assert "failed" not in row.result and row.result["random_id"] == outbox_random_id(row.pk)
    event = GameEvent.objects.get(game=game, kind="outbox_retried")
    assert event.actor == "gm:anna" and event.data["recipients"] == [1001]
    assert event.data["error"].startswith("VK error 901")
    with pytest.raises(InvalidCommand, match="ещё в очереди"):
        outbox_retry(outbox_id=row.pk, by="gm:anna")
    with pytest.raises(InvalidCommand) as unknown:
        outbox_retry(outbox_id=row.pk + 1000, by="gm:anna")
    with pytest.raises(InvalidCommand) as foreign:  # another game's id: told nothing more
        outbox_retry(outbox_id=row.pk, by="gm:anna", game_id=game.pk + 1)
    assert foreign.value.reason == unknown.value.reason == "Такого сообщения нет."


def test_gm_retry_of_recipients_refused_in_a_sent_message() -> None:
    game = make_game(players=2)
    row = send_message(game, [1001, 1002], "Текст", kind="day")[0]
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
    outbox_retry(outbox_id=row.pk, by="gm:anna")
    row.refresh_from_db()
    assert row.status == OutboxStatus.PENDING
    assert row.result["sent"] == {"1001": 3} and "failed" not in row.result
    with pytest.raises(InvalidCommand):
        outbox_retry(outbox_id=row.pk, by="gm:anna")
    delivered = message_row([5], "Готово")
    Outbox.objects.filter(pk=delivered.pk).update(status=OutboxStatus.SENT)
    with pytest.raises(InvalidCommand, match="уже доставлено"):
        outbox_retry(outbox_id=delivered.pk, by="gm:anna")


def test_gm_retry_of_a_merged_board_post_retries_its_whole_comment() -> None:
    game = make_game(topic_id=77)
    posts = [post_board(game, f"Пост {n}", kind="post") for n in range(3)]
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
    outbox_retry(outbox_id=posts[1].pk, by="gm:anna")
    statuses = [Outbox.objects.get(pk=p.pk).status for p in posts]
    assert statuses == [OutboxStatus.PENDING, OutboxStatus.PENDING, OutboxStatus.SENT]
    assert Outbox.objects.get(pk=posts[0].pk).result["board"]["guid"] == "g"


# --- the drain job after a commit ---------------------------------------------------------------


def _drain_jobs(queue: Queue) -> list[str]:
    return [j.func_name for j in queue.get_jobs() if j.func_name.endswith("drain_outbox")]


@pytest.mark.django_db(transaction=True)
def test_a_commit_with_outbox_rows_enqueues_one_drain(rq_queues: dict[str, Queue]) -> None:
    queue = rq_queues["vk"]
    game = make_game(topic_id=9)
    rq_queues["vk"].empty()
    queue.connection.delete(DRAIN_QUEUED_KEY)
    with transaction.atomic():
        send_message(game, range(1, 250), "Всем", kind="all")  # three rows
        post_board(game, "Пост", kind="post")
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
    send_message(game, [1], "Ещё", kind="more")
    assert len(_drain_jobs(queue)) == 1  # one is waiting already: no second
    delivery_started()  # the job starts: the next commit needs a new one
    send_message(game, [1], "И ещё", kind="more")
    assert len(_drain_jobs(queue)) == 2
    delivery_started()
    with pytest.raises(RuntimeError), transaction.atomic():
        send_message(game, [1], "Откат", kind="more")
        raise RuntimeError("rolled back")
    assert len(_drain_jobs(queue)) == 2


def test_no_drain_when_delivery_is_off(
    rq_queues: dict[str, Queue], django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.OUTBOX_DELIVERY_ENABLED = False
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        send_message(None, [1], "Тихо", kind="quiet")
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
    with django_capture_on_commit_callbacks(execute=True):
        rows = send_message(None, [1], "Текст", kind="x")  # no exception reaches the caller
    assert calls == [{}]
    assert "Could not enqueue the Outbox drain (down)" in caplog.text
    assert Outbox.objects.get(pk=rows[0].pk).status == OutboxStatus.PENDING


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
        [row] = send_message(None, [1], "Текст", kind="x")
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
