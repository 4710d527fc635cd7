"""One runbot's applying of every community's long poll: one loop, one transaction per slice.

Each community's :class:`~vkbot.longpoll.LongPoller` polls with its own token from its own
position and hands every batch it polls to the runbot's :class:`Applier` (through its
:class:`Feed`). The applier keeps them in one backlog (:class:`vkbot.backlog.Backlogs`) and
applies it a slice at a time — fair across games and communities, each game's updates in
their order, an update of no single game a barrier within its community — with
:func:`vkbot.pipeline.apply_sections`: one transaction and one lease check for the slice,
each community's ts stored in it once everything of that community up to the batch it ends
is applied. So a hundred communities with one game each cost about what one community with a
hundred games does, and none waits behind another's burst.

What a slice's outcome means for a community:

- applied: its stored position moves on (the poller's :class:`~vkbot.polling.DatabasePolling`
  is told, so it does not store it again);
- its lease lost (another runbot holds it now): its pending updates are dropped and its poller
  gets :class:`~gameplay.services.longpoll_leases.LeaseLost`, which ends its loop; the next
  holder polls them again from the stored ts;
- an error (the database or Redis away, or a bug): nothing of the slice is applied; each of
  its communities has its pending updates dropped and its poller gets the error, recovers as
  it would from its own (``ops.outages``, the back-offs) and polls again from the stored ts.
  What was applied before is skipped then (``VkEvent``), so nothing is lost or applied twice.
  A slice of several communities that fails with an error other than the database's or
  Redis's is applied again one community at a time, so one community's bug does not hold
  the others back.

A poller leaving (stopped, its lease handed over, an error) waits for the slice being applied
before its pending updates are dropped: a stop ends after the slice being applied.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from redis.exceptions import RedisError

from gameplay.context import serving
from gameplay.services.longpoll_leases import LeaseLost
from ops.outages import database_lost
from vkbot.backlog import QUANTUM, SLICE, Backlogs
from vkbot.pipeline import CHUNK, LONGPOLL, Section, SliceResult, apply_sections, games_of

logger = logging.getLogger(__name__)


class Feed:
    """One community's long poll as the applier sees it: batches go in with :meth:`add`;
    :attr:`error` is set (and :attr:`failed`) once its pending updates were dropped for a
    reason its poller must act on."""

    def __init__(
        self, applier: Applier, group_id: int, applied: Callable[[int, str | None], None]
    ) -> None:
        self.applier = applier
        self.group_id = group_id
        #: Called after each slice with some of the community: (updates applied, ts stored).
        self.applied = applied
        self.error: BaseException | None = None
        self.failed = asyncio.Event()
        #: Nothing of the community waits or is being applied.
        self.idle = asyncio.Event()
        self.idle.set()

    def add(self, updates: list[Any], facts: list[Any], ts: str) -> None:
        """A polled batch (nothing once the feed has failed: its poller polls it again)."""
        if self.error is not None or self.applier.feeds.get(self.group_id) is not self:
            return
        self.idle.clear()
        self.applier.inbox.append((self.group_id, updates, facts, ts))
        self.applier.wake.set()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.failed.set()
        self.idle.set()

    def check(self) -> None:
        """Raise the error the feed failed with, if any."""
        if self.error is not None:
            raise self.error

    async def settled(self) -> None:
        """Wait until everything of the community handed over so far is applied; raise the
        error instead if that failed."""
        while not self.idle.is_set():
            await self.idle.wait()
        self.check()

    async def leave(self) -> None:
        """The poller is done: after the slice being applied, drop what of it waits."""
        await self.applier.leave(self)


@dataclass
class Outcome:
    """A slice's outcome by community: updates applied, the ts stored, the leases lost, the
    errors."""

    applied: dict[int, int] = field(default_factory=dict)
    stored: dict[int, str] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)
    failed: dict[int, BaseException] = field(default_factory=dict)


def _infrastructure(error: BaseException) -> bool:
    """Whether ``error`` is the database or Redis away (asked in the database thread)."""
    return isinstance(error, RedisError) or database_lost(error)


def _place(backlogs: Backlogs, outcome: Outcome) -> None:
    """Learn the games of the new updates, each community's for that community; one whose
    games cannot be read is dropped with its error."""

    def of_community(group_id: int, updates: list[Any]) -> list[int | None]:
        with serving(group_id):
            return games_of(updates)

    for group_id in backlogs.unplaced():
        try:
            backlogs.place(of_community, group_id)
        except Exception as exc:  # noqa: BLE001 - the community's poller recovers from it
            outcome.failed[group_id] = exc
            backlogs.drop(group_id)


def _sections(backlogs: Backlogs, limit: int, quantum: int) -> list[Section]:
    """The next slice as one section per community, with the ts it completes."""
    taken = backlogs.take(limit, quantum)
    sections = []
    for group_id in dict.fromkeys([*taken, *backlogs.groups()]):
        ts = backlogs.ts_done(group_id)
        mine = taken.get(group_id, [])
        if mine or ts is not None:
            sections.append(
                Section(group_id, [u for u, _, _ in mine], [f for _, f, _ in mine], ts=ts)
            )
    return sections


def _apply(sections: list[Section], holder: str | None, outcome: Outcome) -> None:
    """Apply the sections in one transaction; should that fail with something else than the
    database or Redis away, each community's in a transaction of its own."""
    try:
        _record(apply_sections(sections, source=LONGPOLL, holder=holder), sections, outcome)
        return
    except Exception as exc:  # noqa: BLE001 - told to the communities' pollers
        if len(sections) == 1 or _infrastructure(exc):
            outcome.failed.update({s.group_id: exc for s in sections})
            return
        logger.warning("A slice of %d communities failed (%s: %s); applying each on its own",
                       len(sections), type(exc).__name__, exc)  # fmt: skip
    for number, section in enumerate(sections):
        try:
            _record(apply_sections([section], source=LONGPOLL, holder=holder), [section], outcome)
        except Exception as exc:  # noqa: BLE001 - told to the community's poller
            outcome.failed[section.group_id] = exc
            if _infrastructure(exc):
                outcome.failed.update({s.group_id: exc for s in sections[number + 1 :]})
                return


def _record(result: SliceResult, sections: list[Section], outcome: Outcome) -> None:
    outcome.lost |= result.lost
    for group_id, count in result.applied.items():
        outcome.applied[group_id] = outcome.applied.get(group_id, 0) + count
    for section in sections:
        if section.ts is not None and section.group_id not in result.lost:
            outcome.stored[section.group_id] = str(section.ts)


def apply_slice(
    backlogs: Backlogs, holder: str | None, *, limit: int = SLICE, quantum: int = QUANTUM
) -> Outcome:
    """Apply the backlog's next slice (in the database thread): place what needs it, take the
    slice, apply it. Stale connections are closed as a request would."""
    close_old_connections()
    outcome = Outcome()
    try:
        if backlogs.needs_games():
            _place(backlogs, outcome)
        sections = _sections(backlogs, limit, quantum)
        if sections:
            _apply(sections, holder, outcome)
        return outcome
    finally:
        close_old_connections()


class Applier:
    """Applies the batches of every community of a runbot (see the module doc), under the
    lease of ``holder`` (None: no lease needed), until :meth:`stop`."""

    def __init__(self, *, holder: str | None = None, whole_up_to: int = CHUNK) -> None:
        self.holder = holder
        self.backlogs = Backlogs(whole_up_to=whole_up_to)
        self.feeds: dict[int, Feed] = {}
        #: Batches handed over since the last slice: (group id, updates, facts, ts).
        self.inbox: list[tuple[int, list[Any], list[Any], str]] = []
        self.wake = asyncio.Event()
        #: Held while a slice is applied: a feed leaves between two slices.
        self.applying = asyncio.Lock()
        self.slices = 0
        self._stop = asyncio.Event()

    def join(
        self, group_id: int, *, applied: Callable[[int, str | None], None] = lambda n, ts: None
    ) -> Feed:
        """A feed for ``group_id``'s poller (replacing a former one, whose updates must have
        been dropped: :meth:`Feed.leave`). ``applied(count, ts)``: after each slice with some
        of the community, the updates applied and the ts stored (None: none)."""
        feed = Feed(self, int(group_id), applied)
        self.feeds[feed.group_id] = feed
        return feed

    async def leave(self, feed: Feed) -> None:
        async with self.applying:
            self._drop(feed.group_id)
            if self.feeds.get(feed.group_id) is feed:
                del self.feeds[feed.group_id]
            feed.idle.set()

    def _drop(self, group_id: int) -> None:
        self.backlogs.drop(group_id)
        self.inbox = [batch for batch in self.inbox if batch[0] != group_id]

    def _fail(self, group_id: int, error: BaseException) -> None:
        self._drop(group_id)
        if (feed := self.feeds.get(group_id)) is not None:
            feed.fail(error)

    def stop(self) -> None:
        """Stop after the slice being applied."""
        self._stop.set()
        self.wake.set()

    async def run(self) -> None:
        """Apply slices while there is anything to apply, until stopped."""
        while not self._stop.is_set():
            if not self.inbox and not self.backlogs.groups():
                self.wake.clear()
                await self.wake.wait()
                continue
            async with self.applying:
                try:
                    await self._slice()
                except Exception as exc:  # a bug: every community polls again from its ts
                    logger.exception("Applying a slice failed; every long poll of this runbot "
                                     "polls again from its stored ts")  # fmt: skip
                    for group_id in {*self.backlogs.groups(), *(b[0] for b in self.inbox)}:
                        self._fail(group_id, exc)

    async def _slice(self) -> None:
        for group_id, updates, facts, ts in self.inbox:
            self.backlogs.add(group_id, updates, facts, ts)
        self.inbox.clear()
        outcome = await sync_to_async(apply_slice, thread_sensitive=True)(
            self.backlogs, self.holder
        )
        self.slices += 1
        for group_id in {*outcome.applied, *outcome.stored}:
            if (feed := self.feeds.get(group_id)) is not None:
                feed.applied(outcome.applied.get(group_id, 0), outcome.stored.get(group_id))
        failed: dict[int, BaseException] = dict(outcome.failed)
        for group_id in outcome.lost:
            failed[group_id] = LeaseLost(group_id, self.holder or "")
        for group_id, error in failed.items():
            self._fail(group_id, error)
        waiting = {group_id for group_id, *_ in self.inbox} | set(self.backlogs.groups())
        for group_id, feed in self.feeds.items():
            if group_id not in waiting:
                feed.idle.set()
        if outcome.applied:
            logger.debug("Applied a slice: %s updates of %d communities; %d wait",
                         sum(outcome.applied.values()), len(outcome.applied),
                         len(self.backlogs))  # fmt: skip
