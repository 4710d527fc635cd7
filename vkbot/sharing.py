"""This runbot's side of sharing the communities with the other runbots (the leases:
``gameplay.services.longpoll_leases``): who it is, its heartbeat, renewing its leases and
claiming free ones up to its fair share (:class:`Membership`, in the database thread), and
what it holds between two renewals (:class:`Leases`). :class:`vkbot.supervisor.Supervisor`
starts and stops the loops to match."""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
import socket
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.db import close_old_connections, connections

from gameplay.models.runbot import HOLDER_MAX
from gameplay.services.longpoll_leases import (
    fair_share,
    longpoll_lease_claim_free,
    longpoll_lease_release,
    longpoll_lease_renew,
    runbot_heartbeat,
    runbot_leave,
)

_T = TypeVar("_T")


def holder_id() -> str:
    """This process's name among the runbots: ``host:pid:random`` (a restarted process with
    the same pid is another holder)."""
    host = socket.gethostname()[: HOLDER_MAX - 20] or "host"
    return f"{host}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass(frozen=True)
class LeaseTerms:
    """``renew``: seconds between two renewals of the heartbeat and the leases; ``ttl``: how
    long they last unrenewed."""

    renew: float
    ttl: float

    @classmethod
    def from_settings(cls) -> LeaseTerms:
        return cls(
            renew=float(settings.RUNBOT_LEASE_RENEW_SECONDS),
            ttl=float(settings.RUNBOT_LEASE_TTL_SECONDS),
        )


@dataclass(frozen=True)
class Round:
    """One renewal's outcome: the leases held now, this runbot's fair share of the served
    communities and how many runbots are alive."""

    held: frozenset[int]
    share: int
    runbots: int


class Membership:
    """One runbot among the others (its :attr:`holder` id), in the database thread."""

    def __init__(self, terms: LeaseTerms, holder: str | None = None) -> None:
        self.terms = terms
        self.holder = holder or holder_id()

    def renew(
        self, *, served: Collection[int], held: Collection[int], leaving: Collection[int]
    ) -> Round:
        """Heartbeat, renew the leases ``held`` (those being released included) and, below
        the fair share of the ``served`` communities, claim free ones. ``leaving``: held
        leases about to be released (they do not count towards the share)."""
        close_old_connections()
        alive = runbot_heartbeat(holder=self.holder, ttl=self.terms.ttl)
        still = longpoll_lease_renew(group_ids=list(held), holder=self.holder, ttl=self.terms.ttl)
        share = fair_share(communities=len(served), alive=alive, holder=self.holder)
        wanted = set(served)
        serving = (still & wanted) - set(leaving)
        free = [group_id for group_id in served if group_id not in still]
        taken = longpoll_lease_claim_free(
            group_ids=free, holder=self.holder, ttl=self.terms.ttl, limit=share - len(serving)
        )
        return Round(frozenset(still | set(taken)), share, len(alive))

    def release(self, group_id: int) -> None:
        """Free a lease whose long poll has ended."""
        close_old_connections()
        longpoll_lease_release(group_id=group_id, holder=self.holder)

    def leave(self) -> None:
        """Every loop has ended: free the leases, leave the runbots alive."""
        close_old_connections()
        runbot_leave(holder=self.holder)


@dataclass
class Leases:
    """The leases this runbot holds (in the order it took them) and those it releases once
    their loops have ended (``leaving``); when they were last renewed (monotonic)."""

    held: dict[int, int] = field(default_factory=dict)
    leaving: set[int] = field(default_factory=set)
    renewed_at: float | None = None
    taken: int = 0

    def lose(self, now_held: Collection[int]) -> list[int]:
        """Forget the leases not held any more; those that were not being released."""
        lost = [group_id for group_id in self.held if group_id not in now_held]
        unexpected = [group_id for group_id in lost if group_id not in self.leaving]
        for group_id in lost:
            self.drop(group_id)
        return unexpected

    def take(self, now_held: Collection[int]) -> None:
        for group_id in sorted(now_held):
            if group_id not in self.held:
                self.taken += 1
                self.held[group_id] = self.taken

    def serving(self) -> list[int]:
        """The leases held to be served (not being released)."""
        return [group_id for group_id in self.held if group_id not in self.leaving]

    def excess(self, share: int) -> list[int]:
        """The leases served beyond ``share``: the latest taken."""
        return sorted(self.serving(), key=self.held.__getitem__)[max(0, share) :]

    def drop(self, group_id: int) -> None:
        self.held.pop(group_id, None)
        self.leaving.discard(group_id)


class LeaseThread:
    """A thread of its own, with a database connection of its own, for the runbot's lease
    renewals and its read of the served communities: they never wait behind the slices the
    applier commits in the database thread (a lease renewed late under load would expire, and
    the runbot would lose its own communities). A renewal may still wait for the one slice
    holding its leases' rows, which commits within the slice's time."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[..., _T], /, **kwargs: Any) -> _T:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="runbot-leases")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, **kwargs))

    async def close(self) -> None:
        """Close the thread's database connections and let the thread go."""
        if self._executor is not None:
            await self.run(connections.close_all)
            self._executor.shutdown(wait=False)
            self._executor = None
