"""``manage.py rotate_token_keys``: encrypt every stored secret (the communities' tokens and
Callback secrets, the seeds of the deal) with the first key.

Rotation of ``TOKEN_ENCRYPTION_KEYS`` (docs/operations.md, "Tokens at rest"): put the new key
first and keep the old ones after it, restart, run this, then drop the old keys. When a stored
value cannot be decrypted with the keys in force it refuses (one line naming the communities,
exit status 2) and changes nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from gameplay.management.database import error_line
from gameplay.services.communities import SecretsUnreadable, community_secrets_rotate


class Command(BaseCommand):
    help = (
        "Encrypt every stored secret (the communities' tokens and Callback API secrets, the "
        "games' seeds of the deal) again with the first key of TOKEN_ENCRYPTION_KEYS, so that "
        "the older keys can be dropped."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = community_secrets_rotate()
        except SecretsUnreadable as error:
            self._refuse(
                f"{error}; nothing was changed. Put the key they were encrypted with back into "
                "TOKEN_ENCRYPTION_KEYS (after the first) and run it again."
            )
        except DatabaseError as error:
            self._refuse(f"cannot use the database: {error_line(error)}")
        if not done.secrets and not done.seeds:
            self.stdout.write("No community secret is stored: nothing to encrypt again.")
            return
        older = []
        if done.from_older_keys:
            older.append(f"{done.from_older_keys} were under an older key")
        if done.from_plain_text:
            older.append(f"{done.from_plain_text} were stored unencrypted")
        detail = f" ({'; '.join(older)})" if older else " (all were under it already)"
        key = (
            "the first key of TOKEN_ENCRYPTION_KEYS"
            if settings.TOKEN_ENCRYPTION_KEYS
            else "the key derived from SECRET_KEY (TOKEN_ENCRYPTION_KEYS is not set)"
        )
        what = []
        if done.secrets:
            what.append(f"{done.secrets} secret(s) of {done.communities} community(ies)")
        if done.seeds:
            what.append(f"{done.seeds} seed(s) of the deal of {done.games} game(s)")
        self.stdout.write(
            f"Encrypted {' and '.join(what)} again with {key}{detail}. The older keys can be "
            "dropped now."
        )

    def _refuse(self, line: str) -> None:
        self.stderr.write(f"rotate_token_keys: refused: {line}")
        sys.exit(2)
