"""Expected faults in the log: PostgreSQL or Redis away, VK down.

Such a fault is retried until it passes, and a retry is no news: an outage is one line when it
starts and one when it ends, with how long it lasted, and no traceback (a traceback is for the
unexpected, a bug). :class:`Outage` keeps that state in one process; :class:`SharedOutage`
keeps it in Redis, for work done by processes that do not live through the outage (rq runs
each job in a work horse of its own). :func:`database_lost` tells a lost database connection
from other database errors (a deadlock, a constraint, SQLite's busy file), which stay
unexpected.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import InterfaceError, OperationalError, connection

#: The Redis key of a database outage as the worker's jobs see it (:class:`SharedOutage`).
DATABASE_OUTAGE_KEY = "vkmafia:outage:database"


class Outage:
    """One thing this process depends on (``what``: "PostgreSQL", "VK" …), as seen by one
    loop: :meth:`lost` at each failure, :meth:`back` at each success."""

    def __init__(self, what: str, logger: logging.Logger, *, who: str = "") -> None:
        self.what = what
        self.log = logger
        self.who = f"{who}: " if who else ""
        self.since: float | None = None

    @property
    def away(self) -> bool:
        return self.since is not None

    def lost(self, error: object, *, then: str = "") -> bool:
        """A failure; logged when it starts an outage (returns whether it did)."""
        if self.since is not None:
            return False
        self.since = time.monotonic()
        self.log.warning(
            "%s%s is unavailable (%s)%s",
            self.who,
            self.what,
            _brief(error),
            f"; {then}" if then else "",
        )
        return True

    def back(self) -> float | None:
        """A success: the seconds the outage lasted, logged, when one just ended (else None)."""
        if self.since is None:
            return None
        away, self.since = time.monotonic() - self.since, None
        self.log.warning("%s%s is back after %.0f s", self.who, self.what, away)
        return away


class SharedOutage:
    """An :class:`Outage` whose start is a Redis key (``key``), so that the jobs of any work
    horse, of any worker, log it once between them. With Redis away too, each failure is
    logged (still without a traceback)."""

    def __init__(self, what: str, logger: logging.Logger, *, key: str, redis: Any) -> None:
        self.what = what
        self.log = logger
        self.key = key
        self.redis = redis

    def lost(self, error: object, *, then: str = "") -> bool:
        try:
            started = bool(self.redis.set(self.key, repr(time.time()), nx=True, ex=7 * 24 * 3600))
        except Exception:  # noqa: BLE001 - Redis away as well: say it every time
            started = True
        if started:
            self.log.warning(
                "%s is unavailable (%s)%s", self.what, _brief(error), f"; {then}" if then else ""
            )
        return started

    def back(self) -> float | None:
        try:
            pipe = self.redis.pipeline()  # GET and DEL at once: one job logs the end
            pipe.get(self.key)
            pipe.delete(self.key)
            since, _ = pipe.execute()
        except Exception:  # noqa: BLE001 - nothing known to end
            return None
        if since is None:
            return None
        away = max(0.0, time.time() - float(since))
        self.log.warning("%s is back after %.0f s", self.what, away)
        return away


def database_lost(error: BaseException) -> bool:
    """Whether ``error`` means the database connection is gone (PostgreSQL stopped,
    restarted, unreachable), as opposed to an error a working connection reported. Asks the
    calling thread's connection."""
    if isinstance(error, InterfaceError):
        return True
    if not isinstance(error, OperationalError):
        return False
    try:
        return connection.connection is None or not connection.is_usable()
    except Exception:  # noqa: BLE001 - a connection that cannot even be asked is gone
        return True


def _brief(error: object) -> str:
    """The error in one line."""
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    name = type(error).__name__ if isinstance(error, BaseException) else ""
    return f"{name}: {first}" if name and first else name or first
