"""gameplay.selectors.seeds: the deal's seeds as the database holds them (ciphertexts, never
decrypted here), named for an operator without their value, and those no key reads."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet

from gameplay import services
from gameplay.models import Actor, DealRound
from gameplay.models.secrets import FERNET_PREFIX
from gameplay.selectors.seeds import StoredSeed, stored_seeds, unreadable_seeds
from tests.gameplay.factories import make_game

pytestmark = pytest.mark.django_db


def test_every_stored_seed_is_listed_games_first_then_rounds_encrypted(settings: Any) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    first = make_game(n=3, seed="первое-зерно")
    second = make_game(n=4, seed="второе-зерно", deal=True)
    services.deal_round_new(game_id=second.pk, by=Actor.gm("test"), seed="третье-зерно")
    found = stored_seeds()
    assert [(s.game_id, s.round) for s in found] == [
        (first.pk, None),
        (second.pk, None),
        (first.pk, 1),
        (second.pk, 1),
        (second.pk, 2),
    ]
    for s in found:
        assert s.stored.startswith(FERNET_PREFIX) and "зерно" not in s.stored
        assert s.stored not in repr(s)
    assert stored_seeds(lock=True) == found
    assert found[0].where == f"game {first.pk} seed"
    assert found[-1].where == f"game {second.pk} deal round 2 seed"
    assert DealRound.objects.get(game=second, number=2).seed == "третье-зерно"


def test_no_seed_is_nothing_to_list() -> None:
    assert stored_seeds() == [] and unreadable_seeds() == []


def test_seeds_no_key_in_force_decrypts_are_unreadable(settings: Any) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    game = make_game(n=3)
    assert unreadable_seeds() == []
    before = stored_seeds()
    settings.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    assert (
        unreadable_seeds()
        == before
        == [
            StoredSeed(game.pk, None, before[0].stored),
            StoredSeed(game.pk, 1, before[1].stored),
        ]
    )
