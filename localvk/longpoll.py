"""The Bots Long Poll event queue of the local community.

Events are numbered 1, 2, 3, …; ``ts`` is the number of the next event, so a poll with ``ts=T``
returns the events numbered T and later and the ``ts`` to poll with next. As VK does:
``{"failed": 1, "ts": N}`` when T is older than the kept history (go on from N),
``{"failed": 2}`` when the key is unknown or expired (get a new key, keep the ts),
``{"failed": 3}`` when T is unknown to the server (get a new key and ts).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

API_VERSION = "5.199"
MAX_WAIT = 90


@dataclass(frozen=True)
class LongPollEvent:
    seq: int
    update: dict[str, Any]


def _set_pending(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class LongPollQueue:
    """Keeps the latest events and wakes the pollers waiting for new ones (thread-safe)."""

    def __init__(
        self,
        group_id: int,
        *,
        history_size: int = 10_000,
        lock: threading.RLock | None = None,
    ) -> None:
        self.group_id = group_id
        self._lock = lock or threading.RLock()
        self._events: deque[LongPollEvent] = deque(maxlen=history_size)
        self._next_seq = 1
        #: Every delivered event numbered from here on is kept (an older ts: ``failed: 1``).
        self._history_start = 1
        self._salt = secrets.token_hex(8)
        self._keys: set[str] = set()
        self._current_key: str | None = None
        self._waiters: set[asyncio.Future[None]] = set()
        self._closed = False
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        #: Which event types the long poll delivers (``groups.setLongPollSettings``): the
        #: others still get a number and an event id and reach the listeners (the Callback
        #: API), but no poller sees them.
        self.delivers: Callable[[str], bool] = lambda event_type: True

    # --- server side ---------------------------------------------------------------------

    @property
    def history_size(self) -> int | None:
        return self._events.maxlen

    @property
    def ts(self) -> int:
        return self._next_seq

    def current_key(self) -> str:
        """The key ``groups.getLongPollServer`` hands out (a new one after expiry)."""
        with self._lock:
            if self._current_key is None:
                self._current_key = secrets.token_hex(20)
                self._keys.add(self._current_key)
            return self._current_key

    def add_listener(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call ``listener(update)`` with every event as it is appended (under the queue's
        lock, so in the events' order; it must not block): the Callback API pusher."""
        with self._lock:
            self._listeners.append(listener)

    def publish(self, event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Append an event, wake the pollers and tell the listeners; returns the update as it
        will be delivered."""
        with self._lock:
            seq = self._next_seq
            self._next_seq += 1
            event_id = hashlib.sha1(f"{self._salt}:{self.group_id}:{seq}".encode()).hexdigest()
            update = {
                "group_id": self.group_id,
                "type": event_type,
                "event_id": event_id,
                "v": API_VERSION,
                "object": obj,
            }
            if self.delivers(event_type):
                if self._events.maxlen is not None and len(self._events) == self._events.maxlen:
                    self._history_start = self._events[0].seq + 1
                self._events.append(LongPollEvent(seq, update))
                self._wake()
            for listener in self._listeners:
                listener(update)
            return update

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return [event.update for event in self._events]

    def expire_keys(self) -> None:
        """Invalidate every key handed out: pollers get ``failed: 2``."""
        with self._lock:
            self._keys.clear()
            self._current_key = None
            self._wake()

    def drop_history(self) -> None:
        """Forget the kept events: a poller behind the current ts gets ``failed: 1``."""
        with self._lock:
            self._events.clear()
            self._history_start = self._next_seq

    def clear(self) -> None:
        """Forget events but keep the numbering and keys, so running pollers go on."""
        self.drop_history()

    def close(self) -> None:
        """Answer every waiting poller now (server shutdown)."""
        with self._lock:
            self._closed = True
            self._wake()

    def reopen(self) -> None:
        with self._lock:
            self._closed = False

    # --- persistence (localvk.persist) ---------------------------------------------

    def export(self, *, keep: int | None = None) -> dict[str, Any]:
        """The numbering, the event-id salt and the kept events (the newest ``keep``)."""
        with self._lock:
            events = list(self._events)
            if keep is not None:
                events = events[-keep:] if keep > 0 else []
            return {
                "next_seq": self._next_seq,
                "salt": self._salt,
                "events": [{"seq": e.seq, "update": e.update} for e in events],
            }

    def restore(self, data: dict[str, Any]) -> None:
        """Continue from an :meth:`export`: the same ts and event ids; keys are new, so a
        poller gets ``failed: 2`` and keeps its ts, as after a VK server restart."""
        with self._lock:
            events = [LongPollEvent(int(e["seq"]), dict(e["update"])) for e in data["events"]]
            next_seq = int(data["next_seq"])
            if any(e.seq >= next_seq for e in events) or next_seq < 1:
                raise ValueError("long-poll events must be numbered below next_seq")
            self._events.clear()
            self._events.extend(sorted(events, key=lambda e: e.seq))
            self._next_seq = next_seq
            self._history_start = self._events[0].seq if self._events else next_seq
            self._salt = str(data["salt"])

    # --- poller side ---------------------------------------------------------------------

    def check(self, key: str, ts: str) -> dict[str, Any]:
        """The immediate answer to ``a_check``: a failure, or the pending updates (maybe none)."""
        with self._lock:
            if key not in self._keys:
                return {"failed": 2}
            try:
                wanted = int(ts)
            except (TypeError, ValueError):
                return {"failed": 3}
            if wanted > self._next_seq or wanted < 0:
                return {"failed": 3}
            oldest = self._history_start
            if wanted < oldest:
                return {"failed": 1, "ts": oldest}
            updates = [event.update for event in self._events if event.seq >= wanted]
            return {"ts": str(self._next_seq), "updates": updates}

    async def poll(self, key: str, ts: str, wait: float) -> dict[str, Any]:
        """``a_check``: answer at once if there is something, else wait up to ``wait`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, min(wait, MAX_WAIT))
        while True:
            with self._lock:
                answer = self.check(key, ts)
                if "failed" in answer or answer["updates"] or self._closed:
                    return answer
                future: asyncio.Future[None] = loop.create_future()
                self._waiters.add(future)
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    return answer
                await asyncio.wait({future}, timeout=remaining)
            finally:
                with self._lock:
                    self._waiters.discard(future)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, set()
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for future in waiters:
            loop = future.get_loop()
            if loop is running:
                _set_pending(future)
            else:
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(_set_pending, future)
