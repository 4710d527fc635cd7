"""The seeds of the deal at rest: stored Fernet-encrypted like the tokens, so that no query
compares a guess with them (``Game.seed``, ``DealRound.seed``); the migration encrypts the
plain seeds of existing games; ``manage.py rotate_token_keys`` encrypts them again with the
first key; ``check --deploy`` names a seed no key decrypts, and no deal is made from it."""

from __future__ import annotations

import importlib
import io
import logging

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.core.checks import Error
from django.core.management import call_command
from django.db import connection, transaction

from gameplay import services
from gameplay.checks import stored_seeds_readable
from gameplay.models import Actor, DealRound, Game, GameStatus, Seat
from gameplay.models.secrets import FERNET_PREFIX, Sealed
from gameplay.refusals import SeedUnreadable
from gameplay.selectors.seeds import stored_seeds, unreadable_seeds
from gameplay.services.common import lock_game
from gameplay.services.communities import SecretsUnreadable, community_secrets_rotate
from tests.gameplay.factories import make_game

pytestmark = pytest.mark.django_db

SEED = "a4" + "7d" * 31
KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()
MIGRATION = importlib.import_module("gameplay.migrations.0015_encrypted_seeds")


def raw(model: type[Game] | type[DealRound], pk: int) -> str:
    """The seed column as the database holds it."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT seed FROM {model._meta.db_table} WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


def write_raw(model: type[Game] | type[DealRound], pk: int, stored: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} SET seed = %s WHERE id = %s", [stored, pk])


def rotate() -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("rotate_token_keys", stdout=out, stderr=err)
    except SystemExit as ended:
        return int(ended.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_the_seeds_are_stored_encrypted_and_no_lookup_finds_them() -> None:
    game = make_game(9, seed=SEED, deal=True)
    rnd = DealRound.objects.get(game=game)
    stored = [raw(Game, game.pk), raw(DealRound, rnd.pk)]
    assert all(s.startswith(FERNET_PREFIX) and SEED not in s for s in stored)
    assert stored[0] != stored[1]  # the same seed, a ciphertext of its own per row
    assert Game.objects.get(pk=game.pk).seed == SEED == DealRound.objects.get(pk=rnd.pk).seed
    for model in (Game, DealRound):
        for lookup in ("exact", "iexact", "in", "contains", "icontains", "startswith"):
            value = [SEED] if lookup == "in" else SEED
            assert not model.objects.filter(**{f"seed__{lookup}": value}).exists()
        # A short guess is compared with the ciphertext, never the seed: what it finds is what
        # the stored text of each row (random, its own) happens to hold.
        for guess in (SEED[:1], SEED[:2]):
            for lookup, test in (("startswith", str.startswith), ("contains", str.__contains__)):
                found = set(
                    model.objects.filter(**{f"seed__{lookup}": guess}).values_list("pk", flat=True)
                )
                pks = model.objects.values_list("pk", flat=True)
                # SQLite's LIKE ignores the case of ASCII letters (Django's documented caveat).
                fold = str.lower if connection.vendor == "sqlite" else str
                assert found == {pk for pk in pks if test(fold(raw(model, pk)), fold(guess))}


def test_the_migration_encrypts_the_plain_seeds_once_and_reverses() -> None:
    game = make_game(9, seed=SEED)
    rnd = DealRound.objects.get(game=game)
    empty = make_game(9, seed="other")
    write_raw(Game, game.pk, SEED)  # as stored before the migration
    write_raw(DealRound, rnd.pk, SEED)
    write_raw(Game, empty.pk, "")  # a game whose seed was never set stays empty

    MIGRATION.encrypt_seeds(apps, None)
    first = raw(Game, game.pk), raw(DealRound, rnd.pk)
    MIGRATION.encrypt_seeds(apps, None)  # run again: nothing is encrypted twice

    assert (raw(Game, game.pk), raw(DealRound, rnd.pk)) == first
    assert all(s.startswith(FERNET_PREFIX) for s in first) and raw(Game, empty.pk) == ""
    assert Game.objects.get(pk=game.pk).seed == SEED == DealRound.objects.get(pk=rnd.pk).seed

    MIGRATION.decrypt_seeds(apps, None)
    assert (raw(Game, game.pk), raw(DealRound, rnd.pk)) == (SEED, SEED)


def test_rotation_encrypts_the_seeds_again_with_the_first_key(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    game = make_game(9, seed=SEED, deal=True)
    plain = make_game(9, seed="plain-seed")
    write_raw(Game, plain.pk, "plain-seed")  # one left unencrypted
    before = {s.where: s.stored for s in stored_seeds()}

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    status, out, err = rotate()

    assert (status, err) == (0, "")
    assert out.strip() == (
        "Encrypted 4 seed(s) of the deal of 2 game(s) again with the first key of "
        "TOKEN_ENCRYPTION_KEYS (3 were under an older key; 1 were stored unencrypted). The "
        "older keys can be dropped now."
    )
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B]  # the old key dropped: every seed still reads
    assert unreadable_seeds() == []
    after = {s.where: s.stored for s in stored_seeds()}
    assert set(after) == set(before) and all(after[w] != before[w] for w in after)
    assert all(Fernet(KEY_B.encode()).decrypt(s.encode()) for s in after.values())
    assert Game.objects.get(pk=game.pk).seed == SEED
    assert DealRound.objects.get(game=game).seed == SEED
    assert Game.objects.get(pk=plain.pk).seed == "plain-seed"


def test_rotation_refuses_a_seed_no_key_decrypts(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    game = make_game(9, seed=SEED)
    rnd = DealRound.objects.get(game=game)
    foreign = Fernet(Fernet.generate_key()).encrypt(b"lost-seed").decode()
    write_raw(DealRound, rnd.pk, foreign)
    before = {s.where: s.stored for s in stored_seeds()}

    with pytest.raises(SecretsUnreadable) as refused:
        community_secrets_rotate()
    status, out, err = rotate()

    assert f"game {game.pk} deal round 1 seed" in str(refused.value)
    assert status == 2 and out == "" and "lost-seed" not in err and foreign not in err
    assert (
        f"1 stored secret(s) cannot be decrypted with the configured keys: game {game.pk} " in err
    )
    assert {s.where: s.stored for s in stored_seeds()} == before


def test_check_and_deal_refuse_a_seed_no_key_decrypts(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    game = make_game(9, seed=SEED)
    assert stored_seeds_readable() == []

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B]
    found = stored_seeds_readable()

    assert [(type(m), m.id) for m in found] == [(Error, "gameplay.E002")]
    assert f"game {game.pk} seed, game {game.pk} deal round 1 seed" in found[0].msg
    assert SEED not in found[0].msg
    with pytest.raises(SeedUnreadable):
        services.game_deal(game_id=game.pk, by=Actor.gm("test"))
    assert Game.objects.get(pk=game.pk).status == GameStatus.RECRUITING
    assert not Seat.objects.filter(game=game, number__isnull=False).exists()

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B, KEY_A]  # the key back: it deals
    services.game_deal(game_id=game.pk, by=Actor.gm("test"))
    assert Game.objects.get(pk=game.pk).status == GameStatus.DEALT


def test_a_locked_game_keeps_its_seed_encrypted_until_it_is_read(settings, caplog) -> None:
    """The services' lock (``lock_game``) reads the game row without decrypting the seed: it
    stays as stored, shown by no ``repr``, until the attribute is read, which gives what any
    other read gives; saving the whole row stores the same seed again, encrypted."""
    game = make_game(9, seed=SEED)
    with transaction.atomic():
        locked = lock_game(game_id=game.pk)
        sealed = locked.__dict__["seed"]
        assert isinstance(sealed, Sealed) and sealed.stored == raw(Game, game.pk)
        assert SEED not in repr(sealed) and sealed.stored not in repr(sealed)
        assert locked.seed == SEED == Game.objects.get(pk=game.pk).seed
        assert locked.__dict__["seed"] == SEED
        assert Game.objects.filter(pk=game.pk).values_list("seed", flat=True).get() == SEED
        unread = lock_game(game_id=game.pk)
        unread.save()  # every column, the seed read (and encrypted anew) as it is saved
    stored = raw(Game, game.pk)
    assert stored.startswith(FERNET_PREFIX) and stored != sealed.stored
    assert Game.objects.get(pk=game.pk).seed == SEED
    # A seed no key decrypts reads as empty when it is read, and says so in the log.
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    write_raw(Game, game.pk, Fernet(KEY_B.encode()).encrypt(b"x").decode())
    with transaction.atomic():
        locked = lock_game(game_id=game.pk)
        assert not secrets_log(caplog)
        assert locked.seed == ""
    assert [r.levelname for r in secrets_log(caplog)] == ["ERROR"]


def secrets_log(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "gameplay.models.secrets"]
