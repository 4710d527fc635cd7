"""The django-rq job that drains the Outbox (``settings.OUTBOX_DELIVERY_JOB``).

Enqueued on the ``vk`` queue after every commit that queued Outbox rows (at most one waiting
at a time, see ``outbox.queue.enqueue_delivery``). A run sends until nothing is due,
waiting inline for retries and expired leases that fall due within a few seconds, for 20 seconds
at most (so that a worker shared with the deadline tick gets back to it soon); then it enqueues
itself again if rows remain — at once if some are due, else for when the next one is
(``rqworker --with-scheduler`` moves it into the queue then). A run that finds the database
away ends quietly and tries again later; the outage is one line when it starts and one when it
ends across the worker's jobs (``gameplay.jobs.database_outage``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, close_old_connections, connection
from redis.exceptions import RedisError

from gameplay.jobs import database_outage
from ops.outages import database_lost
from outbox.queue import delivery_started, enqueue_delivery

from .drain import drain

log = logging.getLogger(__name__)

#: One run's bounds: its length, and how far ahead it waits for a retry instead of ending.
RUN_SECONDS = 20.0
WAIT_UP_TO = 5.0
#: After a run that could claim nothing although rows were due, look again this much later.
LOOK_AGAIN_AFTER = 5.0
#: After a run that failed (the database unreachable, …), try again this much later.
RETRY_FAILED_RUN_AFTER = 30.0


def drain_outbox() -> dict[str, Any]:
    """Deliver what is due; returns the run's report (kept by rq as the job's result)."""
    delivery_started()
    _refresh_db_connection()
    try:
        report = drain(max_seconds=RUN_SECONDS, wait_up_to=WAIT_UP_TO)
    except DatabaseError as error:
        _enqueue_quietly(RETRY_FAILED_RUN_AFTER)
        if not database_lost(error):
            raise
        then = f"the Outbox waits; a drain tries again in {RETRY_FAILED_RUN_AFTER:g} s"
        database_outage(log).lost(error, then=then)
        return {"database": "unavailable"}
    except Exception:
        _enqueue_quietly(RETRY_FAILED_RUN_AFTER)
        raise
    finally:
        _refresh_db_connection()
    database_outage(log).back()
    if report.next_due_in is not None:
        delay = report.next_due_in
        if report.claimed == 0:  # due, yet nothing could be taken (another worker holds it)
            delay = max(delay, LOOK_AGAIN_AFTER)
        _enqueue_quietly(delay)
    log.info("Delivery run: %s", report.as_dict())
    return report.as_dict()


def _enqueue_quietly(delay: float) -> None:
    try:
        enqueue_delivery(delay=delay)
    except RedisError as error:  # the next commit (or a worker's restart) enqueues it again
        log.warning("Could not enqueue the next Outbox drain: %s", error)


def _refresh_db_connection() -> None:
    """Drop a broken or too old database connection, as Django does per request."""
    if not connection.in_atomic_block:
        close_old_connections()
