"""Polling VK's Bots Long Poll from a position kept in the database, and its back-off.

:class:`DatabasePolling` is vkbottle's :class:`~vkbottle.BotPolling` with the position (ts)
handed in and handed back (``vkbot.longpoll.LongPoller`` stores it with each batch), and with
the project's answer to faults.

Back-off. A fault of VK's or of the network — an HTML 5xx page, an unreadable or cut-off
answer, a dropped connection, a timeout, VK's errors 1, 6, 9, 10 and 29 — is retried at once
from the same position after :data:`FAULT_INITIAL`, then twice as long each time up to
:data:`FAULT_MAX` seconds (0.5, 1, 2, 4, 4 … s, ±20 %); the database or Redis away restarts
polling from the stored ts on the same schedule. Any answer — a poll's, even an empty one, or
a long-poll server's — resets it, so a VK that answers again is polled again within
:data:`FAULT_MAX` seconds however long it failed. Any other error (a bug) restarts polling from
the stored ts after an exponential back-off from 1 s up to a minute, with its traceback in the
log; an expected fault is one line when it starts and one when it ends (``ops.outages``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import aiohttp
from vkbottle import API, BotPolling
from vkbottle.exception_factory import ErrorHandler, VKAPIError

from vkbot.prefetch import group_limiter, wait_for_slot
from vkbot.vkapi import UnreadableAnswer

logger = logging.getLogger(__name__)

#: VK errors after which polling cannot work until an operator changes something: 5 the token
#: is invalid, 15 access denied, 27 the method needs a community token, 100 a bad group id.
FATAL_VK_ERRORS = frozenset({5, 15, 27, 100})
#: VK errors that say it could not serve the request now: unknown, too many requests per
#: second, flood control, internal error, rate limit.
PASSING_VK_ERRORS = frozenset({1, 6, 9, 10, 29})
#: Faults that pass on their own (with :data:`PASSING_VK_ERRORS`): VK's 5xx pages and cut-off
#: answers, the network's errors and timeouts.
PASSING_FAULTS: tuple[type[BaseException], ...] = (
    aiohttp.ClientError,
    TimeoutError,
    OSError,
    json.JSONDecodeError,
    UnreadableAnswer,
)
#: The back-off of such faults (and of the database or Redis away), in seconds.
FAULT_INITIAL = 0.5
FAULT_MAX = 4.0


class LongPollProtocolError(Exception):
    """The long-poll server answered something that is neither updates nor a ``failed``."""


class DatabasePolling(BotPolling):
    """``BotPolling`` that starts from a given ts and leaves saving the ts to the caller.

    The poll position also moves without a batch: at the very first start (the server's ts),
    after ``failed: 1`` (the ts VK names) and ``failed: 3`` (a new ts). Before each poll from a
    position not yet stored, :meth:`get_event` stores it through ``persist``, so a restart
    after a crash in the next batch polls that batch again instead of jumping past it.

    :meth:`listen` retries a passing fault itself, from the same position, after the delay
    ``fault(error)`` returns, and calls ``answered()`` after every answer; every other error is
    raised, so :class:`vkbot.longpoll.LongPoller` decides how to recover.
    """

    def __init__(
        self,
        *,
        api: API,
        group_id: int,
        start_ts: str | None,
        wait: int,
        persist: Callable[[str], Awaitable[None]],
        token: str | None = None,
        reached: asyncio.Event | None = None,
        fault: Callable[[BaseException], float] = lambda error: FAULT_MAX,
        answered: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(
            api=api,
            group_id=group_id,
            wait=wait,
            skip_old_events=False,
            error_handler=ErrorHandler(raise_exceptions=True),
        )
        self.start_ts = start_ts
        #: The ts the database holds (the caller updates it after storing a batch's ts).
        self.persisted_ts = start_ts
        #: The ts the last answer ended at: every update before it was handed to the caller,
        #: who stores it once they are applied.
        self.received_ts: str | None = None
        self._persist = persist
        self._token = token
        self._reached = reached
        self._fault = fault
        self._answered = answered

    def restore_server_ts(self, server: dict[str, Any]) -> dict[str, Any]:
        if self.start_ts:
            logger.info("Long poll resumes from the stored ts %s", self.start_ts)
            server["ts"] = self.start_ts
        else:
            logger.info("Long poll starts from the server's ts %s (none stored)", server.get("ts"))
        return server

    def save_server_ts(self, server: dict[str, Any]) -> None:
        """Nothing: the ts is stored with the batch it follows (vkbot.pipeline)."""

    async def get_server(self) -> dict[str, Any]:
        """``groups.getLongPollServer``, after the community token's shared rate limiter
        allows it (the delivery spends the same budget)."""
        await wait_for_slot(group_limiter(self._token), "groups.getLongPollServer")
        server = await super().get_server()
        if self._reached is not None:
            self._reached.set()
        self._answered()
        return server

    async def listen(self) -> AsyncGenerator[dict[str, Any], None]:
        """vkbottle's loop (the first server with the stored ts, ``failed`` handled as VK
        documents, each batch with updates yielded), with the project's back-off: a passing
        fault is retried from the same position — the ts is kept, nothing is skipped."""
        self._stop_event = asyncio.Event()
        server: dict[str, Any] | None = None
        first = True
        kept_ts: str | None = None  # the position to keep with the next server (failed: 2)
        while not self._stop_event.is_set():
            try:
                if server is None:
                    fresh = await self.get_server()
                    if first:
                        fresh = self.restore_server_ts(fresh)
                    elif kept_ts is not None:
                        fresh["ts"] = kept_ts
                    server, first, kept_ts = fresh, False, None
                event = await self.get_event(server)
                failed = event.get("failed")
                if failed in (2, 3):  # a new key (2: and the same ts; 3: a new ts too)
                    kept_ts = str(server["ts"]) if failed == 2 else None
                    server = None
                    continue
                if "failed" in event:
                    server = await self.handle_failed_event(server, event) or None
                    continue
            except VKAPIError as error:
                if error.code not in PASSING_VK_ERRORS:
                    raise
                await self._pause(error)
                continue
            except PASSING_FAULTS as error:
                await self._pause(error)
                continue
            server["ts"] = event["ts"]
            if event.get("updates"):
                yield event

    async def _pause(self, error: BaseException) -> None:
        """Wait out a passing fault (at once when asked to stop)."""
        assert self._stop_event is not None  # set by listen(), which pauses
        try:
            await asyncio.wait_for(self._stop_event.wait(), timeout=self._fault(error))
        except TimeoutError:
            pass

    async def get_event(self, server: dict[str, Any]) -> dict[str, Any]:
        ts = str(server["ts"])
        if ts not in (self.persisted_ts, self.received_ts):
            await self._persist(ts)
            self.persisted_ts = ts
        try:
            answer = await super().get_event(server)
        except json.JSONDecodeError as exc:  # an error page instead of an answer
            raise UnreadableAnswer(f"the long-poll server's answer is not JSON ({exc})") from exc
        if not isinstance(answer, dict) or ("failed" not in answer and "ts" not in answer):
            raise LongPollProtocolError(f"unexpected long-poll answer: {answer!r:.300}")
        if "failed" in answer:
            logger.info("Long poll answered failed=%s; recovering", answer.get("failed"))
        else:
            self.received_ts = str(answer["ts"])
        if answer.get("failed") in (None, 1):  # an answer with a position: polling works
            self._answered()
        return answer
