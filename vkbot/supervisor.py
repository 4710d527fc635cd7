"""One ``runbot`` for every community: a Bots Long Poll loop (:class:`~vkbot.longpoll.LongPoller`)
per community this deployment serves (``gameplay.selectors.communities.served``).

The served set is read again every ``VK_COMMUNITIES_REFRESH_SECONDS``: a community connected
in the panel gets its loop then, a disconnected one has its loop stopped after the batch being
applied, and a community whose token changed gets a new loop once the old one has stopped
(never two loops of one community at once). Each loop polls with its own token, from its own
stored ts (``PollState`` by group id), with its own backlog.

A community whose token VK refuses (error 5, 15 …, :data:`vkbot.polling.FATAL_VK_ERRORS`) is
logged and retried with an exponential back-off (:data:`RETRY_INITIAL` to :data:`RETRY_MAX`
seconds), its problem recorded in ``Community.setup["longpoll"]`` for the GM and the operator
(cleared once it polls again); the other communities go on. One exception keeps a single
community deployment's behaviour: when the environment's community (``VK_GROUP_ID``) is the
only one served and its token is refused before it ever polled, that is a configuration error
(:class:`~vkbot.longpoll.LongPollFatalError` raised: ``runbot`` exits 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.db import DatabaseError, close_old_connections, connections

from gameplay.selectors.communities import Credentials, env_group_id, served
from gameplay.services.communities import community_longpoll_status
from ops.outages import Outage
from vkbot.longpoll import LongPoller, LongPollFatalError
from vkbot.polling import Backoff

logger = logging.getLogger(__name__)

#: The back-off of a community whose token VK refuses, in seconds.
RETRY_INITIAL = 5.0
RETRY_MAX = 300.0


def _served() -> list[Credentials]:
    close_old_connections()
    return served()


def _record(group_id: int, problem: str) -> None:
    close_old_connections()
    try:
        community_longpoll_status(vk_id=group_id, problem=problem)
    except DatabaseError as exc:
        logger.warning("Could not record the long-poll status of group %s (%s)", group_id, exc)


@dataclass
class _Loop:
    """The long poll of one community: the task, the poller of its current attempt."""

    community: Credentials
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    poller: LongPoller | None = None

    def request_stop(self) -> None:
        self.stop.set()
        if self.poller is not None:
            self.poller.request_stop()


class Supervisor:
    """Runs a :class:`LongPoller` per served community until :meth:`request_stop`.

    ``build(community)`` makes a community's poller; ``announce(line)`` tells the operator
    (runbot's stdout)."""

    def __init__(
        self,
        build: Callable[[Credentials], LongPoller],
        *,
        refresh: float,
        announce: Callable[[str], None] = lambda line: None,
        retry: Callable[[], Backoff] = lambda: Backoff(RETRY_INITIAL, RETRY_MAX),
    ) -> None:
        self.build = build
        self.refresh = max(0.05, float(refresh))
        self.announce = announce
        self.retry = retry
        self._batches = 0  # of the pollers that ended
        self._applied = 0
        self._loops: dict[int, _Loop] = {}
        self._ending: list[_Loop] = []
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._fatal: LongPollFatalError | None = None
        self._waiting_said = False
        self._database = Outage("the database", logger, who="runbot")

    def _pollers(self) -> list[LongPoller]:
        loops = [*self._loops.values(), *self._ending]
        return [loop.poller for loop in loops if loop.poller is not None]

    @property
    def batches(self) -> int:
        """Batches polled by every community's loop since the start."""
        return self._batches + sum(p.batches for p in self._pollers())

    @property
    def applied(self) -> int:
        """Updates applied for every community since the start."""
        return self._applied + sum(p.applied for p in self._pollers())

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def serving(self) -> list[int]:
        """The communities with a loop now."""
        return sorted(self._loops)

    def request_stop(self) -> None:
        """Stop every loop after the batch it is applying (SIGINT/SIGTERM)."""
        if not self._stop.is_set():
            logger.info("runbot stopping: every long poll after its current batch")
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Serve until stopped. Raises :class:`LongPollFatalError` for the one case the
        module doc names."""
        try:
            while not self._stop.is_set():
                await self._refresh()
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.refresh)
                if self._fatal is not None:
                    raise self._fatal
        finally:
            for loop in [*self._loops.values(), *self._ending]:
                loop.request_stop()
            tasks = [loop.task for loop in [*self._loops.values(), *self._ending] if loop.task]
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loops.clear()
            self._ending.clear()
            await sync_to_async(connections.close_all, thread_sensitive=True)()

    async def _refresh(self) -> None:
        """Start and stop loops to match the communities served now."""
        try:
            communities = await sync_to_async(_served, thread_sensitive=True)()
        except DatabaseError as exc:
            then = f"keeping the {len(self._loops)} long polls, reading the communities again"
            self._database.lost(exc, then=then)
            return
        self._database.back()
        wanted = {c.group_id: c for c in communities}
        for group_id, loop in list(self._loops.items()):
            if loop.task is not None and loop.task.done():
                del self._loops[group_id]  # it crashed (logged): started again below
                continue
            now = wanted.get(group_id)
            if now is not None and now.group_token == loop.community.group_token:
                loop.community = now
                continue
            if now is None:
                logger.info("Group %s is no longer served: its long poll stops", group_id)
                self.announce(f"runbot: group {group_id} disconnected; its long poll stops")
            else:
                logger.info("Group %s has a new token: its long poll restarts", group_id)
            loop.request_stop()
            self._ending.append(self._loops.pop(group_id))
        self._ending = [loop for loop in self._ending if loop.task and not loop.task.done()]
        for group_id, community in wanted.items():
            if group_id not in self._loops and not self._stop.is_set():
                self._start(community)
        if not self._loops and not self._waiting_said:
            self.announce(
                f"runbot: no community is connected yet; waiting for one (checked every "
                f"{self.refresh:g} s)"
            )
            logger.warning("No community is connected: runbot waits for one")
        self._waiting_said = not self._loops

    def _start(self, community: Credentials) -> None:
        before = [
            loop.task
            for loop in self._ending
            if loop.community.group_id == community.group_id and loop.task
        ]
        loop = _Loop(community)
        loop.task = asyncio.create_task(self._serve(loop, before))
        loop.task.add_done_callback(self._ended)
        self._loops[community.group_id] = loop

    def _ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, LongPollFatalError):
            self._fatal = error
        elif error is not None:
            logger.error("The long-poll loop ended with %s: %s", type(error).__name__, error)
        self._wake.set()

    async def _serve(self, loop: _Loop, before: list[asyncio.Task[None]]) -> None:
        """One community's loop: poll; when VK refuses the token, record it and try again
        after a back-off, until stopped."""
        await asyncio.gather(*before, return_exceptions=True)
        group_id = loop.community.group_id
        backoff = self.retry()
        worked, first = False, True
        while not loop.stop.is_set():
            if not loop.community.group_token:
                await self._problem(group_id, "no community token is stored")
                await loop.stop.wait()  # a token saved in the panel restarts the loop
                return
            poller = loop.poller = self.build(loop.community)
            if first:
                self.announce(f"runbot: long poll for group {group_id} via {poller.api.API_URL}")
                first = False
            reached = asyncio.create_task(self._on_reached(poller))
            try:
                await poller.run()
                return  # stopped
            except LongPollFatalError as error:
                worked = worked or poller.reached.is_set()
                if self._fatal_for_all(group_id, worked):
                    raise
                delay = backoff.next()
                logger.error("%s; the other communities go on; retrying group %s in %.1f s",
                             error, group_id, delay)  # fmt: skip
                await self._problem(group_id, str(error))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(loop.stop.wait(), timeout=delay)
            finally:
                worked = worked or poller.reached.is_set()
                if poller.reached.is_set():
                    backoff.reset()
                reached.cancel()
                self._batches += poller.batches
                self._applied += poller.applied
                loop.poller = None

    async def _on_reached(self, poller: LongPoller) -> None:
        await poller.reached.wait()
        await sync_to_async(_record, thread_sensitive=True)(poller.group_id, "")

    async def _problem(self, group_id: int, problem: str) -> None:
        await sync_to_async(_record, thread_sensitive=True)(group_id, problem)

    def _fatal_for_all(self, group_id: int, worked: bool) -> bool:
        """Whether a refused token ends runbot: the environment's community, the only one
        served, refused before it ever polled: a single-community deployment's configuration
        error, with no other community to go on serving."""
        return not worked and group_id == env_group_id() and list(self._loops) == [group_id]
