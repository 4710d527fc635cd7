"""The event log's next ``seq`` of each game, as far as the current transaction knows it.

``seq`` counts on per game (``GameEvent``), and every append runs with the game row locked,
so once this transaction has read the log's last seq (``MAX(seq)``, or the hot path's read,
:mod:`.hotread`) or appended to it, nobody else can append to that game's log until it
ends: the next seq is the last one taken plus one, and need not be read again. Every append
takes its seq here (``gameplay.services.common.log_event``, ``LockedGame.log_event``).

What is known is tied to the transaction and to the savepoints open when it was learnt, as
the kept games of :mod:`.txcache` are: a no-op ``transaction.on_commit`` marker, which Django
drops when one of those savepoints rolls back (taking back the rows counted) and when the
transaction ends. A seq whose marker is gone is read again; outside a transaction nothing is
kept.
"""

from __future__ import annotations

import threading

from django.db import connection, transaction
from django.db.models import Max

from gameplay.models import Game, GameEvent

#: Games remembered at most (a long transaction over many games forgets the oldest).
MOST_GAMES = 256


class _Marker:
    """A no-op ``on_commit`` callback registered with the savepoints open then (``sids``)."""

    __slots__ = ("sids",)

    def __init__(self, sids: frozenset[str]) -> None:
        self.sids = sids

    def __call__(self) -> None:
        return None


class _State(threading.local):
    def __init__(self) -> None:
        #: The next seq by game id, with the marker of when it was learnt.
        self.games: dict[int, tuple[int, _Marker]] = {}
        self.marker: _Marker | None = None


_state = _State()


def read_next(game: Game) -> int:
    """The seq of the game's next GameEvent, as the log holds it (the game row is locked)."""
    return (GameEvent.objects.filter(game=game).aggregate(m=Max("seq"))["m"] or 0) + 1


def take(game: Game) -> int:
    """The seq of the game's next GameEvent, taken (the game row is locked; the caller inserts
    the event in this transaction, or queues it to be)."""
    seq = peek(game)
    note(game.pk, seq + 1)
    return seq


def peek(game: Game) -> int:
    """The seq of the game's next GameEvent, not taken: as known, else read and remembered."""
    known = _state.games.get(game.pk)
    if known is not None:
        if _pending(known[1]):
            return known[0]
        del _state.games[game.pk]
    seq = read_next(game)
    note(game.pk, seq)
    return seq


def note(game_id: int, next_seq: int) -> None:
    """The game's next seq is ``next_seq`` (read or counted under the game's lock, its rows
    inserted or queued in the savepoints open now)."""
    if not connection.in_atomic_block:
        return
    games = _state.games
    games.pop(game_id, None)
    if len(games) >= MOST_GAMES:
        del games[next(iter(games))]
    games[game_id] = (next_seq, _marker())


def _marker() -> _Marker:
    """The marker of the savepoints open now: the last one while it stands and the same
    savepoints are open (savepoint ids are not reused within a transaction), else a new one."""
    sids = frozenset(sid for sid in connection.savepoint_ids if sid is not None)
    last = _state.marker
    if last is not None and last.sids == sids and _pending(last):
        return last
    marker = _Marker(sids)
    transaction.on_commit(marker)
    _state.marker = marker
    return marker


def _pending(marker: _Marker) -> bool:
    """Whether ``marker`` still waits for the commit: no savepoint of its rolled back, and the
    transaction it was registered in is the one open now (the latest callbacks first: a
    marker checked is mostly a recent one)."""
    return any(item[1] is marker for item in reversed(connection.run_on_commit))
