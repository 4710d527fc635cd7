"""The Callback inbox's applier: the Callback API's events applied in slices across communities.

The endpoint (``vkbot/views.py``) records each event VK posts in the inbox
(:class:`~gameplay.models.InboundEvent`, ``gameplay.services.inbox.inbound_record``), answers
``ok`` and wakes this process's applier (:func:`wake`). The applier takes the inbox a slice at
a time (:func:`choose_slice`), asks VK for the facts its handlers want outside any transaction
(:mod:`vkbot.prefetch`, each community's token through its shared rate limiter), then in ONE
transaction waits for any other applier's slice (``slice_lock``), deletes the slice's rows
(``inbound_claim``: the rows it deleted are its own to apply, however many appliers run) and
applies them with :func:`vkbot.pipeline.apply_sections` — each community's section for that
community, ``VkEvent`` deduplicating an event VK also delivered another way, a crashing handler
isolated. A rollback (the database away, a crash of the applier) puts the rows back for the
next run: every event is applied exactly once. The slice's replies are Outbox rows committed
together, which the worker's drain sends per community token in ``execute`` batches.

Fair slices (as the long poll's, :mod:`vkbot.backlog`): up to :data:`SLICE` events, the
communities whose oldest event came first first, each community an equal share of the slice
but at least :data:`MIN_SHARE` (so the slice takes the first ``SLICE // MIN_SHARE`` of many
communities waiting, and the others, their oldest events now the oldest, come first in the
next); within a community that has more waiting than its share, at most :data:`GAME_QUANTUM`
of one game (``vkbot.handlers.games_of``), each game's events in their order, and an event of
no single game after everything before it and before everything after it. So no community and
no game waits behind another's burst for more than a turn of the waiting communities. The
share's floor is what keeps a burst across many communities cheap: VK posts a community's next
event only after the last was answered, so each community has a few events waiting at a time,
and a slice of one event from each of a hundred communities would pay each game's first-event
costs (its lock and read, ``gameplay.unit_of_work``) for every event and commit each
community's replies one by one, a VK request each (the drain also holds a community's replies
while its events wait here: ``vkbot/delivery/coalesce.py``).

Where it runs: a thread in each web process (:class:`Applier`, started by the first event the
process records), woken by each event it records and looking by itself every
:data:`IDLE_LOOK_SECONDS`; and the worker's deadline tick sweeps the inbox too (:func:`sweep`,
``settings.CALLBACK_INBOX_SWEEP``), so nothing waits for long should no web process apply. One
applier at a time applies (``applier_lease``: a PostgreSQL advisory lock held for the run); the
others leave the inbox to it, and it looks again after it lets go, so an event recorded while it
held the lease is not left behind.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import close_old_connections, connections, transaction

from gameplay.context import serving
from gameplay.selectors.communities import Credentials, credentials
from gameplay.selectors.inbox import Inbound, inbound_exists, inbound_first, inbound_waiting
from gameplay.services.inbox import applier_lease, inbound_claim, slice_lock
from ops.backoff import Backoff
from ops.outages import Outage, database_lost
from vkbot.pipeline import CALLBACK, Section, apply_sections, games_of
from vkbot.prefetch import Wanted, fetch, wanted

logger = logging.getLogger(__name__)

#: Events per slice (one transaction): about a second of work on a busy 2-core machine.
SLICE = 120
#: The fewest events of a community a slice takes when it has them: with more communities
#: waiting than ``SLICE // MIN_SHARE``, the slice takes the first of them only.
MIN_SHARE = 10
#: Events of one game per slice, in a community with more waiting than its share.
GAME_QUANTUM = 50
#: How far into a community's waiting events a slice looks for its share (× the share).
LOOK_AHEAD = 4
#: One run's length: then the thread (or the tick) takes a breath and goes on.
RUN_SECONDS = 20.0
#: How often an idle applier thread looks at the inbox by itself (events another process
#: recorded and did not apply: it stopped, or its applier is held up).
IDLE_LOOK_SECONDS = 5.0
#: The back-off of a run that failed (the database away, a bug).
FAILED_INITIAL, FAILED_MAX = 0.5, 30.0


def choose_slice(
    *,
    limit: int | None = None,
    quantum: int = GAME_QUANTUM,
    games: Callable[[int, list[Any]], Sequence[int | None]] | None = None,
) -> list[Inbound]:
    """The next slice of the inbox: its rows grouped by community (the one whose oldest event
    came first first), each community's in the order they came (see the module). ``games``:
    which game each of a community's updates is of (default ``vkbot.handlers.games_of``,
    asked only for a community with more waiting than its share). ``limit``: the slice's
    size (None: :data:`SLICE`)."""
    limit = SLICE if limit is None else limit
    waiting = inbound_waiting(limit=limit, count_up_to=limit * LOOK_AHEAD)
    if not waiting:
        return []
    share = max(1, limit // len(waiting), min(MIN_SHARE, limit))
    parts: dict[int, int] = {}  # each community's part of the slice, oldest first
    room = limit
    for w in waiting:
        if room <= 0:
            break  # the others come first in the next slice
        parts[w.group_id] = min(share, room)
        room -= min(w.count, parts[w.group_id])
    rows = inbound_first(
        per_group={w.group_id: min(w.count, parts[w.group_id] * LOOK_AHEAD) for w in waiting
                   if w.group_id in parts}
    )  # fmt: skip
    by_group: dict[int, list[Inbound]] = {group_id: [] for group_id in parts}
    for row in rows:
        by_group[row.group_id].append(row)
    taken: list[Inbound] = []
    for group_id, group_rows in by_group.items():
        part = parts[group_id]
        if len(group_rows) <= part:
            taken += group_rows
            continue
        updates = [row.update for row in group_rows]
        found = games(group_id, updates) if games is not None else _games_of(group_id, updates)
        taken += fair_part(group_rows, found, limit=part, quantum=min(quantum, part))
    return taken


def _games_of(group_id: int, updates: list[Any]) -> Sequence[int | None]:
    with serving(group_id):
        return games_of(updates)


def fair_part(
    rows: Sequence[Inbound], games: Sequence[int | None], *, limit: int, quantum: int
) -> list[Inbound]:
    """Up to ``limit`` of one community's ``rows`` (in the order they came; ``games``: each
    one's game, None for none): at most ``quantum`` of a game, each game's first ones, and
    an update of no single game only while nothing before it was left out. Pure."""
    taken: list[Inbound] = []
    counts: Counter[int] = Counter()
    left_out = False
    for row, game in zip(rows, games, strict=True):
        if len(taken) >= limit:
            break
        if game is None:
            if left_out:
                break  # it waits for what came before it
            taken.append(row)
        elif counts[game] >= quantum:
            left_out = True  # and the game's later rows wait too: its order is kept
        else:
            counts[game] += 1
            taken.append(row)
    return taken


def prefetch_slice(rows: Sequence[Inbound]) -> dict[int, Any]:
    """The facts the handlers want from VK for the slice's rows (by row id), asked
    concurrently, each community's with its token and through its rate limiter. Never
    raises: what VK does not answer stays unknown (the handlers fall back)."""
    wants: list[tuple[int, Credentials, Wanted]] = []
    communities: dict[int, Credentials | None] = {}
    for row in rows:
        want = wanted(row.update)
        if want is None:
            continue
        if row.group_id not in communities:
            communities[row.group_id] = credentials(row.group_id)
        community = communities[row.group_id]
        if community is None or not community.group_token:
            logger.warning("No token for community %s: applying its events without VK facts",
                           row.group_id)  # fmt: skip
            continue
        wants.append((row.id, community, want))
    if not wants:
        return {}

    async def run() -> dict[int, Any]:
        import asyncio
        import atexit

        from vkbottle.http import AiohttpClient

        from vkbot.vkapi import community_api

        client = AiohttpClient()
        try:
            apis = {
                group_id: community_api(community, http_client=client)
                for group_id, community in ((c.group_id, c) for _, c, _ in wants)
            }
            found = await asyncio.gather(
                *(
                    fetch(apis[c.group_id], want, group_id=c.group_id, token=c.group_token)
                    for _, c, want in wants
                )
            )
            return {row_id: facts for (row_id, _, _), facts in zip(wants, found, strict=True)}
        finally:
            await client.close()
            atexit.unregister(client.close_connector)  # vkbottle registers every client

    try:
        return async_to_sync(run)()
    except Exception:
        logger.exception("Could not ask VK for the facts of a Callback slice; applying without")
        return {}


def apply_slice(rows: Sequence[Inbound]) -> int:
    """Apply the slice's rows that are still in the inbox, in one transaction that deletes
    them (see the module); returns how many rows it took (applied now, or skipped as already
    applied). Database outages propagate: nothing of the slice is applied or deleted."""
    facts = prefetch_slice(rows)
    with transaction.atomic():
        slice_lock()
        claimed = inbound_claim(ids=[row.id for row in rows])
        sections: dict[int, Section] = {}
        for row in rows:
            if row.id not in claimed:
                continue  # another applier's already
            section = sections.setdefault(row.group_id, Section(row.group_id, [], []))
            section.updates.append(row.update)
            section.facts.append(facts.get(row.id))
        apply_sections(list(sections.values()), source=CALLBACK)
    return len(claimed)


def apply_inbox(*, max_seconds: float = RUN_SECONDS, limit: int | None = None) -> int:
    """Apply the inbox slice by slice (of ``limit`` events, None: :data:`SLICE`) until it is
    empty, another applier holds the lease, or ``max_seconds`` have passed; returns how many
    rows it took. Database outages propagate."""
    deadline = time.monotonic() + max_seconds
    taken = 0
    while True:
        with applier_lease() as held:
            if not held:
                return taken  # the holder looks again once it lets go
            while rows := choose_slice(limit=limit):
                taken += apply_slice(rows)
                if time.monotonic() >= deadline:
                    return taken
        # Events recorded while this run held the lease: their processes left them to it.
        if not inbound_exists():
            return taken


def sweep() -> int:
    """The deadline tick's look at the inbox (``settings.CALLBACK_INBOX_SWEEP``): apply what
    waits, should no web process's applier be at it."""
    if not inbound_exists():
        return 0
    return apply_inbox(max_seconds=RUN_SECONDS)


class Applier:
    """This process's applier thread: started by the first :meth:`wake`, it applies the inbox
    whenever woken, and every :data:`IDLE_LOOK_SECONDS` by itself. A daemon: a process that
    ends while it applies loses nothing (the transaction is rolled back, the rows wait)."""

    def __init__(self) -> None:
        self._woken = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._stopping = False
        self.database = Outage("the database", logger, who="The Callback applier")

    def wake(self) -> None:
        self._start()
        self._woken.set()

    def stop(self, timeout: float = 30.0) -> None:
        """End the thread after the slice at hand (tests; a process just ends instead)."""
        thread = self._thread
        self._stopping = True
        self._woken.set()
        if thread is not None and thread.is_alive():
            thread.join(timeout)
        self._thread = None
        self._stopping = False

    def _start(self) -> None:
        if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="callback-applier", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            connections.close_all()  # this thread's own

    def _loop(self) -> None:
        failed = Backoff(FAILED_INITIAL, FAILED_MAX)
        delay = 0.0
        while True:
            self._woken.wait(delay)
            self._woken.clear()
            if self._stopping:
                return
            started = time.monotonic()
            try:
                close_old_connections()
                apply_inbox(max_seconds=RUN_SECONDS)
            except Exception as exc:  # noqa: BLE001 - the thread must go on: logged, retried
                if database_lost(exc):
                    self.database.lost(exc, then="its events wait in the inbox; trying again")
                else:
                    logger.exception("The Callback applier failed; its events wait in the inbox")
                delay = failed.next()
                close_old_connections()
                continue
            self.database.back()
            failed.reset()
            ran_out = time.monotonic() - started >= RUN_SECONDS
            delay = 0.0 if ran_out else IDLE_LOOK_SECONDS


#: This process's applier.
applier = Applier()


def wake() -> None:
    """Have this process's applier look at the inbox now (the endpoint, after it recorded an
    event), unless the web applies nothing (``CALLBACK_APPLY_IN_WEB`` off: the tests, which run
    the applier themselves, and deployments leaving it to the worker's tick)."""
    if settings.CALLBACK_APPLY_IN_WEB:
        applier.wake()
