"""Secrets at rest: ``manage.py rotate_token_keys`` encrypts every stored
community secret again with the first key, refuses (changing nothing) when a stored value no
configured key decrypts, and the deployment's checks say when the keys are not set or a stored
secret cannot be read."""

from __future__ import annotations

import io

import pytest
from cryptography.fernet import Fernet
from django.core.checks import Error
from django.core.checks import Warning as CheckWarning
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection

from gameplay.checks import stored_secrets_readable, token_encryption_keys_set
from gameplay.models import Community
from gameplay.models.secrets import FERNET_PREFIX
from gameplay.selectors.communities import stored_secrets, unreadable_secrets
from gameplay.services.communities import SecretsUnreadable, community_secrets_rotate

pytestmark = pytest.mark.django_db

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()
TOKENS = {"group_token": "group-token-1", "user_token": "user-token-1",
          "callback_secret": "callback-secret-1"}  # fmt: skip


def community(vk_id: int, **secrets: str) -> Community:
    return Community.objects.create(vk_id=vk_id, name=f"club{vk_id}", connected=True, **secrets)


def stored(row: Community) -> dict[str, str]:
    """The row's secrets as the database holds them."""
    return {s.field: s.stored for s in stored_secrets(Community.objects.filter(pk=row.pk))}


def rotate() -> tuple[int, str, str]:
    """``manage.py rotate_token_keys``: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("rotate_token_keys", stdout=out, stderr=err)
    except SystemExit as ended:
        return int(ended.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_rotation_moves_every_secret_to_the_new_key(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    first = community(101, **TOKENS)
    second = community(102, group_token="group-token-2")
    community(103)  # no secret at all
    before = {**stored(first), **{f"2.{k}": v for k, v in stored(second).items()}}
    assert all(v.startswith(FERNET_PREFIX) for v in before.values())
    assert "group-token-1" not in str(before)

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    status, out, err = rotate()

    assert (status, err) == (0, "")
    assert out.strip() == (
        "Encrypted 4 secret(s) of 2 community(ies) again with the first key of "
        "TOKEN_ENCRYPTION_KEYS (4 were under an older key). The older keys can be dropped now."
    )
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B]  # the old key dropped: everything still reads
    assert unreadable_secrets() == []
    row = Community.objects.get(pk=first.pk)
    assert {name: getattr(row, name) for name in TOKENS} == TOKENS
    assert Community.objects.get(pk=second.pk).group_token == "group-token-2"
    for name, value in stored(row).items():
        assert value != before[name] and Fernet(KEY_B.encode()).decrypt(value.encode())

    status, out, _ = rotate()  # again: nothing left under an older key
    assert status == 0 and "(all were under it already)" in out


def test_rotation_refuses_a_secret_no_key_decrypts_and_changes_nothing(
    settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    kept = community(201, **TOKENS)
    lost = community(202, group_token="group-token-2")
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B]
    community(203, group_token="group-token-3")  # under the new key
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    with connection.cursor() as cursor:  # and one value encrypted with a key nobody has
        foreign = Fernet(Fernet.generate_key()).encrypt(b"lost-token").decode()
        cursor.execute(f"UPDATE {Community._meta.db_table} SET user_token = %s WHERE id = %s",
                       [foreign, lost.pk])  # fmt: skip
    before = {s.where: s.stored for s in stored_secrets()}

    with pytest.raises(SecretsUnreadable):
        community_secrets_rotate()
    status, out, err = rotate()

    assert status == 2 and out == ""
    assert err.splitlines() == [
        f"rotate_token_keys: refused: 1 stored secret(s) cannot be decrypted with the "
        f"configured keys: community {lost.pk} (VK 202) user_token; nothing was changed. Put the "
        "key they were encrypted with back into TOKEN_ENCRYPTION_KEYS (after the first) and "
        "run it again."
    ]
    assert "lost-token" not in err and foreign not in err
    assert {s.where: s.stored for s in stored_secrets()} == before
    assert Community.objects.get(pk=kept.pk).group_token == "group-token-1"


def test_rotation_encrypts_a_value_stored_in_plain_text(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    row = community(301)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Community._meta.db_table} SET group_token = %s WHERE id = %s",
                       ["plain-token", row.pk])  # fmt: skip

    status, out, _ = rotate()

    assert status == 0 and "(1 were stored unencrypted)" in out
    assert stored(row)["group_token"].startswith(FERNET_PREFIX)
    assert Community.objects.get(pk=row.pk).group_token == "plain-token"


def test_rotation_with_nothing_stored_says_so(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    community(401)

    assert rotate() == (0, "No community secret is stored: nothing to encrypt again.\n", "")


def test_first_keys_take_over_from_the_secret_key_derivation(settings) -> None:
    """A deployment that never set TOKEN_ENCRYPTION_KEYS sets one and rotates: the tokens
    stored under SECRET_KEY's key read with the new key alone once SECRET_KEY changes."""
    settings.TOKEN_ENCRYPTION_KEYS = []
    row = community(501, group_token="derived-token")

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    assert Community.objects.get(pk=row.pk).group_token == "derived-token"
    status, out, _ = rotate()
    settings.SECRET_KEY = "another-secret-key"

    assert status == 0 and "(1 were under an older key)" in out
    assert Community.objects.get(pk=row.pk).group_token == "derived-token"


# --- the deployment's checks -------------------------------------------------------------------


def test_check_warns_without_token_encryption_keys(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = []
    found = token_encryption_keys_set()
    assert [(type(m), m.id) for m in found] == [(CheckWarning, "gameplay.W001")]
    hint = found[0].hint
    assert (
        "SECRET_KEY_FALLBACKS" in found[0].msg and hint is not None and "rotate_token_keys" in hint
    )

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    assert token_encryption_keys_set() == []


def test_check_errs_on_a_stored_secret_no_key_decrypts(settings) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [KEY_A]
    row = community(601, **TOKENS)
    assert stored_secrets_readable() == []

    settings.TOKEN_ENCRYPTION_KEYS = [KEY_B]
    found = stored_secrets_readable()

    assert [(type(m), m.id) for m in found] == [(Error, "gameplay.E001")]
    assert found[0].msg.startswith("3 stored secret(s) cannot be decrypted")
    assert f"community {row.pk} (VK 601) group_token" in found[0].msg
    assert "group-token-1" not in found[0].msg
    # manage.py check --deploy shows both.
    settings.TOKEN_ENCRYPTION_KEYS = []
    with pytest.raises(SystemCheckError) as failed:
        call_command("check", deploy=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert "gameplay.E001" in str(failed.value) and "gameplay.W001" in str(failed.value)


@pytest.mark.slow
def test_check_deploy_names_both_in_a_fresh_process(tmp_path) -> None:
    """``manage.py check --deploy`` on a migrated database with an unreadable token (each
    command as a fresh process runs it, all from one started Python: tests/settings_probe.py)."""
    from tests.settings_support import clean_environ, run_manage_all
    from tests.test_production import PRODUCTION

    keys = clean_environ(tmp_path, None, **{**PRODUCTION, "TOKEN_ENCRYPTION_KEYS": KEY_A})
    setup = (
        "from gameplay.models import Community; "
        "Community.objects.create(vk_id=7, group_token='t', connected=True)"
    )
    deploy = ["check", "--deploy", "--fail-level", "WARNING"]
    migrated, made, fine, other, unset = run_manage_all([
        (["migrate"], keys),
        (["shell", "-c", setup], keys),
        (deploy, keys),
        (["check", "--deploy"], {**keys, "TOKEN_ENCRYPTION_KEYS": KEY_B}),
        (deploy, {**keys, "TOKEN_ENCRYPTION_KEYS": ""}),
    ])  # fmt: skip

    assert migrated.returncode == 0, migrated.stderr
    assert made.returncode == 0, made.stderr
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert other.returncode == 1 and "gameplay.E001" in other.stderr, other.stderr
    assert "community 1 (VK 7) group_token" in other.stderr
    assert unset.returncode == 1 and "gameplay.W001" in unset.stderr
    assert "gameplay.E001" in unset.stderr  # SECRET_KEY's key is not KEY_A either
