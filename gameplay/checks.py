"""The deployment's system checks on secrets at rest (``manage.py check --deploy``).

- ``gameplay.W001``: ``TOKEN_ENCRYPTION_KEYS`` is not set, so the communities' tokens and the
  games' seeds of the deal are encrypted with keys derived from ``SECRET_KEY``: changing
  ``SECRET_KEY`` without keeping the old one in ``SECRET_KEY_FALLBACKS`` would make every
  stored secret unreadable.
- ``gameplay.E001``: stored secrets exist that no configured key decrypts (a key dropped before
  ``manage.py rotate_token_keys``, a ``SECRET_KEY`` changed): those communities read as having
  no token. It reads the database, so it is skipped while the database cannot be read (not
  reachable, not migrated yet).
- ``gameplay.E002``: stored seeds of the deal exist that no configured key decrypts: those
  games cannot deal (``SeedUnreadable``) and their end would reveal no seed. Read like E001.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register
from django.core.checks import Warning as CheckWarning
from django.db import DatabaseError

#: How a Fernet key is made (the hint of both checks).
MAKE_KEY = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


@register(Tags.security, deploy=True)
def token_encryption_keys_set(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if settings.TOKEN_ENCRYPTION_KEYS:
        return []
    return [
        CheckWarning(
            "TOKEN_ENCRYPTION_KEYS is not set: the communities' tokens and the games' seeds are "
            "encrypted with a key derived from SECRET_KEY, and changing SECRET_KEY without "
            "keeping the old one in SECRET_KEY_FALLBACKS would make every stored token and seed "
            "unreadable.",
            hint=f"Make a key with {MAKE_KEY}, set TOKEN_ENCRYPTION_KEYS to it, restart, and "
            "run `manage.py rotate_token_keys`.",
            id="gameplay.W001",
        )
    ]


@register(Tags.security, deploy=True)
def stored_secrets_readable(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from gameplay.selectors.communities import unreadable_secrets

    try:
        unreadable = unreadable_secrets()
    except DatabaseError:
        return []  # not reachable or not migrated: nothing stored to check
    if not unreadable:
        return []
    where = ", ".join(secret.where for secret in unreadable)
    return [
        Error(
            f"{len(unreadable)} stored secret(s) cannot be decrypted with the configured keys "
            f"(TOKEN_ENCRYPTION_KEYS, else SECRET_KEY's): {where}. Those communities read as "
            "having no token.",
            hint="Put the key they were encrypted with back into TOKEN_ENCRYPTION_KEYS (after "
            "the first) and run `manage.py rotate_token_keys`; or connect the communities "
            "again in the panel.",
            id="gameplay.E001",
        )
    ]


@register(Tags.security, deploy=True)
def stored_seeds_readable(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from gameplay.selectors.seeds import unreadable_seeds

    try:
        unreadable = unreadable_seeds()
    except DatabaseError:
        return []  # not reachable or not migrated: nothing stored to check
    if not unreadable:
        return []
    where = ", ".join(seed.where for seed in unreadable)
    return [
        Error(
            f"{len(unreadable)} stored seed(s) of the deal cannot be decrypted with the "
            f"configured keys (TOKEN_ENCRYPTION_KEYS, else SECRET_KEY's): {where}. Those games "
            "cannot deal, and their end would reveal no seed.",
            hint="Put the key they were encrypted with back into TOKEN_ENCRYPTION_KEYS (after "
            "the first) and run `manage.py rotate_token_keys`.",
            id="gameplay.E002",
        )
    ]
