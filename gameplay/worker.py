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

A lost Redis is retried every second (:data:`REDIS_RETRY_SECONDS`), however long it has been
away: rq's own back-off (1, 2, 4 … 60 s) would notice Redis back up to a minute late. The
outage is logged once when it starts and once when it ends, with its length (rq's line per
retry is folded into them). Right after Redis is back the worker also enqueues an Outbox drain
(``outbox.queue.enqueue_delivery``): rows committed while Redis was away enqueued none, and they
go out then rather than at the next tick.

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
from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.scheduler import RQScheduler
from rq.worker import SimpleWorker as RqSimpleWorker
from rq.worker import Worker as RqWorker

from gameplay.jobs import TICK_QUEUE, enqueue_due_ticks, schedule_next_tick, tick_seconds
from gameplay.startup import sync_env_community
from ops.outages import Outage
from outbox.queue import enqueue_delivery

log = logging.getLogger(__name__)

#: How often (seconds) an idle worker looks for a due deadline tick.
TICK_POLL_SECONDS = 1
#: How often a worker that lost Redis tries it again (rq's back-off is made flat at this).
REDIS_RETRY_SECONDS = 1.0
#: rq's log line for each failed reconnect (the worker's loop and its command listener).
RQ_RETRY_LINE = "could not connect to Redis instance"


class QuietScheduler(RQScheduler):
    """rq's scheduler process, which ends on a lost Redis with a line instead of a traceback
    (the worker starts it again once Redis is back: ``_restart_dead_scheduler``)."""

    def work(self) -> None:
        try:
            super().work()
        except RedisError as error:
            self.log.debug("Scheduler: Redis unavailable (%s); the worker restarts it later", error)


class _FoldRedisRetries(logging.Filter):
    """Folds rq's line per failed reconnect into the worker's Redis :class:`~ops.outages.Outage`."""

    def __init__(self, outage: Outage) -> None:
        super().__init__()
        self.outage = outage

    def filter(self, record: logging.LogRecord) -> bool:
        if RQ_RETRY_LINE not in str(record.msg):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        _lost(self.outage, args[1] if len(args) > 1 else "connection lost")
        return False


def _lost(outage: Outage, error: object) -> None:
    outage.lost(error, then=f"the worker goes on and tries again every {REDIS_RETRY_SECONDS:g} s")


class DeadlineTickerMixin:
    """Keeps the deadline tick scheduled from inside an rq worker (see the module)."""

    _next_keep_at: float = 0.0
    _burst: bool = False
    scheduler: RQScheduler | None  # rq's worker's attribute (set by _start_scheduler)
    # rq's reconnect back-off, made flat: see the module.
    exponential_backoff_factor = 1.0
    max_connection_wait_time = REDIS_RETRY_SECONDS

    @property
    def redis_outage(self) -> Outage:
        outage = self.__dict__.get("_redis_outage")
        if outage is None:
            outage = self.__dict__["_redis_outage"] = Outage("Redis", log)
        return outage

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        self._burst = burst
        self._next_keep_at = 0.0
        self.log.addFilter(_FoldRedisRetries(self.redis_outage))  # type: ignore[attr-defined]
        sync_env_community("worker")
        preload_jobs()
        return super().work(burst, *args, **kwargs)  # type: ignore[misc]

    def _redis_lost(self, error: RedisError) -> None:
        self._next_keep_at = 0.0  # keep ticking as soon as Redis is back
        _lost(self.redis_outage, error)

    def _redis_back(self) -> None:
        """After an outage: a drain for the rows committed meanwhile (their commits could
        enqueue none); the tick is kept by :meth:`keep_deadlines_ticking` right after."""
        if self.redis_outage.back() is None or self.is_horse:  # type: ignore[attr-defined]
            return
        try:
            enqueue_delivery()
        except RedisError as error:
            self._redis_lost(error)

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
            self._redis_lost(error)
            return
        if pipeline is None:  # a heartbeat queued in a pipeline has not reached Redis yet
            self._redis_back()
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
            self._redis_lost(error)
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
            self._redis_lost(error)
            time.sleep(REDIS_RETRY_SECONDS)

    def set_state(self, state: Any, pipeline: Any = None) -> None:
        """rq's worker state (informational, kept in Redis): not fatal when Redis is lost."""
        try:
            super().set_state(state, pipeline)  # type: ignore[misc]
        except RedisError as error:
            self._redis_lost(error)

    def run_maintenance_tasks(self) -> None:
        """rq's registry cleaning; skipped (until the next one) while Redis is unavailable."""
        try:
            super().run_maintenance_tasks()  # type: ignore[misc]
        except RedisError as error:
            self._redis_lost(error)

    def execute_job(self, job: Any, queue: Any) -> Any:
        """rq's ``execute_job``, surviving a Redis lost while the job runs: rq would let the
        ConnectionError from watching the work horse end the whole worker ("found an unhandled
        exception, quitting"). The job's own effects are in the database (a deadline tick and
        an Outbox drain are safe to run again); rq's registry maintenance settles its status
        once Redis is back."""
        try:
            return super().execute_job(job, queue)  # type: ignore[misc]
        except RedisError as error:
            self._redis_lost(error)
            log.info("Redis was lost while job %s ran; the worker carries on",
                     getattr(job, "id", "?"))  # fmt: skip
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
            self._redis_lost(error)
            return
        except Exception:  # noqa: BLE001 - the worker must go on delivering messages
            log.exception("Deadline ticking: could not schedule the next tick")
        self._next_keep_at = time.monotonic() + tick_seconds()

    def _start_scheduler(
        self,
        burst: bool = False,
        logging_level: str | None = "INFO",
        date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
        log_format: str = DEFAULT_LOGGING_FORMAT,
    ) -> None:
        """rq's, with a :class:`QuietScheduler`."""
        self.scheduler = QuietScheduler(
            self.queues,  # type: ignore[attr-defined]
            connection=self.connection,  # type: ignore[attr-defined]
            logging_level=logging_level if logging_level is not None else self.log.level,  # type: ignore[attr-defined]
            date_format=date_format,
            log_format=log_format,
            serializer=self.serializer,  # type: ignore[attr-defined]
        )
        self.scheduler.acquire_locks()
        if not self.scheduler.acquired_locks:
            return
        if not burst:
            self.scheduler.start()
            return
        try:
            self.scheduler.register_birth()
            self.scheduler.enqueue_scheduled_jobs()
        finally:
            self.scheduler.release_locks()
            self.scheduler.register_death()

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
    for path in (settings.OUTBOX_DELIVERY_JOB, "gameplay.jobs.tick", settings.CALLBACK_INBOX_SWEEP):
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
