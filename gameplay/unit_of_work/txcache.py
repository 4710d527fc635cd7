"""The games the bot's hot path has locked in the current transaction, kept for its next calls
(the store behind :mod:`gameplay.unit_of_work`).

The ingestion pipeline applies the updates of one game one after another in one transaction
(``vkbot.pipeline``). The first vote or night action of a game there locks the game row and
reads the game, its current phase, its seats and the counts below
(``gameplay.services.common.lock_game_hot``); the game's later votes and night actions in the
same transaction get the same handle back, and the log's next ``seq``, the day's vote count and
ballots and the night's standing slots are counted on from there instead of being read again.
Everything else reads and locks afresh (a row the bot's lookup locked, :mod:`.held`, once).

The cache exists only inside :func:`kept` (the pipeline opens it around each transaction of
its updates); outside, nothing is kept and every call reads the database. Staleness is ruled
out by construction:

- only the hot path reads an entry: ``vote_submit`` and ``night_action_submit`` through the
  handle ``lock_game_hot`` gives them, and the bot's selectors the handlers ask before them
  (``roster``, ``game_for_topic``, ``current_phase``, ``seats_of_user``: the game's rows as
  the transaction holds them locked, instead of a second read of the same rows);
- every other service locks its game with ``lock_game``, which drops the game's entry first,
  so what such a service changes is read again by the next hot call;
- an entry is tied to the savepoints it was built and changed in: each change registers a
  no-op ``transaction.on_commit`` marker, which Django discards when a savepoint around it
  rolls back, and an entry whose markers are not all pending any more is dropped (a rolled
  back savepoint also releases the row lock PostgreSQL took in it); the commit or rollback of
  the transaction discards every marker, and leaving :func:`kept` drops every entry;
- a hot call that raises drops its game's entry (its savepoint rolls back).

The deferred rows (:func:`defer`) are tied to the savepoints they were queued in the same way.
:func:`flush` may insert them with more savepoints open than were open when they were queued
(a service that locks its game in a savepoint of its own writes the rows queued before it,
then refuses): the insert goes with those savepoints, the rows do not. Such an insert is
remembered until its savepoints are released; when one of them rolls back instead, the rows
queued outside it are queued again as they were, and the next :func:`flush` inserts them in
their place, before the rows queued since. A refusal takes back its own writes only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Model

from gameplay.models import ACTIVE_STATUSES, Actor, EventKind, Game, GameEvent, Phase, Seat
from outbox import dbrows

from . import seqs


@dataclass(frozen=True)
class CastVote:
    """A day's current vote, as the hot path needs it again."""

    pk: int
    target: int
    early: bool
    void: bool


@dataclass(eq=False)
class LockedGame:
    """A game row this transaction holds locked, with what was read under the lock."""

    game: Game
    phase: Phase | None
    seats: list[Seat]
    #: The next GameEvent seq (None: not read yet).
    next_seq: int | None = None
    #: Every vote cast in ``phase``, changes included (None: not counted yet).
    votes_cast: int | None = None
    #: The current votes of ``phase`` by voter seat number (None: not read yet).
    ballots: dict[int, CastVote] | None = None
    #: The rules' snapshot of ``seats`` (None: not made yet).
    table: Any = None
    #: What stands in ``phase`` (a night): the slots of its current actions, as
    #: ``gameplay.services.night`` keys them (None: not read yet).
    standing: set[tuple[str, Any]] | None = None
    #: Bumped when a hot call begins to write and by every change of what is counted above:
    #: a call that fails before it changes nothing (``gameplay.services.common.hot_game``).
    version: int = 0
    marks: list[Callable[[], None]] = field(default_factory=list)

    def mark(self) -> None:
        """Tie the entry to the savepoints open now (see the module doc); every change of
        what it holds marks it, so a savepoint that rolls back a change takes the entry along."""
        if not active():
            return
        marker = _marker()
        if not self.marks or self.marks[-1] is not marker:
            self.marks.append(marker)

    @property
    def is_kept(self) -> bool:
        """Whether the pipeline's transaction keeps this handle for the game's next hot calls
        (its counts go on from call to call and its new rows are inserted at the end)."""
        return get(self.game.pk) is self

    def log_event(
        self,
        kind: EventKind,
        /,
        *,
        by: Actor = Actor.BOT,
        phase: Phase | None = None,
        override: bool = False,
        **data: Any,
    ) -> GameEvent:
        """Append to the game's event log: kept, with the seq counted on and the row inserted
        at the end of the transaction; else at once, as ``gameplay.services.common.log_event``.
        ``kind`` must be an ``EventKind`` (a ValueError otherwise)."""
        kind = EventKind(kind)
        kept = self.is_kept
        if kept:
            seq = self.take_event_seq(lambda: seqs.peek(self.game))
        else:
            flush()  # the log's queued rows count
            seq = seqs.take(self.game)
        event = GameEvent(
            game=self.game, seq=seq, kind=kind, actor=by, phase=phase, override=override, data=data
        )
        if kept:
            defer([event])
        else:
            dbrows.insert([event])
        return event

    def release(self) -> None:
        """The caller is about to change what the handle holds (a close): the game is kept no
        more (its next call reads it afresh) and the deferred rows are written."""
        forget(self.game.pk)
        flush()

    # --- the bookkeeping of a hot call (``gameplay.unit_of_work.hot_call``) ---

    def begin_writes(self) -> None:
        """A hot call is about to write: a refusal from now on has something to undo."""
        self.version += 1
        self.mark()

    def take_event_seq(self, read_next: Callable[[], int]) -> int:
        """The seq of the game's next GameEvent, counted on from ``read_next()`` (the log's
        next seq, read once, after the deferred rows are written)."""
        if self.next_seq is None:
            flush()  # (rows queued before the game was kept again)
            self.next_seq = read_next()
        seq = self.next_seq
        self.next_seq += 1
        seqs.note(self.game.pk, self.next_seq)
        self.version += 1
        self.mark()
        return seq

    def ballots_or(self, load: Callable[[], dict[int, CastVote]]) -> dict[int, CastVote]:
        """The day's current votes by voter, read once by ``load``."""
        if self.ballots is None:
            self.ballots = load()
        return self.ballots

    def record_ballot(self, voter: int, vote: CastVote) -> None:
        """A vote was cast in the kept phase: it is the voter's current one, and one more."""
        if self.ballots is not None:
            self.ballots[voter] = vote
        if self.votes_cast is not None:
            self.votes_cast += 1
        self.mark()

    def votes_cast_or(self, count: Callable[[], int]) -> int:
        """Every vote cast in the kept phase (changes included), counted once by ``count``."""
        if self.votes_cast is None:
            self.votes_cast = count()
        return self.votes_cast

    def standing_or(self, load: Callable[[], set[tuple[str, Any]]]) -> set[tuple[str, Any]]:
        """The slots of the night's current actions, read once by ``load``."""
        if self.standing is None:
            self.standing = load()
        return self.standing

    def record_standing(self, key: tuple[str, Any]) -> None:
        """A night action now stands in the slot ``key``."""
        if self.standing is not None:
            self.standing.add(key)
        self.mark()

    def table_or(self, make: Callable[[list[Seat]], Any]) -> Any:
        """The rules' snapshot of the kept seats, made once by ``make``."""
        if self.table is None:
            self.table = make(self.seats)
        return self.table


class _State(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.games: dict[int, LockedGame] = {}
        #: Users' seats in active games read for the transaction's updates
        #: (:func:`keep_user_seats`), by user.
        self.user_seats: dict[int, list[Seat]] = {}
        #: The last marker registered (it holds the savepoints open then).
        self.marker: _Marker | None = None
        #: Game rows locked, not read yet (:mod:`.held`), each with its marker, by id.
        self.held: dict[int, tuple[Game, _Marker]] = {}
        #: Rows queued by :func:`defer`, each with its marker, in order.
        self.pending: list[tuple[_Marker, Model]] = []
        #: Rows :func:`flush` inserted with savepoints open that were not open when they were
        #: queued, until those are released, in the order inserted.
        self.inserted: list[_Inserted] = []


_state = _State()


@contextmanager
def kept() -> Iterator[None]:
    """Keep the hot path's locked games until the block ends (inside a transaction)."""
    if not connection.in_atomic_block:
        raise RuntimeError("txcache.kept() needs a transaction")
    _state.depth += 1
    try:
        yield
        if _state.depth == 1:
            flush()
    finally:
        _state.depth -= 1
        if _state.depth == 0:
            _state.games.clear()
            _state.held.clear()
            _state.pending.clear()
            _state.inserted.clear()
            _state.user_seats.clear()
            _state.marker = None


def active() -> bool:
    return _state.depth > 0 and connection.in_atomic_block


def defer(rows: Sequence[Model]) -> bool:
    """Queue new rows of a table nothing in the transaction reads back (the Outbox, the
    event log) to be inserted by :func:`flush`, in one statement per table, when the cache is
    open (True); False: the caller inserts them now. A row queued in a savepoint that rolls
    back is not inserted (it is marked as the kept games are)."""
    if not active():
        return False
    marker = _marker()
    _state.pending.extend((marker, row) for row in rows)
    return True


def flush() -> None:
    """Insert the queued rows that still stand, in the order they were queued (a table's
    rows in one statement). :func:`kept` flushes at its end; whatever reads those tables in
    the transaction, or appends to the event log by its own count, flushes first.

    Rows whose insert a rolled-back savepoint took back while they still stand (see the
    module doc) are inserted again, first."""
    if not _state.pending and not _state.inserted:
        return
    standing = _pending_markers()
    queued = _taken_back(standing)
    queued += [(marker, row) for marker, row in _state.pending if id(marker) in standing]
    _state.pending.clear()
    if not queued:
        return
    open_now = frozenset(_open_savepoints())
    by_model: dict[type[Model], list[Model]] = {}
    for marker, row in queued:
        by_model.setdefault(type(row), []).append(row)
        newer = open_now - marker.sids
        if newer:  # the insert can be rolled back without the row's own savepoints
            _state.inserted.append(_Inserted(_marker(), marker, row, newer))
    for same in by_model.values():
        dbrows.insert(same)


def _taken_back(standing: set[int]) -> list[tuple[_Marker, Model]]:
    """The inserted rows a rolled-back savepoint took back while the savepoints they were
    queued in still stand, made new rows again (with their markers), in the order inserted;
    the inserts settled since (their newer savepoints released) are forgotten."""
    if not _state.inserted:
        return []
    open_now = frozenset(_open_savepoints())
    again: list[tuple[_Marker, Model]] = []
    unsettled: list[_Inserted] = []
    for done in _state.inserted:
        if id(done.insert) not in standing:  # the insert was rolled back
            if id(done.queued) in standing:
                done.row.pk = None
                done.row._state.adding = True
                again.append((done.queued, done.row))
        elif done.newer & open_now:
            unsettled.append(done)
    _state.inserted = unsettled
    return again


def keeps_any() -> bool:
    """Whether any game is kept now (valid or not)."""
    return bool(_state.games) and active()


def keep_user_seats(seats: dict[int, list[Seat]]) -> None:
    """Keep users' seats in active games (read at the start of the transaction, as the bot
    would read them for each update: ``gameplay.selectors.bot.seats_of_user``) until any
    game is forgotten (whatever changes seats locks a game with ``lock_game`` first)."""
    if active():
        _state.user_seats.update(seats)


def user_seats(vk_user_id: int) -> list[Seat] | None:
    """The kept seats of a user (None: not kept)."""
    if not _state.user_seats or not active():
        return None
    return _state.user_seats.get(vk_user_id)


def forget(game_id: int | None = None) -> None:
    """Drop one game's entry (``game_id``), or every entry; the kept users' seats go too."""
    _state.user_seats.clear()
    if game_id is None:
        _state.games.clear()
        _state.held.clear()
    else:
        _state.games.pop(game_id, None)
        _state.held.pop(game_id, None)


def store(entry: LockedGame) -> LockedGame:
    """Keep ``entry`` (when the cache is open), marked for the savepoints open now."""
    if active():
        entry.mark()
        _state.games[entry.game.pk] = entry
    return entry


def stored(game_id: int) -> LockedGame | None:
    """The entry kept for a game, valid or not (for a hot call's bookkeeping)."""
    return _state.games.get(game_id)


class _Marker:
    """A no-op ``on_commit`` callback, registered with the savepoints open then (``sids``):
    Django drops it when one of them rolls back."""

    __slots__ = ("sids",)

    def __init__(self, sids: tuple[str, ...]) -> None:
        self.sids = frozenset(sids)

    def __call__(self) -> None:
        return None


@dataclass(frozen=True, eq=False)
class _Inserted:
    """A row :func:`flush` inserted (``insert``: the marker of the savepoints open then) with
    savepoints open that were not when it was queued (``queued``: its marker); ``newer``:
    those savepoints."""

    insert: _Marker
    queued: _Marker
    row: Model
    newer: frozenset[str]


def _open_savepoints() -> tuple[str, ...]:
    return tuple(sid for sid in connection.savepoint_ids if sid is not None)


def _marker() -> _Marker:
    """The marker of the savepoints open now (registered when there is none yet). Savepoint
    ids are not reused within a transaction, so a marker registered with the same savepoints
    open serves again (it shares their fate)."""
    sids = _open_savepoints()
    last = _state.marker
    if last is not None and last.sids == frozenset(sids):
        return last
    marker = _Marker(sids)
    transaction.on_commit(marker)
    _state.marker = marker
    return marker


def _pending_markers() -> set[int]:
    return {id(item[1]) for item in getattr(connection, "run_on_commit", None) or ()}


def get(game_id: Any) -> LockedGame | None:
    """The valid entry of a game (``Game`` or id), else None (a stale one is dropped)."""
    if not _state.games or not active():
        return None
    pk = game_id.pk if isinstance(game_id, Game) else game_id
    entry = _state.games.get(pk)
    if entry is None:
        return None
    pending = _pending_markers()
    if all(id(m) in pending for m in entry.marks):
        return entry
    _state.games.pop(pk, None)
    return None


def game_with_topic(topic_id: int) -> Game | None:
    """The kept active game whose game topic this is (at most one: a database constraint)."""
    if not _state.games or not active():
        return None
    for pk, entry in list(_state.games.items()):
        if entry.game.topic_id == topic_id and entry.game.status in ACTIVE_STATUSES:
            return entry.game if get(pk) is not None else None
    return None
