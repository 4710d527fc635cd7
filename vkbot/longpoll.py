"""The Bots Long Poll loop behind ``manage.py runbot``.

It polls with vkbottle's :class:`~vkbottle.BotPolling` (which follows the ``server`` URL that
``groups.getLongPollServer`` returns and recovers from ``failed`` answers as VK documents:
``1`` go on with the given ts, ``2`` get a new key and keep the ts, ``3`` get a new key and
ts), but the ts lives in the database, not in vkbottle's ``./.vkbottle/`` file: polling starts
from :class:`~gameplay.models.PollState`, and each batch goes to the runbot's applier
(:mod:`vkbot.applier`, one for every community of the runbot; a poller on its own runs one of
its own), which applies it in fair slices with every other community's and stores the batch's
ts in the transaction of the slice that completes it. So a restarted bot continues exactly
after the last batch it applied, and an update seen twice (a restart, a ``failed: 1`` replay,
the Callback API) is applied once.

The back-off after a fault, and the polling itself, are :mod:`vkbot.polling`'s. An error in
applying this community's updates (the database or Redis away, a bug) reaches the poller as
its own, and it recovers the same way: its pending updates are dropped and it polls again from
the stored ts.

A stop request (SIGINT/SIGTERM in ``runbot``) ends the loop after the slice being applied, or
at once while waiting for one. A poller of a runbot (``holder``: its name on the leases,
:mod:`vkbot.supervisor`) has its batches applied, and stores a position, only in a transaction
that finds the community's lease still the runbot's; once it is not, the loop ends
(:attr:`LongPoller.lease_lost`) and what was polled but not applied is the next holder's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connections, transaction
from redis.exceptions import RedisError
from vkbottle import API
from vkbottle.exception_factory import VKAPIError
from vkbottle.http import SingleAiohttpClient

from gameplay.services.longpoll_leases import LeaseLost, longpoll_lease_check
from ops.backoff import Backoff
from ops.outages import Outage, database_lost
from vkbot.applier import Applier, Feed
from vkbot.pipeline import group_id_of, store_ts, stored_ts
from vkbot.polling import (
    FATAL_VK_ERRORS,
    FAULT_INITIAL,
    FAULT_MAX,
    DatabasePolling,
)
from vkbot.prefetch import prefetch_batch
from vkbot.vkapi import RaiseUnreadable

logger = logging.getLogger(__name__)

#: The back-off of any other error (a bug), in seconds.
ERROR_INITIAL = 1.0
ERROR_MAX = 60.0
DEFAULT_WAIT = 25


class LongPollFatalError(Exception):
    """VK refuses the configuration (token, group id): retrying cannot help."""


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
        applier: Applier | None = None,
    ) -> None:
        self.api = api
        self.holder = holder
        #: The runbot's applier of every community's batches (None: one of the poller's own).
        self.applier = applier
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
        """Stop after the slice being applied (at once if waiting for the server)."""
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
            # A client of the poller's own (runbot gives each community one: see runbot's
            # build_poller) goes with it; the shared one is runbot's to close.
            client = self.api.http_client
            if not isinstance(client, SingleAiohttpClient):
                with contextlib.suppress(Exception):
                    await client.close()

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
        """Poll from ``start_ts`` and hand what comes in to the applier, until stopped.
        Polling goes on while slices are applied: the batches wait in the applier's backlog
        (:mod:`vkbot.applier`), applied a fair slice at a time; what of this community waits
        there is dropped when this call ends (a restart polls again from the stored ts, and
        what was applied is skipped). Without a runbot's applier, the poller runs one of its
        own for the call."""
        own = self.applier is None
        applier = Applier(holder=self.holder) if self.applier is None else self.applier
        running = asyncio.ensure_future(applier.run()) if own else None
        feed = self._feed_to = applier.join(self.group_id, applied=self._applied)
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
        feeder = asyncio.ensure_future(self._feed(events, feed))
        try:
            await self._serve(feed, feeder, running)
        finally:
            polling.stop()
            feeder.cancel()
            # The generator must be idle before it can be closed.
            await asyncio.gather(feeder, return_exceptions=True)
            await events.aclose()
            await feed.leave()  # after the slice being applied
            if running is not None:
                applier.stop()
                await asyncio.gather(running, return_exceptions=True)

    async def _serve(
        self, feed: Feed, feeder: asyncio.Future[None], running: asyncio.Future[None] | None
    ) -> None:
        """Until a stop is requested; raises what polling raised, or what applying this
        community's updates did (:attr:`Feed.error`)."""
        stop: asyncio.Future[Any] = asyncio.ensure_future(self._stop.wait())
        failed: asyncio.Future[Any] = asyncio.ensure_future(feed.failed.wait())
        ended = {feeder, stop, failed} | ({running} if running is not None else set())
        try:
            await asyncio.wait(ended, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            failed.cancel()
        feed.check()
        if feeder.done():
            feeder.result()  # raises what polling raised
        if running is not None and running.done():
            running.result()

    async def _feed(self, events: AsyncGenerator[dict[str, Any], None], feed: Feed) -> None:
        """Every polled batch, with the facts its handlers want from VK (asked for the batch at
        once, with the community's token, while slices are applied), to the applier."""
        async for event in events:
            updates = list(event.get("updates") or [])
            ours = [
                update
                if isinstance(update, dict) and group_id_of(update) == self.group_id
                else None
                for update in updates
            ]
            facts = await prefetch_batch(self.api, ours, group_id=self.group_id, token=self.token)
            feed.add(updates, facts, str(event["ts"]))
            self.batches += 1

    def _applied(self, count: int, ts: str | None) -> None:
        """A slice applied ``count`` updates of this community and stored ``ts`` (None: no
        batch of it was completed): the stored position need not be stored again."""
        self.applied += count
        if ts is not None:
            self._polling.persisted_ts = ts
        self.backoff.reset()
        self.fault_backoff.reset()
        self.database.back()
        self.redis.back()

    async def _persist(self, ts: str) -> None:
        """Store a poll position reached without a batch (the first start, ``failed``): once
        everything polled before it is applied, so the stored ts never goes back."""
        await self._feed_to.settled()
        await sync_to_async(_store_ts, thread_sensitive=True)(ts, self.group_id, self.holder)
