"""The long poll's backlog: updates polled but not applied yet, taken in fair slices.

``runbot`` keeps polling while it applies (:mod:`vkbot.longpoll`), and each batch that comes
in joins the backlog, which is applied a slice at a time (``vkbot.longpoll._apply_slice``, by
:func:`vkbot.pipeline.apply_updates`), so an update that arrives during a burst waits for one
slice, not for the burst:

- a slice takes up to :data:`SLICE` updates, at most :data:`QUANTUM` of any one game, a
  game's updates in their order, games by fair queueing (:class:`Backlog`): the game whose
  turn would end first in virtual time goes first, so a game with a few updates that comes
  in during a burst (a player's «статус» while a hundred games vote) goes before the games
  with many, and no game is served twice while another waits with a turn that ends sooner;
- an update of no single game (``vkbot.handlers.games_of`` says None) is a barrier: it is
  applied after every update that came before it and before every update that came after it;
- a backlog of at most :data:`~vkbot.pipeline.CHUNK` updates is taken whole, in its order.

The ts a batch ends at is stored once it and everything before it are applied (in the
transaction of the slice that completes them), so a restarted bot polls again from the first
batch not wholly applied; what of it was applied is skipped then (``VkEvent``).

Pure: :meth:`Backlog.place` is handed the function that says which game each update is of.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

#: Updates per slice: about a second of the bot's work on a busy 2-core machine.
SLICE = 120
#: Updates of one game per slice (a game with more goes on in its next turn).
QUANTUM = 50


class Backlog:
    """Polled updates not applied yet, in the order they came, with their batches' ts."""

    def __init__(self, *, whole_up_to: int = 50) -> None:
        self.whole_up_to = whole_up_to
        self._items: dict[int, tuple[Any, Any]] = {}  # seq → (update, facts), in seq order
        self._game: dict[int, int | None] = {}
        self._unplaced: list[int] = []
        self._queues: dict[int, deque[int]] = {}
        self._barriers: deque[int] = deque()
        self._ends: deque[tuple[int, str]] = deque()  # (last seq of a batch, its ts)
        #: Fair queueing by virtual time: a game's next turn is tagged with the virtual time
        #: it would finish at (its start: the clock, or its last turn's end if later, plus
        #: the updates it takes), turns go in tag order, and the clock is the start of the
        #: last turn given. A game that comes late starts at the clock: before every game
        #: whose turn ends later, however long they have been waiting.
        self._clock = 0.0
        self._finish: dict[int, float] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self._items)

    def add(self, updates: Sequence[Any], facts: Sequence[Any], ts: str) -> None:
        """A polled batch and the ts to poll with after it."""
        for update, update_facts in zip(updates, facts, strict=True):
            self._items[self._next] = (update, update_facts)
            self._unplaced.append(self._next)
            self._next += 1
        self._ends.append((self._next - 1, ts))

    def place(self, games_of: Callable[[list[Any]], Sequence[int | None]]) -> None:
        """Learn the games of the updates added since the last call."""
        if not self._unplaced:
            return
        games = games_of([self._items[seq][0] for seq in self._unplaced])
        for seq, game in zip(self._unplaced, games, strict=True):
            self._game[seq] = game
            if game is None:
                self._barriers.append(seq)
            else:
                self._queues.setdefault(game, deque()).append(seq)
        self._unplaced.clear()

    def needs_games(self) -> bool:
        """Whether the next slice is chosen by game (else the backlog is taken whole)."""
        return len(self._items) > self.whole_up_to

    def take(self, limit: int = SLICE, quantum: int = QUANTUM) -> list[tuple[Any, Any, int | None]]:
        """The next slice, removed from the backlog: (update, facts, game) in the order to
        apply them (the game is None where it is not known or there is none). A backlog of
        at most ``whole_up_to`` updates is taken whole; otherwise every update must have been
        placed (:meth:`place`)."""
        if not self._items:
            return []
        if not self.needs_games():
            taken = list(self._items)
            self._queues.clear()
            self._barriers.clear()
            self._unplaced.clear()
        else:
            if self._unplaced:
                raise RuntimeError("Backlog.take: place() the new updates first")
            taken = self._take_fairly(limit, quantum)
        return [(*self._items.pop(seq), self._game.pop(seq, None)) for seq in taken]

    def _take_fairly(self, limit: int, quantum: int) -> list[int]:
        head = next(iter(self._items))
        if self._barriers and self._barriers[0] == head:
            taken: list[int] = []
            for seq in self._items:  # the barriers at the head, in a run
                if not self._barriers or self._barriers[0] != seq or len(taken) >= limit:
                    break
                taken.append(self._barriers.popleft())
            return taken
        fence = self._barriers[0] if self._barriers else self._next
        offers: list[tuple[float, int, int, int]] = []  # (finish tag, head, game, count)
        for game, queue in self._queues.items():
            count = 0
            while count < len(queue) and count < quantum and queue[count] < fence:
                count += 1
            if count:
                start = max(self._clock, self._finish.get(game, 0.0))
                offers.append((start + count, queue[0], game, count))
        offers.sort()
        taken = []
        for tag, _, game, count in offers:
            if taken and len(taken) + count > limit:
                continue  # a smaller game may still fit; this one goes first next time
            queue = self._queues[game]
            taken.extend(queue.popleft() for _ in range(count))
            self._clock = max(self._clock, tag - count)
            self._finish[game] = tag
            if not queue:
                del self._queues[game]
            if len(taken) >= limit:
                break
        if len(self._finish) > 2 * len(self._queues) + 1000:
            self._finish = {g: t for g, t in self._finish.items() if t > self._clock}
        return taken

    def ts_done(self) -> str | None:
        """The ts of the last batch now wholly applied with everything before it, once (None:
        no batch was completed since the last call)."""
        first = next(iter(self._items), self._next)
        ts = None
        while self._ends and self._ends[0][0] < first:
            ts = self._ends.popleft()[1]
        return ts
