"""The project's rq worker classes (``settings.RQ["WORKER_CLASS"]``): rq's workers that also
keep the deadline tick going (``gameplay.jobs``).

``manage.py rqworker default vk --with-scheduler`` runs one of them. On start, at least once a
tick interval while it waits for jobs, and right after it reconnects to Redis, the worker

- makes sure the next deadline tick is scheduled (idempotent: one job id per time slot), so a
  Redis restart or ``FLUSHALL`` that wiped the scheduled tick stops ticking for one slot at
  most;
- restarts its rq scheduler process if it died: rq's scheduler process exits on a lost Redis
  connection and rq itself would only restart it at its next maintenance run (10 minutes).

Before its first job it imports the jobs it runs (:func:`preload_jobs`), so that the work
horses it forks inherit them. Nothing here touches the database: deadlines are read by the
tick itself.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from redis.exceptions import RedisError
from rq.worker import SimpleWorker as RqSimpleWorker
from rq.worker import Worker as RqWorker

from gameplay.jobs import TICK_QUEUE, schedule_next_tick, tick_seconds

log = logging.getLogger(__name__)


class DeadlineTickerMixin:
    """Keeps the deadline tick scheduled from inside an rq worker (see the module)."""

    _next_keep_at: float = 0.0
    _burst: bool = False

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        self._burst = burst
        self._next_keep_at = 0.0
        preload_jobs()
        return super().work(burst, *args, **kwargs)  # type: ignore[misc]

    @property
    def dequeue_timeout(self) -> int:
        # Wake up at least once a tick interval, so that the keeper runs while queues are idle.
        return max(1, min(super().dequeue_timeout, tick_seconds()))  # type: ignore[misc]

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """rq's heartbeat, which the worker sends before each wait for a job, after each job
        and while a job runs; the keeper rides on it."""
        try:
            super().heartbeat(timeout, pipeline)  # type: ignore[misc]
        except RedisError:
            self._next_keep_at = 0.0  # Redis is gone: keep ticking as soon as it is back
            raise
        self.keep_deadlines_ticking()

    def keep_deadlines_ticking(self) -> None:
        """Ensure the next tick is scheduled and the scheduler runs; at most once an interval
        unless Redis was lost. Never raises: a failure is logged and retried."""
        if (
            self.is_horse  # type: ignore[attr-defined]
            or getattr(self, "_stop_requested", False)  # shutting down: start nothing
            or time.monotonic() < self._next_keep_at
        ):
            return
        queue = next((q for q in self.queues if q.name == TICK_QUEUE), None)  # type: ignore[attr-defined]
        if queue is None:
            return
        try:
            self._restart_dead_scheduler()
            schedule_next_tick(queue=queue)
        except RedisError as error:
            log.warning("Deadline ticking: Redis unavailable (%s); retrying", error)
            return
        except Exception:  # noqa: BLE001 - the worker must go on delivering messages
            log.exception("Deadline ticking: could not schedule the next tick")
        self._next_keep_at = time.monotonic() + tick_seconds()

    def _restart_dead_scheduler(self) -> None:
        scheduler = getattr(self, "scheduler", None)
        if scheduler is None or self._burst:
            return
        process = getattr(scheduler, "_process", None)
        if process is not None and process.is_alive():
            return
        if scheduler.acquire_locks(auto_start=True):
            log.info("Deadline ticking: (re)started the rq scheduler")


def preload_jobs() -> None:
    """Import the project's jobs (by their dotted paths) before the first fork, and freeze
    what is loaded then out of the garbage collector's sight.

    rq's forking worker runs each job in a child process. Without this, every child imports
    the job's modules anew (the Outbox drain brings in vkbottle: about a second of CPU per
    job), and its first full garbage collection walks every object it inherited, writing to
    — so copying — most of the parent's memory pages."""
    for path in (settings.OUTBOX_DELIVERY_JOB, "gameplay.jobs.tick"):
        try:
            import_string(path)
        except ImportError as error:  # the job itself reports it when it runs
            log.warning("Could not preload the job %s: %s", path, error)
    gc.collect()
    gc.freeze()


class Worker(DeadlineTickerMixin, RqWorker):
    """rq's forking worker that keeps the deadline tick going (production)."""


class SimpleWorker(DeadlineTickerMixin, RqSimpleWorker):
    """rq's non-forking worker that keeps the deadline tick going (the embedded default)."""
