"""Game rows the bot's lookup locked before a hot call reads them (``gameplay.services.common``:
``hot_seats_of_user``), kept in :mod:`.txcache`'s state and forgotten with its kept games."""

from __future__ import annotations

from gameplay.models import Game

from .txcache import _marker, _pending_markers, _state, active


def hold(game: Game) -> None:
    """The caller has just locked ``game``'s row (read under the lock) without reading its
    phase and players: the hot path reads those when it needs the game (:func:`held`) instead
    of locking the row again. Tied to the savepoints open now (a rolled-back savepoint
    releases the lock)."""
    if active():
        _state.held[game.pk] = (game, _marker())


def held(game_id: int) -> Game | None:
    """The game row :func:`hold` says this transaction holds locked, else None."""
    if not _state.held or not active():
        return None
    found = _state.held.get(game_id)
    if found is None:
        return None
    game, marker = found
    if id(marker) in _pending_markers():
        return game
    del _state.held[game_id]
    return None
