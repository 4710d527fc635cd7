"""Model fields for secrets at rest: VK tokens and Callback API secrets.

``SecretField`` is ``django-fernet-encrypted-fields``' ``EncryptedTextField`` (Fernet,
``cryptography``) with the deployment's own keys:

- ``TOKEN_ENCRYPTION_KEYS`` (environment, comma-separated Fernet keys): the first encrypts,
  every one decrypts. Rotation: put a new key first, keep the old ones after it, run
  ``manage.py rotate_token_keys`` (re-encrypts every stored secret with the first key), then
  drop the old keys. ``python -c "from cryptography.fernet import Fernet;
  print(Fernet.generate_key().decode())"`` makes a key.
- Without it, the package's own derivation: keys from ``SECRET_KEY`` (and
  ``SECRET_KEY_FALLBACKS``) with ``SALT_KEY``, so a deployment that never set a key keeps
  working; ``manage.py check --deploy`` asks for dedicated keys (``gameplay.checks``). The
  derived keys stay after the configured ones as decrypt-only keys, so that setting
  ``TOKEN_ENCRYPTION_KEYS`` for the first time and running ``rotate_token_keys`` moves the
  secrets stored until then over to it.

A row read by the services' own reader of the game row (``gameplay.unit_of_work.hotread``)
keeps each secret as stored (:class:`Sealed`) and decrypts it when the attribute is first read
(:class:`SecretAttribute`): locking a game for a vote or a night action never reads its seed.
Every other read (a queryset, ``values()``) decrypts as it loads.

A stored value no key can decrypt (a key dropped too early) reads as an empty secret, and the
error is logged once per value: the community then shows as lacking its token, which the
panel says, rather than sending the ciphertext to VK as a token.
"""

from __future__ import annotations

import base64
import functools
import logging
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from django.conf import settings
from django.db.models.query_utils import DeferredAttribute
from encrypted_fields.fields import EncryptedTextField

log = logging.getLogger(__name__)

#: How every Fernet token starts (version byte 0x80, base64): what a stored value looks like.
FERNET_PREFIX = "gAAAAA"


@functools.lru_cache(maxsize=8)
def _fernet(keys: tuple[bytes, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys])


@functools.lru_cache(maxsize=8)
def _derived(secret_keys: tuple[str, ...], salts: tuple[str, ...]) -> tuple[bytes, ...]:
    """The package's derivation (PBKDF2-SHA256, 100,000 rounds), computed once per set."""
    out = []
    for secret_key in secret_keys:
        for salt in salts:
            kdf = PBKDF2HMAC(
                algorithm=hashes.SHA256(), length=32, salt=salt.encode(), iterations=100_000
            )
            out.append(base64.urlsafe_b64encode(kdf.derive(secret_key.encode())))
    return tuple(out)


def secret_keys() -> tuple[bytes, ...]:
    """The Fernet keys in force, the encrypting one first: ``TOKEN_ENCRYPTION_KEYS``, then
    (decrypt-only when those are set) the keys derived from ``SECRET_KEY``."""
    configured = tuple(key.encode() for key in getattr(settings, "TOKEN_ENCRYPTION_KEYS", ()) or ())
    salts = settings.SALT_KEY if isinstance(settings.SALT_KEY, list) else [settings.SALT_KEY]
    fallbacks = list(getattr(settings, "SECRET_KEY_FALLBACKS", []) or [])
    derived = _derived(tuple([settings.SECRET_KEY, *fallbacks]), tuple(salts))
    return configured + tuple(key for key in derived if key not in configured)


def crypter() -> MultiFernet:
    return _fernet(secret_keys())


def is_encrypted(stored: str) -> bool:
    """Whether a stored value is a Fernet token (else it is an empty or plain-text value)."""
    return stored.startswith(FERNET_PREFIX)


def readable(stored: str) -> bool:
    """Whether a stored (raw) value can be read with the keys in force: an empty or plain
    value, or a Fernet token one of the keys decrypts."""
    if not is_encrypted(stored):
        return True
    try:
        crypter().decrypt(stored.encode())
    except InvalidToken:
        return False
    return True


def under_first_key(stored: str) -> bool:
    """Whether a stored Fernet token is encrypted with the first (encrypting) key already."""
    try:
        Fernet(secret_keys()[0]).decrypt(stored.encode())
    except InvalidToken:
        return False
    return True


class Sealed:
    """A secret as stored, in a model instance until the attribute is read (no ``repr`` of it
    shows the value, plain or encrypted)."""

    __slots__ = ("stored",)

    def __init__(self, stored: str) -> None:
        self.stored = stored

    def __repr__(self) -> str:
        return "<Sealed>"


class SecretAttribute(DeferredAttribute):
    """The attribute of a :class:`SecretField`: a :class:`Sealed` value is decrypted when it
    is first read, and the plain text kept in its place."""

    def __get__(self, instance: Any, cls: Any = None) -> Any:
        if instance is None:
            return self
        value = super().__get__(instance, cls)
        if type(value) is Sealed:
            value = self.field.to_python(value.stored)
            instance.__dict__[self.field.attname] = value
        return value

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.field.attname] = value


class SecretField(EncryptedTextField):
    """A text column stored Fernet-encrypted; reads give the plain text (see the module)."""

    descriptor_class = SecretAttribute

    def sealed_from_db(self, value: Any, expression: Any, connection: Any) -> Any:
        """The converter of a reader that makes model instances itself: a stored Fernet token
        kept as it is (:class:`Sealed`), decrypted when the attribute is read."""
        return Sealed(value) if isinstance(value, str) and is_encrypted(value) else value

    @property
    def f(self) -> MultiFernet:  # the package's name for its crypter
        return crypter()

    def get_prep_value(self, value: Any) -> Any:
        # The package stores None for an empty value; the column is NOT NULL, empty is "".
        return super().get_prep_value(value) if value else ""

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and is_encrypted(value):
            try:
                return crypter().decrypt(value.encode()).decode()
            except InvalidToken:
                log.error(
                    "A stored %s cannot be decrypted with TOKEN_ENCRYPTION_KEYS (a key dropped "
                    "before `manage.py rotate_token_keys`?); it reads as empty",
                    self.name,
                )
                return ""
        return value
