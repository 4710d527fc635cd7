"""Holding a community's replies briefly while its Callback events are still being applied.

VK's Callback API posts a community's next event only after the previous one was answered
``ok``, so during a burst the applier (``vkbot/inbox.py``) commits a community's replies a few
at a time, slice after slice. A drain round that sent each commit's rows at once would spend a
request per community per slice. Instead, a community whose due rows are visible while its
events still wait in the Callback inbox (recorded and not applied, or being applied by a slice
that has not committed) is left out of the round for up to ``OUTBOX_COALESCE_SECONDS``
(counted from when the drain first saw it so), so that the rows of the slices that follow go
out in the same ``execute`` request. A community with nothing in the inbox — every long-poll
community, and a Callback community whose player writes while it is quiet — is never held: an
idle player's reply goes out at once, and no reply waits more than the bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

#: Which of the given communities have events in hand (the Callback inbox's).
Busy = Callable[[list[int]], set[int]]


class Coalescer:
    """For one kind of round (the community tokens' or the board's): which due communities to
    hold now. ``hold``: the longest a community is held (0: never)."""

    def __init__(
        self, hold: float, busy: Busy, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.hold = hold
        self.busy = busy
        self.clock = clock
        #: When each held community was first held (monotonic), until it is let go.
        self._since: dict[int, float] = {}

    def held(self, due: Collection[int | None]) -> tuple[set[int], float]:
        """The communities of ``due`` to leave out of this round, and the seconds until the
        first of them is let go (0 when none is held). A community let go (its bound reached,
        or nothing of it in hand any more) is forgotten: its next rows start a new hold."""
        communities = [c for c in due if c is not None]
        if self.hold <= 0 or not communities:
            self._since.clear()
            return set(), 0.0
        in_hand = self.busy(communities)
        now = self.clock()
        held: set[int] = set()
        first_out = 0.0
        for community in communities:
            if community not in in_hand:
                self._since.pop(community, None)
                continue
            left = self._since.setdefault(community, now) + self.hold - now
            if left <= 0:
                del self._since[community]
                continue
            held.add(community)
            first_out = left if not first_out else min(first_out, left)
        for gone in set(self._since) - set(communities):
            del self._since[gone]  # sent meanwhile by another drain, or deleted
        return held, first_out
