"""Enqueueing the Outbox drain job: after a commit that queued rows, at most one waiting.

The job is named by dotted path (``settings.OUTBOX_DELIVERY_JOB``): neither gameplay nor the
outbox imports vkbot. ``gameplay.services.common`` calls :func:`request_delivery` when it queues
rows; the job calls
:func:`delivery_started` first and :func:`enqueue_delivery` again when rows remain; every
deadline tick calls :func:`ensure_delivery`, the safety net for a drain lost on the way.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import timedelta
from typing import Any, cast

import django_rq
from django.conf import settings
from django.db import connection, transaction
from rq.job import JobStatus

from ops.outages import Outage

from .leases import outbox_due_exists

log = logging.getLogger(__name__)

#: Redis as the commits of this process see it: one line when it is lost, one when it is back.
_redis = Outage("Redis", log, who="Outbox drain")

#: Redis keys: a drain job is waiting in the queue / one is scheduled for a later time.
DRAIN_QUEUED_KEY = "vkmafia:outbox:drain:queued"
DRAIN_SCHEDULED_KEY = "vkmafia:outbox:drain:scheduled"
#: A flag outlives a lost job (Redis flushed, worker gone) by at most this many seconds.
DRAIN_FLAG_TTL = 300
DRAIN_JOB_TIMEOUT = 600


def request_delivery() -> None:
    """Enqueue a drain of the Outbox once the current transaction commits (once per
    transaction; at once outside a transaction). Never raises into the caller's command."""
    if not settings.OUTBOX_DELIVERY_ENABLED:
        return
    if connection.in_atomic_block and _requested_in_this_transaction():
        return
    transaction.on_commit(_enqueue_after_commit)


def _requested_in_this_transaction() -> bool:
    pending = getattr(connection, "run_on_commit", None) or []
    return any(len(entry) > 1 and entry[1] is _enqueue_after_commit for entry in pending)


def _enqueue_after_commit() -> None:
    try:
        enqueue_delivery()
    except Exception as error:  # noqa: BLE001 - the command has committed; the rows wait
        _redis.lost(error, then="rows committed meanwhile wait for the next drain")
        return
    _redis.back()


def enqueue_delivery(*, delay: float = 0.0) -> bool:
    """Enqueue the drain job (``settings.OUTBOX_DELIVERY_JOB``) on the delivery queue, now or
    in ``delay`` seconds (the worker's scheduler moves it to the queue then), unless one is
    already waiting for that time or earlier. Returns whether a job was enqueued.

    A Redis key names the waiting job; a key whose job is gone (the queue was emptied, the job
    started) does not hold a new one back. Raises ``redis.exceptions.RedisError`` when Redis
    cannot be reached."""
    if not settings.OUTBOX_DELIVERY_ENABLED:
        return False
    # "auto": enqueue now — this runs after the commit already (or outside any transaction).
    queue = django_rq.get_queue(settings.OUTBOX_DELIVERY_QUEUE, commit_mode="auto")
    redis = queue.connection
    job_id = f"vkmafia-drain-{uuid.uuid4().hex}"
    options: dict[str, Any] = {
        "job_id": job_id,
        "job_timeout": DRAIN_JOB_TIMEOUT,
        "result_ttl": 120,
        "failure_ttl": 7 * 24 * 3600,
        "description": "drain the Outbox to VK",
    }
    if delay <= 0:
        if not redis.set(DRAIN_QUEUED_KEY, job_id, nx=True, ex=DRAIN_FLAG_TTL):
            waiting = redis.get(DRAIN_QUEUED_KEY)
            if waiting is not None and _job_waits(queue, waiting):
                return False
            redis.set(DRAIN_QUEUED_KEY, job_id, ex=DRAIN_FLAG_TTL)
        try:
            queue.enqueue(settings.OUTBOX_DELIVERY_JOB, **options)
        except Exception:
            redis.delete(DRAIN_QUEUED_KEY)
            raise
        return True
    at = time.time() + delay
    current = cast("bytes | None", redis.get(DRAIN_SCHEDULED_KEY))  # no decode_responses
    if current is not None:
        when, _, scheduled = current.decode().partition(" ")
        if float(when) <= at + 1.0 and _job_waits(queue, scheduled):
            return False
    redis.set(DRAIN_SCHEDULED_KEY, f"{at!r} {job_id}", ex=int(delay) + DRAIN_FLAG_TTL)
    queue.enqueue_in(timedelta(seconds=delay), settings.OUTBOX_DELIVERY_JOB, **options)
    return True


def ensure_delivery() -> bool:
    """The safety net, run by every deadline tick: when Outbox rows are due and no drain waits
    for them, enqueue one. Returns whether it did.

    Normally the commit that queued a row has enqueued a drain already; this catches a drain
    lost on the way (Redis unreachable at commit time, Redis flushed, a worker killed between
    taking the job and starting it), so a row waits at most one tick. Raises
    ``redis.exceptions.RedisError`` when Redis cannot be reached."""
    if not settings.OUTBOX_DELIVERY_ENABLED or not outbox_due_exists():
        return False
    enqueued = enqueue_delivery()
    if enqueued:
        # Also when a running drain simply has not reached them yet: one extra drain is cheap.
        log.info("Outbox rows were due with no drain waiting for them; enqueued one")
    return enqueued


def _job_waits(queue: Any, job_id: bytes | str) -> bool:
    """Whether the drain job ``job_id`` is still waiting to run: in the queue's list, or in
    its scheduled registry.

    The job's status alone is not enough: a worker killed right after it took a job from the
    queue (rq moves it to an intermediate list first) leaves the job ``queued`` though no
    worker will ever run it, and trusting that status would hold every new drain back until
    the flag expires."""
    job_id = job_id.decode() if isinstance(job_id, bytes) else job_id
    job = queue.fetch_job(job_id)
    if job is None:
        return False
    status = job.get_status()
    if status == JobStatus.QUEUED:
        return queue.get_job_position(job_id) is not None
    if status == JobStatus.SCHEDULED:
        return job_id in queue.scheduled_job_registry
    return False


def delivery_started() -> None:
    """The drain job calls this first: a commit from now on enqueues another drain, so no row
    committed while this one runs can be missed."""
    redis = django_rq.get_queue(settings.OUTBOX_DELIVERY_QUEUE).connection
    redis.delete(DRAIN_QUEUED_KEY)
    current = cast("bytes | None", redis.get(DRAIN_SCHEDULED_KEY))  # no decode_responses
    if current is not None and float(current.decode().partition(" ")[0]) <= time.time() + 1.0:
        redis.delete(DRAIN_SCHEDULED_KEY)
