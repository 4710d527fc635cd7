"""The Bots Long Poll loop behind ``manage.py runbot``.

It polls with vkbottle's :class:`~vkbottle.BotPolling` (which follows the ``server`` URL that
``groups.getLongPollServer`` returns and recovers from ``failed`` answers as VK documents:
``1`` go on with the given ts, ``2`` get a new key and keep the ts, ``3`` get a new key and
ts), but the ts lives in the database, not in vkbottle's ``./.vkbottle/`` file: polling starts
from :class:`~gameplay.models.PollState`, and each batch is applied by
:func:`vkbot.pipeline.apply_updates`, which stores the batch's ts in the transaction of its
last update. So a restarted bot continues exactly after the last batch it applied, and an
update seen twice (a restart, a ``failed: 1`` replay, the Callback API) is applied once.

The back-off after a fault, and the polling itself, are :mod:`vkbot.polling`'s.

A stop request (SIGINT/SIGTERM in ``runbot``) ends the loop after the batch being applied, or
at once while waiting for one. A poller of a runbot (``holder``: its name on the leases,
:mod:`vkbot.supervisor`) applies a batch, and stores a position, only in a transaction that
finds the community's lease still its own; once it is not, the loop ends
(:attr:`LongPoller.lease_lost`) and what was polled but not applied is the next holder's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connections, transaction
from redis.exceptions import RedisError
from vkbottle import API
from vkbottle.exception_factory import VKAPIError

from gameplay.context import serving
from gameplay.services.longpoll_leases import LeaseLost, longpoll_lease_check
from ops.outages import Outage, database_lost
from vkbot.backlog import Backlog
from vkbot.pipeline import (
    CHUNK,
    LONGPOLL,
    apply_updates,
    games_of,
    group_id_of,
    store_ts,
    stored_ts,
)
from vkbot.polling import (
    FATAL_VK_ERRORS,
    FAULT_INITIAL,
    FAULT_MAX,
    Backoff,
    DatabasePolling,
)
from vkbot.prefetch import prefetch
from vkbot.vkapi import RaiseUnreadable

logger = logging.getLogger(__name__)

#: The back-off of any other error (a bug), in seconds.
ERROR_INITIAL = 1.0
ERROR_MAX = 60.0
DEFAULT_WAIT = 25


class LongPollFatalError(Exception):
    """VK refuses the configuration (token, group id): retrying cannot help."""


def _apply_slice(backlog: Backlog, group_id: int, holder: str | None) -> tuple[int, str | None]:
    """Apply the backlog's next slice (fair across games, :mod:`vkbot.backlog`) in the
    database thread, with the ts of the batches it completes; returns how many updates were
    applied and the ts stored (None: no batch was completed). Stale connections are closed
    as a request would. Applied for the community (``gameplay.context.serving``), under
    ``holder``'s lease of it (None: no lease)."""
    close_old_connections()
    try:
        with serving(group_id):
            if backlog.needs_games():
                backlog.place(games_of)
            taken = backlog.take()
            ts = backlog.ts_done()
            applied = apply_updates(
                [update for update, _, _ in taken],
                ts,
                source=LONGPOLL,
                group_id=group_id,
                facts=[facts for _, facts, _ in taken],
                games=[game for _, _, game in taken],
                holder=holder,
            )
        return applied, ts
    finally:
        close_old_connections()


def _load_ts(group_id: int) -> str | None:
    close_old_connections()
    return stored_ts(group_id)


def _store_ts(ts: str, group_id: int, holder: str | None) -> None:
    close_old_connections()
    with transaction.atomic():
        if holder is not None:
            longpoll_lease_check(group_id=group_id, holder=holder)
        store_ts(ts, group_id)


class LongPoller:
    """Polls one community's Bots Long Poll and applies every batch once, until stopped.

    ``api`` is the client of the community's token ``token`` (None: ``VK_GROUP_TOKEN``), whose
    rate limiter its requests wait for; an unreadable answer to it is an error
    (:class:`~vkbot.vkapi.RaiseUnreadable`), retried on this module's schedule. :attr:`reached`
    is set once VK gave it a long-poll server (the token works). ``backoff``: after any other
    error (a bug); ``fault_backoff``: after a passing fault (see the module). ``holder``: the
    runbot whose lease of the community every batch needs (None: none needed)."""

    def __init__(
        self,
        api: API,
        group_id: int,
        *,
        wait: int = DEFAULT_WAIT,
        backoff: Backoff | None = None,
        fault_backoff: Backoff | None = None,
        token: str | None = None,
        holder: str | None = None,
    ) -> None:
        self.api = api
        self.holder = holder
        #: The loop ended because the community's lease is not this runbot's any more.
        self.lease_lost = False
        api.request_rescheduler = RaiseUnreadable()
        self.group_id = int(group_id)
        self.token = token
        self.reached = asyncio.Event()
        self.wait = max(1, min(int(wait), 90))
        self.backoff = backoff or Backoff(ERROR_INITIAL, ERROR_MAX)
        self.fault_backoff = fault_backoff or Backoff(FAULT_INITIAL, FAULT_MAX)
        who = f"Long poll of group {self.group_id}"
        self.vk = Outage("VK", logger, who=who)
        self.database = Outage("the database", logger, who=who)
        self.redis = Outage("Redis", logger, who=who)
        self.batches = 0
        self.applied = 0
        self._stop = asyncio.Event()

    def request_stop(self) -> None:
        """Stop after the batch being applied (at once if waiting for the server)."""
        if not self._stop.is_set():
            logger.info("Long poll of group %s stopping after the current batch", self.group_id)
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def run(self) -> None:
        """Poll until :meth:`request_stop`. Raises :class:`LongPollFatalError` when VK refuses
        the token or the group id."""
        try:
            while not self._stop.is_set():
                try:
                    start_ts = await sync_to_async(_load_ts, thread_sensitive=True)(self.group_id)
                    self.database.back()
                    await self._poll_from(start_ts)
                except LeaseLost as exc:
                    logger.warning("Long poll of group %s stops: %s", self.group_id, exc)
                    self.lease_lost = True
                    return
                except VKAPIError as exc:
                    if exc.code in FATAL_VK_ERRORS:
                        raise LongPollFatalError(
                            f"VK refused the long poll for group {self.group_id}: "
                            f"error {exc.code}: {exc.error_msg}"
                        ) from exc
                    await self._recover(exc)
                except Exception as exc:
                    await self._recover(exc)
        finally:
            # The database thread's connections (the next batch would reopen them).
            await sync_to_async(connections.close_all, thread_sensitive=True)()

    async def _recover(self, exc: Exception) -> None:
        """Wait before polling again from the stored ts: the database or Redis away is one
        line per outage and the short back-off; anything else is logged with its traceback
        (a bug) and waits longer each time."""
        outage = await self._outage_of(exc)
        if outage is not None:
            delay = self.fault_backoff.next()
            outage.lost(exc, then=f"polling again from the stored ts every {FAULT_MAX:g} s at most")
        else:
            delay = self.backoff.next()
            logger.error(
                "Long poll of group %s failed (%s: %s); restarting from the stored ts in %.1f s",
                self.group_id, type(exc).__name__, exc, delay,
                exc_info=not isinstance(exc, VKAPIError),
            )  # fmt: skip
        try:
            await asyncio.wait_for(self._stop.wait(), timeout=delay)
        except TimeoutError:
            pass

    async def _outage_of(self, exc: Exception) -> Outage | None:
        """The outage ``exc`` is part of: the database connection lost (asked in the database
        thread, whose connection it is), Redis away; None for anything else."""
        if isinstance(exc, RedisError):
            return self.redis
        if await sync_to_async(database_lost, thread_sensitive=True)(exc):
            return self.database
        return None

    def _fault(self, error: BaseException) -> float:
        """A passing fault of VK's or the network's (:class:`DatabasePolling` retries it)."""
        self.vk.lost(error, then=f"polling again every {FAULT_MAX:g} s at most")
        return self.fault_backoff.next()

    def _answered(self) -> None:
        """VK answered: the faults' back-off starts over, and so does the errors'."""
        self.vk.back()
        self.fault_backoff.reset()
        self.backoff.reset()

    async def _poll_from(self, start_ts: str | None) -> None:
        """Poll from ``start_ts`` and apply what comes in, until stopped. Polling goes on
        while a slice is applied: the batches wait in the backlog (:mod:`vkbot.backlog`),
        which is applied a fair slice at a time; it lives as long as this call (a restart
        polls again from the stored ts, and what was applied is skipped)."""
        self._backlog = Backlog(whole_up_to=CHUNK)
        self._inbox: list[tuple[list[Any], list[Any], str]] = []
        self._arrived = asyncio.Event()
        self._applying = asyncio.Lock()
        polling = DatabasePolling(
            api=self.api,
            group_id=self.group_id,
            start_ts=start_ts,
            wait=self.wait,
            persist=self._persist,
            token=self.token,
            reached=self.reached,
            fault=self._fault,
            answered=self._answered,
        )
        self._polling = polling
        events = polling.listen()
        feeder = asyncio.ensure_future(self._feed(events))
        try:
            while not self._stop.is_set():
                if not self._backlog and not self._inbox and not await self._arrival(feeder):
                    return
                async with self._applying:
                    await self._apply()
                self.backoff.reset()
                self.fault_backoff.reset()
                self.database.back()
                self.redis.back()
        finally:
            polling.stop()
            feeder.cancel()
            # The generator must be idle before it can be closed.
            await asyncio.gather(feeder, return_exceptions=True)
            await events.aclose()

    async def _feed(self, events: AsyncGenerator[dict[str, Any], None]) -> None:
        """Every polled batch, with the facts its handlers want from VK, into the inbox."""
        async for event in events:
            updates = list(event.get("updates") or [])
            facts = [
                await prefetch(self.api, update, group_id=self.group_id, token=self.token)
                if isinstance(update, dict) and group_id_of(update) == self.group_id
                else None
                for update in updates
            ]
            self._inbox.append((updates, facts, str(event["ts"])))
            self.batches += 1
            self._arrived.set()

    async def _arrival(self, feeder: asyncio.Future[None]) -> bool:
        """Wait for a batch; False once a stop is requested or polling ended (a pending poll
        is cancelled: nothing of it was applied, so nothing is lost). A polling error is
        raised."""
        self._arrived.clear()
        arrived = asyncio.ensure_future(self._arrived.wait())
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({arrived, stop, feeder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            arrived.cancel()
        if feeder.done():
            feeder.result()  # raises what polling raised
            return bool(self._inbox)
        return bool(self._inbox) and not self._stop.is_set()

    async def _apply(self) -> None:
        """Apply the next slice of the backlog (the batches polled meanwhile joined)."""
        for updates, facts, ts in self._inbox:
            self._backlog.add(updates, facts, ts)
        self._inbox.clear()
        if not self._backlog:
            return
        applied, ts = await sync_to_async(_apply_slice, thread_sensitive=True)(
            self._backlog, self.group_id, self.holder
        )
        if ts is not None:
            self._polling.persisted_ts = ts
        self.applied += applied
        logger.debug("Applied %d updates; %d wait; stored ts %s", applied, len(self._backlog), ts)

    async def _persist(self, ts: str) -> None:
        """Store a poll position reached without a batch (the first start, ``failed``): once
        everything polled before it is applied, so the stored ts never goes back."""
        async with self._applying:
            while self._backlog or self._inbox:
                await self._apply()
            await sync_to_async(_store_ts, thread_sensitive=True)(ts, self.group_id, self.holder)
