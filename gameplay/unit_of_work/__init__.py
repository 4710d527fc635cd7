"""The unit of work of a game: the game row locked in the current transaction, with its current
phase and its seated players as read under the lock (:class:`LockedGame`).

Who makes one: ``gameplay.services.common.lock_game_hot`` (the bot's hot path, a vote or a
night action: the game locked, then its players, phase and counts read in one statement,
:func:`read_locked`; a game the bot's lookup locked already, :func:`hold`, is not locked
again) and the services that lock a game with ``lock_game`` and then hand what they read to
a ``*_locked`` function. Who gets one: every ``*_locked`` function of the services takes it
as ``uow``, so what it reads and counts is a parameter, not a lookup.

The hot path's handle carries what its calls count and read again: the next event-log seq, the
day's current ballots and vote count, the night's standing slots, the rules' snapshot of the
seats (``ballots_or``, ``votes_cast_or``, ``standing_or``, ``table_or``, ``log_event``). Inside
the ingestion pipeline's transaction (:func:`kept`, opened by ``vkbot.pipeline`` around each
transaction of updates) the handle is *kept*: the game's later votes and night actions in the
same transaction get the same handle back and count on from it, and its new rows of the event
log and the Outbox are inserted together at the end (:func:`defer`, :func:`flush`; the plain SQL
is :mod:`outbox.dbrows`). That is what the cache is for: a burst of a game's events (runbot
takes up to 50 of one game per transaction) costs about two queries each instead of ten
(``tests/vkbot/test_handlers_queries.py`` measures it). Outside :func:`kept` a handle lives for
one call and every row is written at once.

Staleness is ruled out in :mod:`.txcache`: whatever else changes a game locks it with
``lock_game``, which drops its kept handle first (:func:`read_afresh`); a kept handle is tied to
the savepoints it was built and changed in; a hot call's guard (:func:`hot_call`) drops it when
the call fails after it began to write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gameplay.rules.errors import RuleViolation

from .held import held, hold
from .hotread import lock_game_row, read_locked, standing_key
from .seqs import read_next as next_event_seq
from .seqs import take as take_event_seq
from .txcache import (
    CastVote,
    LockedGame,
    active,
    defer,
    flush,
    forget,
    kept,
    store,
    stored,
)
from .txcache import get as kept_game

__all__ = [
    "CastVote",
    "LockedGame",
    "RefusalAfterWrites",
    "active",
    "defer",
    "flush",
    "forget",
    "held",
    "hold",
    "hot_call",
    "keep",
    "kept",
    "kept_game",
    "lock_game_row",
    "next_event_seq",
    "read_afresh",
    "read_locked",
    "standing_key",
    "take_event_seq",
]


def keep(entry: LockedGame) -> LockedGame:
    """Keep a game just locked and read (inside :func:`kept`; a no-op outside); returns it."""
    return store(entry)


def read_afresh(game_id: int) -> None:
    """The caller is about to change the game, or read its event log or Outbox: the game's
    kept handle is dropped and the deferred rows written."""
    forget(game_id)
    flush()


class RefusalAfterWrites(RuntimeError):
    """A hot call refused something after it had begun writing (a bug: see :func:`hot_call`)."""


@contextmanager
def hot_call(entry: LockedGame) -> Iterator[LockedGame]:
    """One hot call on a kept game, inside the pipeline's kept transaction (no savepoint).

    A hot call checks everything before it writes and says when its writes begin
    (``entry.begin_writes()``), so a refusal before that has nothing to undo and the kept
    handle stays; a refusal after it would leave half a change, so it is raised as
    :class:`RefusalAfterWrites` instead (a crash: the pipeline rolls the update back), and any
    exception after the writes began drops the kept handle. After a call that changed it, it
    is marked for the savepoints open now (see :mod:`.txcache`)."""
    game_id = entry.game.pk
    version = entry.version
    try:
        yield entry
    except RuleViolation as exc:
        if entry.version == version:
            raise
        forget(game_id)
        raise RefusalAfterWrites(f"refused after writing: {exc.reason}") from exc
    except BaseException:
        if entry.version != version:
            forget(game_id)
        raise
    if entry.version != version and stored(game_id) is entry:
        entry.mark()
