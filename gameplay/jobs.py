"""django-rq jobs of the gameplay app: the deadline tick (which also applies the Callback API's
events left waiting in the inbox, ``settings.CALLBACK_INBOX_SWEEP``, and makes sure a drain waits
for any due Outbox row: ``outbox.queue.ensure_delivery``).

This is the deadlines' worker, not delivery machinery: it closes phases and sends reminders
through ``gameplay.services.deadlines``, and only asks the outbox for a drain. The drain job
itself is ``vkbot.delivery.jobs``.

Ticking: time is cut into slots of ``settings.DEADLINE_TICK_SECONDS`` counted from the Unix
epoch, and the tick of slot ``n`` is an rq job scheduled (``enqueue_at``) for the slot's start
with the fixed id ``gameplay-tick-<seconds>-<n>``. ``schedule_next_tick`` schedules the next
slot's tick unless a job with that id exists (rq's atomic ``unique`` scheduling), so any number
of callers can ensure it at once and the result is one tick per slot. It is called by

- every tick, when it ends (successful or not): the chain goes on by itself;
- the worker (``gameplay.worker``), on start, at least once a slot while it runs, and right
  after it reconnects to Redis: a Redis restart or ``FLUSHALL`` that wiped the scheduled tick
  costs at most one slot.

A due tick is moved into the queue by whichever comes first: any worker of the project
(``gameplay.worker``, which looks about once a second, see :func:`enqueue_due_ticks`) or rq's
scheduler (``rqworker --with-scheduler``). rq's scheduler runs in one worker at a time, under a
lock that a killed worker keeps for 61 s; the workers need no lock, so a killed worker's
successor, or any other worker, moves the tick on time. The deadlines themselves, and the
reminders already sent, are database rows, so nothing else lives in Redis and nothing is lost
with it; a late tick closes what became due meanwhile.

A tick that finds the database away (PostgreSQL stopped or restarting) ends quietly: the
outage is one line when it starts and one when it ends, across every tick and drain of every
worker (``ops.outages.SharedOutage``), and the next tick tries again.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import django_rq
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils.module_loading import import_string
from redis.exceptions import RedisError
from rq import Queue
from rq.exceptions import DuplicateJobError

from gameplay.services.deadlines import deadline_tick
from ops.outages import DATABASE_OUTAGE_KEY, SharedOutage, database_lost
from outbox.queue import ensure_delivery

log = logging.getLogger(__name__)

#: The django-rq queue the tick runs on.
TICK_QUEUE = "default"
TICK_JOB_PREFIX = "gameplay-tick-"
#: How long a finished tick's result stays in Redis (seconds), and a failed one's.
TICK_RESULT_TTL = 3600
TICK_FAILURE_TTL = 24 * 3600


def tick_seconds() -> int:
    return int(settings.DEADLINE_TICK_SECONDS)


def tick_job_id(slot: int, seconds: int | None = None) -> str:
    return f"{TICK_JOB_PREFIX}{seconds or tick_seconds()}-{slot}"


def next_slot(now: datetime | None = None, seconds: int | None = None) -> tuple[int, datetime]:
    """The next slot that starts at least a second from now, and its start."""
    seconds = seconds or tick_seconds()
    ts = (now or datetime.now(UTC)).timestamp()
    slot = int(ts // seconds) + 1
    if slot * seconds - ts < 1:
        slot += 1
    return slot, datetime.fromtimestamp(slot * seconds, UTC)


def schedule_next_tick(*, queue: Queue | None = None, now: datetime | None = None) -> str:
    """Make sure the next slot's tick is scheduled; returns its job id. Idempotent.

    Raises ``redis.exceptions.RedisError`` when Redis cannot be reached.
    """
    queue = queue if queue is not None else django_rq.get_queue(TICK_QUEUE)
    seconds = tick_seconds()
    slot, at = next_slot(now, seconds)
    job_id = tick_job_id(slot, seconds)
    try:
        queue.enqueue_at(
            at,
            tick,
            job_id=job_id,
            unique=True,
            description=f"deadline tick at {at:%H:%M:%S} UTC",
            result_ttl=TICK_RESULT_TTL,
            failure_ttl=TICK_FAILURE_TTL,
            job_timeout=max(300, 2 * seconds),
        )
        log.debug("Scheduled the deadline tick %s", job_id)
    except DuplicateJobError:
        pass
    return job_id


def enqueue_due_ticks(queue: Queue, now: float | None = None) -> list[str]:
    """Move the tick jobs that are due from the scheduled registry into the queue; returns
    their ids. Any number of workers may call it at once: removing the id from the registry
    is the claim, so one caller enqueues each tick (rq's scheduler, which moves it without
    such a claim, may rarely enqueue the same tick again: a tick is safe to run twice).

    Raises ``redis.exceptions.RedisError`` when Redis cannot be reached.
    """
    registry = queue.scheduled_job_registry
    due = [
        job_id
        for job_id in registry.get_jobs_to_schedule(int(now if now is not None else time.time()))
        if job_id.startswith(TICK_JOB_PREFIX)
    ]
    moved = []
    for job_id in due:
        if not queue.connection.zrem(registry.key, job_id):
            continue  # another worker, or rq's scheduler, took it
        job = queue.fetch_job(job_id)
        if job is None:
            continue  # expired meanwhile: the next slot's tick follows
        queue._enqueue_job(job, at_front=True)  # as rq's scheduler does (a private method)
        moved.append(job_id)
    return moved


def tick() -> dict[str, Any]:
    """The scheduled job: close the phases whose deadline passed, send due reminders, make
    sure a drain waits for any due Outbox row, and make sure the next tick is scheduled.
    Returns the tick's report."""
    _refresh_db_connection()
    try:
        report = deadline_tick().as_dict()
        callbacks = _sweep_callback_inbox()
        if callbacks:
            report["callbacks_applied"] = callbacks
        report["drain_enqueued"] = _ensure_delivery()
        database_outage(log).back()
        return report
    except DatabaseError as error:
        if not database_lost(error):
            raise
        database_outage(log).lost(error, then="the next tick tries again")
        return {"database": "unavailable"}
    finally:
        _refresh_db_connection()
        try:
            schedule_next_tick()
        except RedisError as error:  # the worker schedules it again once Redis is back
            log.warning("Could not schedule the next deadline tick: %s", error)


def _sweep_callback_inbox() -> int:
    """Apply the Callback API's events that wait in the inbox (``settings.CALLBACK_INBOX_SWEEP``,
    by dotted path: the bot's applier), should no web process be applying them; how many."""
    path = getattr(settings, "CALLBACK_INBOX_SWEEP", "")
    if not path:
        return 0
    try:
        return int(import_string(path)())
    except DatabaseError:
        raise
    except Exception:  # a bug of the applier's: the tick's own work goes on
        log.exception("The tick could not apply the Callback inbox")
        return 0


def _ensure_delivery() -> bool:
    try:
        return ensure_delivery()
    except RedisError as error:  # the next tick tries again
        log.warning("Could not check the Outbox drain: %s", error)
        return False


def database_outage(logger: logging.Logger) -> SharedOutage:
    """The database's outage as the worker's jobs see it (ticks and drains, any worker)."""
    return SharedOutage(
        "The database", logger, key=DATABASE_OUTAGE_KEY, redis=django_rq.get_connection(TICK_QUEUE)
    )


def pending_ticks(queue: Queue | None = None) -> list[str]:
    """Ids of the tick jobs scheduled or queued (for the operator and the tests)."""
    queue = queue if queue is not None else django_rq.get_queue(TICK_QUEUE)
    ids = list(queue.scheduled_job_registry.get_job_ids()) + list(queue.get_job_ids())
    return [i for i in ids if i.startswith(TICK_JOB_PREFIX)]


def _refresh_db_connection() -> None:
    """Drop a database connection that is broken or too old, as Django does per request (a
    worker lives for weeks). Never inside a transaction: that is the caller's to finish."""
    if not connection.in_atomic_block:
        close_old_connections()
