"""One ``runbot`` for every community, or several sharing them: a Bots Long Poll loop
(:class:`~vkbot.longpoll.LongPoller`) per community this deployment serves
(``gameplay.selectors.communities.served``) and this runbot holds the lease of
(``gameplay.services.longpoll_leases``, :mod:`vkbot.sharing`).

Every ``RUNBOT_LEASE_RENEW_SECONDS`` a runbot renews its heartbeat and its leases and, while it
holds fewer than its fair share of the served communities (about as many as every other
runbot alive), claims free or expired ones; one holding more than its share (a runbot has
joined) releases the excess, each once its loop has stopped after the slice being applied. So
each community's loop runs in one runbot at a time: a lease is released only after its loop
has ended, another runbot starts a loop only once it holds the lease, and a runbot that lost a
lease (a dead one's expire after ``RUNBOT_LEASE_TTL_SECONDS``) applies nothing more
(:func:`~gameplay.services.longpoll_leases.longpoll_leases_check` in each slice's transaction).
A runbot that cannot renew its leases for their lifetime (the database away) stops its loops;
one stopping (SIGINT/SIGTERM) frees its leases once its loops have ended.

The served set is read again every ``VK_COMMUNITIES_REFRESH_SECONDS``: a community connected
in the panel gets its loop then (in the runbot that claims it), a disconnected one has its loop
stopped after the slice being applied, and a community whose token changed gets a new loop
once the old one has stopped (never two loops of one community at once). Each loop polls with
its own token, from its own stored ts (``PollState`` by group id), and hands its batches to the
runbot's one :class:`~vkbot.applier.Applier`, which applies every community's together in fair
slices, one transaction each, and tells a loop when its lease was lost or applying its updates
failed.

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
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.db import DatabaseError, close_old_connections, connections

from gameplay.selectors.communities import Credentials, env_group_id, served
from gameplay.services.communities import community_longpoll_status
from ops.backoff import Backoff
from ops.outages import Outage
from vkbot.applier import Applier
from vkbot.longpoll import LongPoller, LongPollFatalError
from vkbot.sharing import Leases, LeaseTerms, LeaseThread, Membership, Round

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


def _ended(loop: _Loop) -> bool:
    return loop.task is not None and loop.task.done()


class Supervisor:
    """Runs a :class:`LongPoller` per served community whose lease it holds, until
    :meth:`request_stop`.

    ``build(community)`` makes a community's poller; ``announce(line)`` tells the operator
    (runbot's stdout); ``terms``: the leases' renewal and lifetime (the settings')."""

    def __init__(
        self,
        build: Callable[[Credentials], LongPoller],
        *,
        refresh: float,
        announce: Callable[[str], None] = lambda line: None,
        retry: Callable[[], Backoff] = lambda: Backoff(RETRY_INITIAL, RETRY_MAX),
        terms: LeaseTerms | None = None,
    ) -> None:
        self.build = build
        self.refresh = max(0.05, float(refresh))
        self.announce = announce
        self.retry = retry
        self.membership = Membership(terms or LeaseTerms.from_settings())
        #: Applies every community's batches together, in fair slices.
        self.applier = Applier(holder=self.membership.holder)
        self._batches = 0  # of the pollers that ended
        self._applied = 0
        self._loops: dict[int, _Loop] = {}
        self._ending: list[_Loop] = []
        self._served: dict[int, Credentials] | None = None
        self._served_at = 0.0
        self._leases = Leases()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        #: The renewals and the read of the served communities, off the database thread.
        self._lease_thread = LeaseThread()
        self._fatal: LongPollFatalError | None = None
        self._waiting_said = False
        self._database = Outage("the database", logger, who="runbot")

    def _pollers(self) -> list[LongPoller]:
        loops = [*self._loops.values(), *self._ending]
        return [loop.poller for loop in loops if loop.poller is not None]

    @property
    def holder(self) -> str:
        """This runbot's name on its leases."""
        return self.membership.holder

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

    def running(self) -> list[int]:
        """The communities with a loop not ended yet (one stopping after its batch too)."""
        loops = [*self._loops.values(), *self._ending]
        return sorted({loop.community.group_id for loop in loops if not _ended(loop)})

    def holding(self) -> list[int]:
        """The communities whose lease this runbot holds, as of its last renewal."""
        return sorted(self._leases.held)

    def request_stop(self) -> None:
        """Stop every loop after the slice being applied (SIGINT/SIGTERM)."""
        if not self._stop.is_set():
            logger.info("runbot stopping: every long poll after the slice being applied")
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Serve until stopped; then free the leases for the other runbots. Raises
        :class:`LongPollFatalError` for the one case the module doc names."""
        period = min(self.refresh, self.membership.terms.renew)
        applying = asyncio.create_task(self.applier.run())
        try:
            while not self._stop.is_set():
                self._wake.clear()
                await self._refresh()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=period)
                if self._fatal is not None:
                    raise self._fatal
        finally:
            for loop in [*self._loops.values(), *self._ending]:
                loop.request_stop()
            tasks = [loop.task for loop in [*self._loops.values(), *self._ending] if loop.task]
            await asyncio.gather(*tasks, return_exceptions=True)
            self.applier.stop()
            await asyncio.gather(applying, return_exceptions=True)
            self._loops.clear()
            self._ending.clear()
            await self._leave()
            await sync_to_async(connections.close_all, thread_sensitive=True)()
            await self._lease_thread.close()

    async def _refresh(self) -> None:
        """Renew the leases, take free ones up to the fair share, and start and stop loops to
        match: a loop for each served community whose lease this runbot holds."""
        await self._read_served()
        self._loops = {g: loop for g, loop in self._loops.items() if not _ended(loop)}
        self._ending = [loop for loop in self._ending if not _ended(loop)]
        await self._release_ended()
        if self._served is None:
            return  # not read yet: which leases to hold is not known
        served = self._served
        leases = self._leases
        started = time.monotonic()
        try:
            round_ = await self._lease_thread.run(
                self.membership.renew,
                served=list(served),
                held=list(leases.held),
                leaving=set(leases.leaving),
            )
        except DatabaseError as exc:
            self._database.lost(exc, then=f"keeping the {len(self._loops)} long polls while "
                                f"their leases last, renewing them again")  # fmt: skip
            if leases.renewed_at is None or time.monotonic() - leases.renewed_at >= (
                self.membership.terms.ttl
            ):
                self._drop_every_lease()
            return
        self._database.back()
        leases.renewed_at = started
        self._follow(round_, served)
        await self._release_ended()
        if not served and not self._waiting_said:
            self.announce(
                f"runbot: no community is connected yet; waiting for one (checked every "
                f"{self.refresh:g} s)"
            )
            logger.warning("No community is connected: runbot waits for one")
        self._waiting_said = not served

    async def _read_served(self) -> None:
        """The communities served, read again every ``refresh`` seconds."""
        if self._served is not None and time.monotonic() < self._served_at + self.refresh:
            return
        try:
            communities = await self._lease_thread.run(_served)
        except DatabaseError as exc:
            then = f"keeping the {len(self._loops)} long polls, reading the communities again"
            self._database.lost(exc, then=then)
            return
        self._database.back()
        self._served = {c.group_id: c for c in communities}
        self._served_at = time.monotonic()

    def _follow(self, round_: Round, served: dict[int, Credentials]) -> None:
        """Stop the loops of the leases lost, of the communities no longer served and of
        those over the fair share; (re)start a loop for every other lease held."""
        leases = self._leases
        for group_id in leases.lose(round_.held):
            logger.warning("The lease of group %s was lost (expired, or another runbot took "
                           "it): its long poll stops", group_id)  # fmt: skip
            self.announce(f"runbot: group {group_id} lost its lease; its long poll stops")
            self._stop_loop(group_id)
        leases.take(round_.held)
        for group_id in leases.serving():
            now = served.get(group_id)
            loop = self._loops.get(group_id)
            if now is None:
                logger.info("Group %s is no longer served: its long poll stops", group_id)
                if loop is not None:
                    self.announce(f"runbot: group {group_id} disconnected; its long poll stops")
                leases.leaving.add(group_id)
                self._stop_loop(group_id)
            elif loop is not None and now.group_token != loop.community.group_token:
                logger.info("Group %s has a new token: its long poll restarts", group_id)
                self._stop_loop(group_id)
            elif loop is not None:
                loop.community = now
        for group_id in leases.excess(round_.share):
            logger.info("Group %s goes to another runbot: this one holds more than its share "
                        "(%s of %s communities, %s runbots)", group_id, round_.share,
                        len(served), round_.runbots)  # fmt: skip
            self.announce(
                f"runbot: group {group_id} handed over (this runbot's share: "
                f"{round_.share} of {len(served)} among {round_.runbots} runbots)"
            )
            leases.leaving.add(group_id)
            self._stop_loop(group_id)
        for group_id in leases.serving():
            if group_id not in self._loops and not self._stop.is_set():
                self._start(served[group_id])

    def _stop_loop(self, group_id: int) -> None:
        """Stop a community's loop after the slice being applied (its lease is released once
        it has ended: :meth:`_release_ended`)."""
        loop = self._loops.pop(group_id, None)
        if loop is not None:
            loop.request_stop()
            self._ending.append(loop)

    def _running(self, group_id: int) -> bool:
        loops = [self._loops.get(group_id), *self._ending]
        return any(
            loop is not None and loop.community.group_id == group_id and not _ended(loop)
            for loop in loops
        )

    async def _release_ended(self) -> None:
        """Free the leases to be released whose loop has ended (never while it applies)."""
        for group_id in sorted(self._leases.leaving):
            if self._running(group_id):
                continue
            try:
                await sync_to_async(self.membership.release, thread_sensitive=True)(group_id)
            except DatabaseError as exc:
                self._database.lost(exc, then="releasing the lease again")
                return
            self._leases.drop(group_id)

    def _drop_every_lease(self) -> None:
        """No renewal for a lease's lifetime: every lease may be another runbot's by now, so
        every loop stops (they could not apply a batch anyway); they start again once the
        leases are renewed or taken again."""
        if self._leases.held:
            logger.warning("runbot could not renew its leases for %.0f s: its %d long polls stop "
                           "until the database is back", self.membership.terms.ttl,
                           len(self._loops))  # fmt: skip
        for group_id in list(self._loops):
            self._stop_loop(group_id)
        self._leases = Leases()

    async def _leave(self) -> None:
        """Every loop has ended: the leases are free for the other runbots at once."""
        try:
            await sync_to_async(self.membership.leave, thread_sensitive=True)()
        except DatabaseError as exc:
            logger.warning("runbot could not free its leases (%s): the other runbots take them "
                           "over once they expire, in %g s", exc,
                           self.membership.terms.ttl)  # fmt: skip

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
            poller.holder = self.holder  # it applies only while this runbot holds the lease
            poller.applier = self.applier  # with every other community's batches
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
        served = list(self._served or {})
        return not worked and group_id == env_group_id() and served == [group_id]
