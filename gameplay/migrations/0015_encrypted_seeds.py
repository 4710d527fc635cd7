"""The seeds of the deal (``Game.seed``, ``DealRound.seed``) are stored Fernet-encrypted like the
communities' tokens (``gameplay.models.secrets``): a lookup on the column then compares a guess
with a ciphertext that differs per row, and learns nothing.

The columns become text (a ciphertext is longer than the 128 characters they had), then every
stored plain seed is encrypted with the first key; reversed, every seed is decrypted back. The
values are read and written as the database holds them (a ``TextField`` expression), not through
the field, so that the migration does the encryption itself and never encrypts twice.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.models import ExpressionWrapper, F, TextField, Value

import gameplay.models.secrets

#: The models whose ``seed`` column is a secret.
MODELS = ("Game", "DealRound")


def _stored(model: Any) -> list[tuple[int, str]]:
    raw = ExpressionWrapper(F("seed"), output_field=TextField())
    rows = model.objects.annotate(stored_seed=raw).exclude(stored_seed="")
    return list(rows.order_by("pk").values_list("pk", "stored_seed"))


def _write(model: Any, pk: int, stored: str) -> None:
    model.objects.filter(pk=pk).update(seed=Value(stored, output_field=TextField()))


def encrypt_seeds(apps: Any, schema_editor: Any) -> None:
    from gameplay.models.secrets import crypter, is_encrypted

    fernet = crypter()
    for name in MODELS:
        model = apps.get_model("gameplay", name)
        for pk, stored in _stored(model):
            if not is_encrypted(stored):
                _write(model, pk, fernet.encrypt(stored.encode()).decode())


def decrypt_seeds(apps: Any, schema_editor: Any) -> None:
    from gameplay.models.secrets import crypter, is_encrypted

    fernet = crypter()
    for name in MODELS:
        model = apps.get_model("gameplay", name)
        for pk, stored in _stored(model):
            if is_encrypted(stored):
                # A seed no key decrypts stops the reversal: a plain column cannot hold it.
                _write(model, pk, fernet.decrypt(stored.encode()).decode())


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0014_russian_verbose_names"),
    ]

    operations = [
        migrations.AlterField(
            model_name="dealround",
            name="seed",
            field=gameplay.models.secrets.SecretField(),
        ),
        migrations.AlterField(
            model_name="game",
            name="seed",
            field=gameplay.models.secrets.SecretField(blank=True, verbose_name="зерно раздачи"),
        ),
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(encrypt_seeds, decrypt_seeds, elidable=True),
    ]
