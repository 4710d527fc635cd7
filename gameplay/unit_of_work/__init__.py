"""The unit of work of the bot's hot path: what the services see of :mod:`.txcache`
(the games locked and kept for the pipeline's transaction) and :mod:`outbox.dbrows` (the rows
deferred to one INSERT per table at its end).

A service never counts on the cache's fields itself: it asks the kept game's handle
(:class:`LockedGame`) — ``begin_writes()``, ``record_ballot(...)``, ``take_event_seq(...)``,
``ballots_or(...)``, ``standing_or(...)``, ``table_or(...)`` — and the functions here:

- :func:`kept_game`, :func:`keep`, :func:`entry_of_phase`, :func:`holding`: the kept game of a
  game id, a new one, the one whose current phase or seats these are;
- :func:`read_afresh` (the caller changes the game: its kept rows go, the deferred rows are
  written), :func:`forget` (its kept rows go), :func:`flush` (the deferred rows are written);
- :func:`defer`: rows of a table nothing reads back in the transaction, inserted at its end;
- :func:`hot_call`: one hot call's guard (a refusal after the writes began is a crash).

Outside the pipeline's kept transaction (``txcache.kept``) nothing is kept: every call reads
and writes the database at once, as any service.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gameplay.rules.errors import RuleViolation

from .txcache import (
    CastVote,
    LockedGame,
    active,
    defer,
    entry_of_phase,
    flush,
    forget,
    holding,
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
    "entry_of_phase",
    "flush",
    "forget",
    "holding",
    "hot_call",
    "keep",
    "kept_game",
    "read_afresh",
]


def keep(entry: LockedGame) -> LockedGame:
    """Keep a game just locked and read (when the pipeline keeps games); returns it."""
    return store(entry)


def read_afresh(game_id: int) -> None:
    """The caller is about to change the game, or read its event log or Outbox: the game's
    kept rows are dropped and the deferred rows written."""
    forget(game_id)
    flush()


class RefusalAfterWrites(RuntimeError):
    """A hot call refused something after it had begun writing (a bug: see :func:`hot_call`)."""


@contextmanager
def hot_call(entry: LockedGame) -> Iterator[LockedGame]:
    """One hot call on a kept game, inside the pipeline's kept transaction (no savepoint).

    A hot call checks everything before it writes and says when its writes begin
    (``entry.begin_writes()``), so a refusal before that has nothing to undo and the kept
    rows stay; a refusal after it would leave half a change, so it is raised as
    :class:`RefusalAfterWrites` instead (a crash: the pipeline rolls the update back), and any
    exception after the writes began drops the kept rows. After a call that changed them,
    they are marked for the savepoints open now (see :mod:`gameplay.unit_of_work.txcache`)."""
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
