"""The long poll's backlog: updates polled but not applied yet, taken in fair slices.

``runbot`` keeps polling while it applies (:mod:`vkbot.longpoll`), and each batch that comes
in joins the backlog of the runbot (:mod:`vkbot.applier`), which holds every community's
updates and is applied a slice at a time, one transaction per slice
(:func:`vkbot.pipeline.apply_sections`), so an update that arrives during a burst waits for
one slice, not for the burst:

- a slice takes up to :data:`SLICE` updates, at most :data:`QUANTUM` of any one game, a
  game's updates in their order, games by fair queueing (:class:`Backlogs`) across every
  community: the game whose turn would end first in virtual time goes first, so a game with
  a few updates that comes in during a burst (a player's «статус» while a hundred games
  vote, in the same community or another) goes before the games with many, and no game is
  served twice while another waits with a turn that ends sooner;
- an update of no single game (``vkbot.handlers.games_of`` says None) is a barrier within its
  community: it is applied after every update of its community that came before it and
  before every one that came after it. A run of them at the head of a community's backlog
  takes a turn of its own (up to :data:`QUANTUM`), fairly beside the games;
- a backlog of at most :data:`~vkbot.pipeline.CHUNK` updates in all is taken whole, each
  community's in its order (no game needs to be known).

The ts a batch ends at is stored once it and everything of its community before it are
applied (in the transaction of the slice that completes them), so a restarted bot polls again
from the first batch not wholly applied; what of it was applied is skipped then (``VkEvent``).

Pure: :meth:`Backlogs.place` is handed the function that says which game each update is of.
:class:`Backlog` is the backlog of one community alone.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Updates per slice: about a second of the bot's work on a busy 2-core machine.
SLICE = 120
#: Updates of one game per slice (a game with more goes on in its next turn).
QUANTUM = 50

#: An update as a slice hands it out: (update, its prefetched facts, its game or None).
Taken = tuple[Any, Any, int | None]
#: Which game each update of a community is of: ``games_of(group_id, updates)``.
GamesOf = Callable[[int, list[Any]], Sequence[int | None]]


@dataclass
class _Community:
    """One community's updates not applied yet, by sequence number (shared by every
    community of the backlog, so they order arrivals across communities too)."""

    items: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # in seq order
    game: dict[int, int | None] = field(default_factory=dict)
    unplaced: list[int] = field(default_factory=list)
    queues: dict[int, deque[int]] = field(default_factory=dict)
    barriers: deque[int] = field(default_factory=deque)
    ends: deque[tuple[int, str]] = field(default_factory=deque)  # (last seq of a batch, its ts)

    def head(self) -> int | None:
        return next(iter(self.items), None)

    def forget_order(self) -> None:
        self.queues.clear()
        self.barriers.clear()
        self.unplaced.clear()


class Backlogs:
    """Several communities' polled updates not applied yet, in the order they came, with
    their batches' ts, taken together in fair slices (see the module doc)."""

    def __init__(self, *, whole_up_to: int = 50) -> None:
        self.whole_up_to = whole_up_to
        self._communities: dict[int, _Community] = {}
        self._size = 0
        self._next = 0
        #: Fair queueing by virtual time: a turn of a game (a community and a game; a run of a
        #: community's barriers is the community and None) is tagged with the virtual time it
        #: would finish at (its start: the clock, or its last turn's end if later, plus the
        #: updates it takes), turns go in tag order, and the clock is the start of the last
        #: turn given. A game that comes late starts at the clock: before every game whose
        #: turn ends later, however long they have been waiting.
        self._clock = 0.0
        self._finish: dict[tuple[int, int | None], float] = {}

    def __len__(self) -> int:
        return self._size

    def pending(self, group_id: int) -> int:
        """Updates of ``group_id`` not taken yet."""
        community = self._communities.get(group_id)
        return len(community.items) if community is not None else 0

    def groups(self) -> list[int]:
        """The communities with updates or a batch's ts not handed out yet."""
        return list(self._communities)

    def add(self, group_id: int, updates: Sequence[Any], facts: Sequence[Any], ts: str) -> None:
        """A batch polled for ``group_id`` and the ts to poll with after it."""
        community = self._communities.setdefault(group_id, _Community())
        for update, update_facts in zip(updates, facts, strict=True):
            community.items[self._next] = (update, update_facts)
            community.unplaced.append(self._next)
            self._next += 1
        self._size += len(updates)
        community.ends.append((self._next - 1, ts))

    def drop(self, group_id: int) -> int:
        """Forget everything of ``group_id`` (its long poll polls it again from the stored
        ts); how many updates were dropped."""
        community = self._communities.pop(group_id, None)
        if community is None:
            return 0
        self._size -= len(community.items)
        return len(community.items)

    def place(self, games_of: GamesOf, group_id: int | None = None) -> None:
        """Learn the games of the updates added since the last call (of ``group_id`` only, or
        of every community); ``games_of`` is called once per community."""
        groups = self.groups() if group_id is None else [group_id]
        for group in groups:
            community = self._communities.get(group)
            if community is None or not community.unplaced:
                continue
            games = games_of(group, [community.items[seq][0] for seq in community.unplaced])
            for seq, game in zip(community.unplaced, games, strict=True):
                community.game[seq] = game
                if game is None:
                    community.barriers.append(seq)
                else:
                    community.queues.setdefault(game, deque()).append(seq)
            community.unplaced.clear()

    def unplaced(self) -> list[int]:
        """The communities with updates whose games are not known yet."""
        return [group for group, community in self._communities.items() if community.unplaced]

    def needs_games(self) -> bool:
        """Whether the next slice is chosen by game (else the backlog is taken whole)."""
        return self._size > self.whole_up_to

    def take(self, limit: int = SLICE, quantum: int = QUANTUM) -> dict[int, list[Taken]]:
        """The next slice, removed from the backlog: by community, its updates in the order
        to apply them (the game is None where it is not known or there is none). A backlog
        of at most ``whole_up_to`` updates is taken whole; otherwise every update must have
        been placed (:meth:`place`)."""
        if not self._size:
            return {}
        if not self.needs_games():
            chosen = {group: list(c.items) for group, c in self._communities.items() if c.items}
            for community in self._communities.values():
                community.forget_order()
        else:
            if self.unplaced():
                raise RuntimeError("Backlogs.take: place() the new updates first")
            chosen = self._take_fairly(limit, quantum)
        out: dict[int, list[Taken]] = {}
        for group, seqs in chosen.items():
            community = self._communities[group]
            items, games = community.items, community.game
            out[group] = [(*items.pop(seq), games.pop(seq, None)) for seq in seqs]
            self._size -= len(seqs)
        return out

    def _offers(self, quantum: int) -> list[tuple[float, int, int, int | None, int]]:
        """Every turn that could be given now: (finish tag, head seq, community, game, count);
        a community whose head is a barrier offers the run of barriers there (game None)."""
        offers: list[tuple[float, int, int, int | None, int]] = []
        for group, community in self._communities.items():
            head = community.head()
            if head is None:
                continue
            barriers = community.barriers
            if barriers and barriers[0] == head:
                count = 0
                for seq in community.items:
                    if count >= min(quantum, len(barriers)) or barriers[count] != seq:
                        break
                    count += 1
                start = max(self._clock, self._finish.get((group, None), 0.0))
                offers.append((start + count, head, group, None, count))
                continue
            fence = barriers[0] if barriers else self._next
            for game, queue in community.queues.items():
                count = 0
                while count < len(queue) and count < quantum and queue[count] < fence:
                    count += 1
                if count:
                    start = max(self._clock, self._finish.get((group, game), 0.0))
                    offers.append((start + count, queue[0], group, game, count))
        offers.sort(key=lambda offer: offer[:2])
        return offers

    def _take_fairly(self, limit: int, quantum: int) -> dict[int, list[int]]:
        """Turns in tag order while they fit, in rounds: a community that took its barriers
        (or everything before one) offers its next turns in the next round of the slice. A
        community's updates come out in an order that keeps its games' and barriers'."""
        taken: dict[int, list[int]] = {}
        size = 0
        while size < limit:
            given = 0
            for tag, _, group, game, count in self._offers(quantum):
                if size and size + count > limit:
                    continue  # a smaller turn may still fit; this one goes first next time
                community = self._communities[group]
                if game is None:
                    seqs = [community.barriers.popleft() for _ in range(count)]
                else:
                    queue = community.queues[game]
                    seqs = [queue.popleft() for _ in range(count)]
                    if not queue:
                        del community.queues[game]
                taken.setdefault(group, []).extend(seqs)
                size += count
                given += 1
                self._clock = max(self._clock, tag - count)
                self._finish[(group, game)] = tag
                if size >= limit:
                    break
            if not given:
                break
        flows = sum(len(c.queues) + 1 for c in self._communities.values())
        if len(self._finish) > 2 * flows + 1000:
            self._finish = {key: tag for key, tag in self._finish.items() if tag > self._clock}
        return taken

    def ts_done(self, group_id: int) -> str | None:
        """The ts of ``group_id``'s last batch now wholly applied with everything of the
        community before it, once (None: no batch was completed since the last call)."""
        community = self._communities.get(group_id)
        if community is None:
            return None
        first = community.head()
        ts = None
        while community.ends and (first is None or community.ends[0][0] < first):
            ts = community.ends.popleft()[1]
        if not community.items and not community.ends:
            del self._communities[group_id]
        return ts


class Backlog:
    """The backlog of one community alone (:class:`Backlogs` of one)."""

    GROUP = 0

    def __init__(self, *, whole_up_to: int = 50) -> None:
        self._all = Backlogs(whole_up_to=whole_up_to)

    def __len__(self) -> int:
        return len(self._all)

    def add(self, updates: Sequence[Any], facts: Sequence[Any], ts: str) -> None:
        self._all.add(self.GROUP, updates, facts, ts)

    def place(self, games_of: Callable[[list[Any]], Sequence[int | None]]) -> None:
        self._all.place(lambda group, updates: games_of(updates))

    def needs_games(self) -> bool:
        return self._all.needs_games()

    def take(self, limit: int = SLICE, quantum: int = QUANTUM) -> list[Taken]:
        return self._all.take(limit, quantum).get(self.GROUP, [])

    def ts_done(self) -> str | None:
        return self._all.ts_done(self.GROUP)
