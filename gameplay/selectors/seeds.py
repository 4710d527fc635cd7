"""The seeds of the deal as the database holds them (Fernet ciphertexts, ``SecretField``):
for ``manage.py rotate_token_keys`` (``gameplay.services.communities.community_secrets_rotate``)
and ``check --deploy`` (``gameplay.checks``). Nothing here decrypts a seed or returns one."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import ExpressionWrapper, F, TextField

from gameplay.models import DealRound, Game
from gameplay.models.secrets import readable


@dataclass(frozen=True)
class StoredSeed:
    """One stored seed: a game's current one (``round`` None) or a deal round's. ``repr``
    hides the value."""

    game_id: int
    round: int | None
    stored: str = field(repr=False)

    @property
    def where(self) -> str:
        """How an operator's message names it (never with its value)."""
        if self.round is None:
            return f"game {self.game_id} seed"
        return f"game {self.game_id} deal round {self.round} seed"


def _raw() -> ExpressionWrapper:
    # Read as plain text: the column's own field would decrypt it.
    return ExpressionWrapper(F("seed"), output_field=TextField())


def stored_seeds(*, lock: bool = False) -> list[StoredSeed]:
    """Every non-empty stored seed, the games' then the rounds', as stored. ``lock``: the rows
    are locked (``select_for_update``), the games first, as every service locks a game before
    its rounds."""
    games = Game.objects.order_by("pk")
    rounds = DealRound.objects.order_by("game_id", "number")
    if lock:
        games, rounds = games.select_for_update(), rounds.select_for_update()
    found = [
        StoredSeed(pk, None, stored)
        for pk, stored in games.annotate(stored_seed=_raw()).values_list("pk", "stored_seed")
        if stored
    ]
    found += [
        StoredSeed(game_id, number, stored)
        for game_id, number, stored in rounds.annotate(stored_seed=_raw()).values_list(
            "game_id", "number", "stored_seed"
        )
        if stored
    ]
    return found


def unreadable_seeds() -> list[StoredSeed]:
    """The stored seeds no key in force decrypts: they read as empty, a deal from them is
    refused and the end of the game would reveal nothing."""
    return [seed for seed in stored_seeds() if not readable(seed.stored)]
