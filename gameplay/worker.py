"""The project's rq worker classes (``settings.RQ["WORKER_CLASS"]``): rq's workers that also
keep the deadline tick going (``gameplay.jobs``).

``manage.py rqworker default vk --with-scheduler`` runs one of them. While it waits for jobs it
wakes up every second (``TICK_POLL_SECONDS``) and moves a due deadline tick into the queue itself
(:func:`gameplay.jobs.enqueue_due_ticks`): rq's scheduler, which would do it too, runs in one
worker at a time under a lock that a killed worker keeps for 61 s, and a phase must not close a
minute late because of that. On start, at least once a tick interval while it waits for jobs,
and right after it reconnects to Redis, the worker

- makes sure the next deadline tick is scheduled (idempotent: one job id per time slot), so a
  Redis restart or ``FLUSHALL`` that wiped the scheduled tick stops ticking for one slot at
  most;
- restarts its rq scheduler process if it died: rq's scheduler process exits on a lost Redis
  connection and rq itself would only restart it at its next maintenance run (10 minutes).

Before its first job it imports the jobs it runs (:func:`preload_jobs`), so that the work
horses it forks inherit them, and records the environment's community
(:func:`gameplay.startup.sync_env_community`). Nothing else here touches the database:
deadlines are read by the tick itself.
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

from gameplay.jobs import TICK_QUEUE, enqueue_due_ticks, schedule_next_tick, tick_seconds
from gameplay.startup import sync_env_community

log = logging.getLogger(__name__)

#: How often (seconds) an idle worker looks for a due deadline tick.
TICK_POLL_SECONDS = 1


class DeadlineTickerMixin:
    """Keeps the deadline tick scheduled from inside an rq worker (see the module)."""

    _next_keep_at: float = 0.0
    _burst: bool = False

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        self._burst = burst
        self._next_keep_at = 0.0
        sync_env_community("worker")
        preload_jobs()
        return super().work(burst, *args, **kwargs)  # type: ignore[misc]

    @property
    def dequeue_timeout(self) -> int:
        # Wake up every TICK_POLL_SECONDS, so that a due tick is moved into the queue on time
        # and the keeper runs while queues are idle.
        return max(1, min(super().dequeue_timeout, tick_seconds(), TICK_POLL_SECONDS))  # type: ignore[misc]

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """rq's heartbeat, which the worker sends before each wait for a job, after each job
        and while a job runs; the keeper rides on it. A lost Redis is not fatal here: the next
        wait for a job retries the connection with back-off (rq's own loop)."""
        try:
            super().heartbeat(timeout, pipeline)  # type: ignore[misc]
        except RedisError as error:
            self._next_keep_at = 0.0  # Redis is gone: keep ticking as soon as it is back
            log.warning("Worker heartbeat: Redis unavailable (%s); carrying on", error)
            return
        self.enqueue_due_ticks()
        self.keep_deadlines_ticking()

    def enqueue_due_ticks(self) -> None:
        """Move a due deadline tick into the queue (see the module). Never raises."""
        if self.is_horse:  # type: ignore[attr-defined]
            return
        queue = next((q for q in self.queues if q.name == TICK_QUEUE), None)  # type: ignore[attr-defined]
        if queue is None:
            return
        try:
            moved = enqueue_due_ticks(queue)
        except RedisError as error:
            self._next_keep_at = 0.0
            log.warning("Deadline ticking: Redis unavailable (%s); retrying", error)
            return
        except Exception:  # noqa: BLE001 - the worker must go on delivering messages
            log.exception("Deadline ticking: could not enqueue the due tick")
            return
        if moved:
            log.debug("Deadline ticking: enqueued %s", ", ".join(moved))

    def check_for_suspension(self, burst: bool) -> None:
        """rq's suspension check, which reads Redis at the top of every loop; a lost Redis
        there would end the worker. Wait a moment instead: the wait for the next job retries
        the connection with back-off."""
        try:
            super().check_for_suspension(burst)  # type: ignore[misc]
        except RedisError as error:
            self._next_keep_at = 0.0
            log.warning("Worker: Redis unavailable (%s); carrying on", error)
            time.sleep(1.0)

    def set_state(self, state: Any, pipeline: Any = None) -> None:
        """rq's worker state (informational, kept in Redis): not fatal when Redis is lost."""
        try:
            super().set_state(state, pipeline)  # type: ignore[misc]
        except RedisError as error:
            log.warning("Worker state: Redis unavailable (%s); carrying on", error)

    def run_maintenance_tasks(self) -> None:
        """rq's registry cleaning; skipped (until the next one) while Redis is unavailable."""
        try:
            super().run_maintenance_tasks()  # type: ignore[misc]
        except RedisError as error:
            log.warning("Worker maintenance: Redis unavailable (%s); later", error)

    def execute_job(self, job: Any, queue: Any) -> Any:
        """rq's ``execute_job``, surviving a Redis lost while the job runs: rq would let the
        ConnectionError from watching the work horse end the whole worker ("found an unhandled
        exception, quitting"). The job's own effects are in the database (a deadline tick and
        an Outbox drain are safe to run again); rq's registry maintenance settles its status
        once Redis is back."""
        try:
            return super().execute_job(job, queue)  # type: ignore[misc]
        except RedisError as error:
            self._next_keep_at = 0.0
            log.warning("Redis was lost while job %s ran (%s); the worker carries on",
                        getattr(job, "id", "?"), error)  # fmt: skip
            if getattr(self, "_horse_pid", 0):  # never two work horses at once
                try:
                    self.wait_for_horse()  # type: ignore[attr-defined]
                except OSError:
                    pass  # already reaped
                self._horse_pid = 0
            return None

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
