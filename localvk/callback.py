"""The Callback API, as VK drives it: every event of the community is POSTed to the bot's server.

Configured (:class:`~localvk.callback_config.CallbackConfig`) with the server's URL (several
URLs stand for a load balancer in front of several web processes: requests go round-robin), the
confirmation code VK shows in the community's settings and, optionally, the secret key:

1. First VK asks ``{"type": "confirmation", "group_id": N}``; the answer must be the
   confirmation code, else VK asks again (here every ``confirm_interval`` seconds, the next URL
   each time). Until the server is confirmed, no event is pushed: the events of that time reach
   the long poll only, as in VK, where an unconfirmed server gets nothing.
2. Then every event appended to the long-poll queue is also POSTed as JSON — the long-poll
   update (``type``, ``event_id``, ``v``, ``object``, ``group_id``) plus ``secret`` when one is
   set. The answer must be HTTP 200 with the body ``ok`` exactly; anything else (another
   status, another body, a refused connection, a timeout) is retried with the header
   ``X-Retry-Counter: 1``, ``2``, … after ``backoff * 2**(n-1)`` seconds, up to ``retries``
   times, each retry at the URL after the one that failed (a load balancer picks another
   backend). Then the event is given up (counted in ``failed``).
3. Up to ``concurrency`` posts are in flight at once, so events may arrive out of order, as
   with VK's parallel delivery.

Fault injection (:class:`~localvk.faults.FaultConfig` ``callback_duplicate_rate``): a
share of the events is sent twice, the copy to the next URL, so both web processes get the
same ``event_id`` (VK does deliver some events more than once).

Without a configuration nothing is pushed and the long poll works as ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from .callback_config import CallbackConfig

if TYPE_CHECKING:
    from .faults import FaultInjector

logger = logging.getLogger(__name__)

CONFIRMATION = "confirmation"
#: Characters of an answer kept in a delivery record.
ANSWER_KEPT = 200
#: What :meth:`CallbackPusher.stats` counts: events pushed, of them sent twice (injected),
#: POSTs of events, of them answered ``ok``, retries among them, events given up, events not
#: pushed because the server was not (yet) confirmed, confirmation requests, and events of a
#: type the server does not take (``groups.setCallbackSettings``).
COUNTERS = (
    "events", "duplicated", "posts", "ok", "retries", "failed", "not_confirmed",
    "confirmation_requests", "not_enabled",
)  # fmt: skip


@dataclass(frozen=True)
class CallbackDelivery:
    """One POST: which event (``confirmation`` has no event id), where, the how-manyth try
    (0: the first; else the ``X-Retry-Counter``), the answer, and whether it was accepted.
    ``copy`` is 1 for the injected duplicate of an event."""

    seq: int
    event_id: str
    type: str
    url: str
    attempt: int
    status: int | None
    answer: str
    ok: bool
    copy: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Job:
    update: dict[str, Any]
    copy: int
    generation: int


@dataclass
class _UrlCounts:
    posts: int = 0
    ok: int = 0


@dataclass
class _Loop:
    """What the pusher runs in its event loop."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[_Job]
    session: aiohttp.ClientSession
    slots: asyncio.Semaphore
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    confirming: asyncio.Task[Any] | None = None


class CallbackPusher:
    """Pushes the community's events to the configured Callback API server (thread-safe:
    events may be published from any thread; posting happens in the server's event loop)."""

    def __init__(
        self, group_id: int, faults: FaultInjector, lock: threading.RLock | None = None
    ) -> None:
        self.group_id = group_id
        self.faults = faults
        self._lock = lock or threading.RLock()
        self.config: CallbackConfig | None = None
        self.confirmed = False
        self._generation = 0
        self._next_url = 0
        self._pending = 0
        self._seq = 0
        self._runtime: _Loop | None = None
        self._reset_records()

    def _reset_records(self) -> None:
        self._deliveries: list[CallbackDelivery] = []
        self._counters: Counter[str] = Counter()
        self._per_url: dict[str, _UrlCounts] = {}

    # --- configuration -------------------------------------------------------------------

    def configure(self, config: CallbackConfig | None) -> None:
        """Push to ``config``'s server from now on (None: stop pushing). The server must be
        confirmed again; events still queued for the previous configuration are dropped."""
        with self._lock:
            self.config = config
            self.confirmed = False
            self._generation += 1
            self._next_url = 0
            runtime = self._runtime
        if runtime is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                runtime.loop.call_soon_threadsafe(self._restart)

    @property
    def pending(self) -> int:
        """Events (and copies) accepted for pushing and not yet answered or given up."""
        with self._lock:
            return self._pending

    def reset(self) -> None:
        """Forget the delivery records and counters; keep the configuration."""
        with self._lock:
            self._reset_records()

    # --- running in an event loop (the server's) -----------------------------------------

    async def start(self) -> None:
        """Begin pushing from the running loop (the local VK server's startup)."""
        if self._runtime is not None:
            raise RuntimeError("the Callback API pusher is already running")
        loop = asyncio.get_running_loop()
        with self._lock:
            concurrency = self.config.concurrency if self.config else 1
        runtime = _Loop(
            loop=loop,
            queue=asyncio.Queue(),
            session=aiohttp.ClientSession(),
            slots=asyncio.Semaphore(concurrency),
        )
        runtime.tasks.add(loop.create_task(self._dispatch(runtime), name="callback-dispatch"))
        with self._lock:
            self._runtime = runtime
        self._restart()

    async def stop(self) -> None:
        """Stop pushing (the server's shutdown): posts in flight are abandoned."""
        with self._lock:
            runtime, self._runtime = self._runtime, None
            self._pending = 0
        if runtime is None:
            return
        tasks = list(runtime.tasks)
        if runtime.confirming is not None:
            tasks.append(runtime.confirming)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await runtime.session.close()

    def _restart(self) -> None:
        """In the loop: a new set of slots and a new confirmation for the current config."""
        runtime = self._runtime
        if runtime is None:
            return
        if runtime.confirming is not None:
            runtime.confirming.cancel()
            runtime.confirming = None
        with self._lock:
            config, generation = self.config, self._generation
        if config is None:
            return
        runtime.slots = asyncio.Semaphore(config.concurrency)
        runtime.confirming = runtime.loop.create_task(
            self._confirm(runtime, config, generation), name="callback-confirm"
        )

    # --- events in -----------------------------------------------------------------------

    def submit(self, update: dict[str, Any]) -> None:
        """A new event of the community (called by the long-poll queue as it appends one)."""
        with self._lock:
            config, runtime = self.config, self._runtime
            if config is None:
                return
            if not config.pushes(str(update.get("type"))):
                self._counters["not_enabled"] += 1
                return
            if not self.confirmed or runtime is None:
                self._counters["not_confirmed"] += 1
                return
            copies = 2 if self.faults.duplicate_callback() else 1
            self._counters["events"] += 1
            self._counters["duplicated"] += copies - 1
            self._pending += copies
            # Queued under the lock: the jobs keep the order of the events, and a copy
            # follows its original, so it gets the next URL.
            for copy in range(copies):
                try:
                    runtime.loop.call_soon_threadsafe(
                        runtime.queue.put_nowait, _Job(update, copy, self._generation)
                    )
                except RuntimeError:  # the loop is closed: the server is going away
                    self._pending -= 1

    # --- posting -------------------------------------------------------------------------

    async def _confirm(self, runtime: _Loop, config: CallbackConfig, generation: int) -> None:
        body = json.dumps({"type": CONFIRMATION, "group_id": self.group_id})
        index = 0
        while self._current(generation):
            url = config.urls[index % len(config.urls)]
            index += 1
            status, answer = await self._post(runtime, url, body, {}, config.timeout)
            confirmed = status == 200 and answer == config.confirmation_code
            self._record("", CONFIRMATION, url, 0, status, answer, confirmed, 0)
            if confirmed:
                with self._lock:
                    if generation == self._generation:
                        self.confirmed = True
                logger.info("Callback API: %s confirmed the server", url)
                return
            if index == 1 or index % 30 == 0:
                logger.warning(
                    "Callback API: %s answered the confirmation request with %s %r, not the "
                    "confirmation code; asking again every %s s",
                    url, status, answer[:ANSWER_KEPT], config.confirm_interval,
                )  # fmt: skip
            await asyncio.sleep(config.confirm_interval)

    async def _dispatch(self, runtime: _Loop) -> None:
        """Take jobs in order, give each the next URL, and post up to ``concurrency`` at once."""
        while True:
            job = await runtime.queue.get()
            with self._lock:
                config = self.config if job.generation == self._generation else None
                if config is not None:
                    index = self._next_url % len(config.urls)
                    self._next_url += 1
            if config is None:  # queued for a configuration since replaced
                self._done()
                continue
            slots = runtime.slots
            await slots.acquire()
            task = runtime.loop.create_task(self._deliver(runtime, config, job, index, slots))
            runtime.tasks.add(task)
            task.add_done_callback(runtime.tasks.discard)

    async def _deliver(
        self,
        runtime: _Loop,
        config: CallbackConfig,
        job: _Job,
        index: int,
        slots: asyncio.Semaphore,
    ) -> None:
        update = job.update
        body = json.dumps(
            {**update, "secret": config.secret} if config.secret else update,
            ensure_ascii=False,
        )
        event_id, kind = str(update.get("event_id", "")), str(update.get("type", ""))
        try:
            for attempt in range(config.retries + 1):
                if not self._current(job.generation):
                    return
                url = config.urls[index]
                headers = {"X-Retry-Counter": str(attempt)} if attempt else {}
                status, answer = await self._post(runtime, url, body, headers, config.timeout)
                ok = status == 200 and answer == "ok"
                self._record(event_id, kind, url, attempt, status, answer, ok, job.copy)
                if ok:
                    return
                if attempt < config.retries:
                    await asyncio.sleep(config.backoff * 2**attempt)
                index = (index + 1) % len(config.urls)
            with self._lock:
                self._counters["failed"] += 1
            logger.warning(
                "Callback API: gave up event %s (%s) after %s tries", event_id, kind,
                config.retries + 1,
            )  # fmt: skip
        finally:
            slots.release()
            self._done()

    async def _post(
        self, runtime: _Loop, url: str, body: str, headers: dict[str, str], timeout: float
    ) -> tuple[int | None, str]:
        """POST ``body`` as JSON: (HTTP status, body), or (None, what went wrong)."""
        try:
            async with runtime.session.post(
                url,
                data=body.encode(),
                headers={"Content-Type": "application/json", **headers},
                timeout=aiohttp.ClientTimeout(total=timeout),
                allow_redirects=False,
            ) as response:
                return response.status, await response.text(errors="replace")
        except (TimeoutError, aiohttp.ClientError) as exc:
            return None, f"{type(exc).__name__}: {exc}"

    # --- bookkeeping ---------------------------------------------------------------------

    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation and self._runtime is not None

    def _done(self) -> None:
        with self._lock:
            self._pending = max(0, self._pending - 1)

    def _record(
        self,
        event_id: str,
        kind: str,
        url: str,
        attempt: int,
        status: int | None,
        answer: str,
        ok: bool,
        copy: int,
    ) -> None:
        with self._lock:
            self._seq += 1
            answer = answer[:ANSWER_KEPT]
            self._deliveries.append(
                CallbackDelivery(self._seq, event_id, kind, url, attempt, status, answer, ok, copy)
            )
            if kind == CONFIRMATION:
                self._counters["confirmation_requests"] += 1
                return
            counts = self._per_url.setdefault(url, _UrlCounts())
            counts.posts += 1
            counts.ok += ok
            self._counters["posts"] += 1
            self._counters["ok"] += ok
            self._counters["retries"] += attempt > 0

    # --- inspection ----------------------------------------------------------------------

    def deliveries(self, since: int = 0) -> list[CallbackDelivery]:
        """Every POST so far (``seq`` > ``since``), oldest first."""
        with self._lock:
            return [d for d in self._deliveries if d.seq > since]

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "configured": self.config is not None,
                "confirmed": self.confirmed,
                "config": self.config.to_dict() if self.config else None,
                "pending": self._pending,
                **{name: self._counters[name] for name in COUNTERS},
                "per_url": {url: asdict(c) for url, c in self._per_url.items()},
            }
