"""VK ID's records and rules as the local VK keeps them (:mod:`localvk.vkid`): the lifetimes
and names VK uses, the refusals (``oauth2/auth``'s and ``authorize``'s), the apps, codes,
sign-ins (grants), tokens and events, and the PKCE and ``scope`` rules."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .recording import token_fingerprint

#: VK's lifetimes: the code ("expires_in": 600 in the redirect) and the access token (1 hour).
CODE_TTL = 600.0
ACCESS_TOKEN_TTL = 3600.0
#: The refresh token's lifetime is not in VK's documentation as stored; a long one, configurable.
REFRESH_TOKEN_TTL = 180 * 24 * 3600.0
#: What VK grants when ``scope`` is left out.
DEFAULT_SCOPE = "vkid.personal_info"
#: ``type`` of the code in the redirect (the web SDK's ``OAUTH2_CODE_TYPE``).
CODE_TYPE = "code_v2"
AUTHORIZATION_CODE = "authorization_code"
REFRESH_TOKEN = "refresh_token"
#: RFC 7636's transformation; VK writes it ``s256``, RFC 7636 ``S256``.
S256 = "s256"

#: RFC 7636 §4.1: 43–128 characters; VK's docs narrow the alphabet to ``a-zA-Z0-9_-``.
VERIFIER = re.compile(r"[A-Za-z0-9_\-]{43,128}")
#: BASE64URL of a SHA-256 digest without padding: 43 characters.
CHALLENGE = re.compile(r"[A-Za-z0-9_\-]{43}")

#: API error 5's reasons (what follows "User authorization failed: ").
EXPIRED_REASON = "access_token has expired."
REVOKED_REASON = "user revoke access for this token."


class VKIDError(Exception):
    """An ``oauth2/auth`` refusal: ``{"error", "error_description", "state"}`` with an HTTP
    status (400; 401 for an unknown client, RFC 6749 §5.2)."""

    def __init__(self, error: str, description: str, *, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    def to_dict(self, state: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.error, "error_description": self.description}
        if state is not None:
            body["state"] = state
        return body


class AuthorizeError(Exception):
    """A refused ``authorize`` request. ``redirect`` False: the request cannot be trusted to
    go back (unknown app, untrusted ``redirect_uri``) and VK shows its own error page; True:
    the user is sent back to ``redirect_uri`` with ``error``, ``error_description`` and
    ``state``."""

    def __init__(self, error: str, description: str, *, redirect: bool) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.redirect = redirect


@dataclass(frozen=True)
class VKIDApp:
    """A VK ID app: its id (``client_id``) and trusted redirect URLs (matched exactly)."""

    client_id: int
    redirect_uris: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "redirect_uris": list(self.redirect_uris)}


@dataclass(frozen=True)
class AuthorizeRequest:
    """A checked ``authorize`` request (what the consent page carries to its form)."""

    client_id: int
    redirect_uri: str
    state: str
    code_challenge: str
    scopes: tuple[str, ...]

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)


@dataclass
class AuthCode:
    code: str
    request: AuthorizeRequest
    user_id: int
    device_id: str
    expires_at: float
    used: bool = False


@dataclass
class AccessToken:
    token: str
    grant_id: int
    scopes: frozenset[str]
    expires_at: float
    revoked: bool = False


@dataclass
class Grant:
    """One sign-in: a user allowed an app on a device. Its refresh token changes on every
    renewal; every access token issued from it is kept (they live until they expire)."""

    id: int
    client_id: int
    user_id: int
    device_id: str
    scopes: tuple[str, ...]
    created: float
    refresh_token: str
    refresh_expires_at: float
    #: Every refresh token this grant had before the current one (used, so refused).
    used_refresh_tokens: list[str] = field(default_factory=list)
    access_tokens: list[str] = field(default_factory=list)
    refreshes: int = 0
    revoked: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "client_id": self.client_id,
            "user_id": self.user_id,
            "device_id": self.device_id,
            "scope": " ".join(self.scopes),
            "created": self.created,
            "refresh_token": token_fingerprint(self.refresh_token),
            "refresh_expires_at": self.refresh_expires_at,
            "access_tokens": [token_fingerprint(t) for t in self.access_tokens],
            "refreshes": self.refreshes,
            "revoked": self.revoked,
        }

    def to_state(self, access: Mapping[str, AccessToken]) -> dict[str, Any]:
        """The grant as ``--state-file`` keeps it: its tokens themselves, not fingerprints
        (``access``: the access tokens issued, by token)."""
        return {
            "id": self.id,
            "client_id": self.client_id,
            "user_id": self.user_id,
            "device_id": self.device_id,
            "scopes": list(self.scopes),
            "created": self.created,
            "refresh_token": self.refresh_token,
            "refresh_expires_at": self.refresh_expires_at,
            "used_refresh_tokens": list(self.used_refresh_tokens),
            "refreshes": self.refreshes,
            "revoked": self.revoked,
            "access_tokens": [
                {
                    "token": token,
                    "scopes": sorted(access[token].scopes),
                    "expires_at": access[token].expires_at,
                    "revoked": access[token].revoked,
                }
                for token in self.access_tokens
            ],
        }

    @classmethod
    def from_state(cls, raw: Mapping[str, Any]) -> tuple[Grant, list[AccessToken]]:
        """A grant as :meth:`to_state` wrote it, with its access tokens."""
        grant = cls(
            id=int(raw["id"]),
            client_id=int(raw["client_id"]),
            user_id=int(raw["user_id"]),
            device_id=str(raw["device_id"]),
            scopes=tuple(str(name) for name in raw["scopes"]),
            created=float(raw["created"]),
            refresh_token=str(raw["refresh_token"]),
            refresh_expires_at=float(raw["refresh_expires_at"]),
            used_refresh_tokens=[str(t) for t in raw["used_refresh_tokens"]],
            refreshes=int(raw["refreshes"]),
            revoked=bool(raw["revoked"]),
        )
        tokens = [
            AccessToken(
                token=str(item["token"]),
                grant_id=grant.id,
                scopes=frozenset(str(name) for name in item["scopes"]),
                expires_at=float(item["expires_at"]),
                revoked=bool(item["revoked"]),
            )
            for item in raw["access_tokens"]
        ]
        grant.access_tokens.extend(token.token for token in tokens)
        return grant, tokens


@dataclass(frozen=True)
class AccessInfo:
    """A live access token: whose, and with which rights."""

    user_id: int
    scopes: frozenset[str]
    client_id: int
    expires_at: float


@dataclass
class VKIDEvent:
    """One thing that happened at VK ID, for tests to count: ``kind`` is ``code`` (a code
    issued), ``denied`` (the user pressed «Отмена»), ``grant`` (a code exchanged), ``refresh``
    (a renewal), ``refused`` (an ``oauth2/auth`` error), ``revoke`` or ``expire``."""

    seq: int
    time: float
    kind: str
    user_id: int | None = None
    client_id: int | None = None
    grant_id: int | None = None
    grant_type: str | None = None
    error: str | None = None
    description: str | None = None
    #: For a refused renewal: the refresh token had been used already (a double renewal).
    reused: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "kind": self.kind,
            "user_id": self.user_id,
            "client_id": self.client_id,
            "grant_id": self.grant_id,
            "grant_type": self.grant_type,
            "error": self.error,
            "description": self.description,
            "reused": self.reused,
        }


def code_challenge(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA256(ASCII(verifier))) without ``=`` padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def parse_scope(value: str | None) -> tuple[str, ...]:
    """``scope`` as VK takes it (space-separated; commas accepted too), without repeats, in
    the order given; :data:`DEFAULT_SCOPE` when empty."""
    names: list[str] = []
    for name in re.split(r"[\s,]+", value or ""):
        if name and name not in names:
            names.append(name)
    return tuple(names) if names else (DEFAULT_SCOPE,)


def b64url(data: bytes) -> str:
    """BASE64URL without ``=`` padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


class DeadRefreshToken(VKIDError):
    """A refresh token VK no longer knows: used before, revoked, expired or never issued.
    VK answers them all alike (``refresh_token is missing or invalid``); ``reused`` records a
    double renewal for the tests' counters."""

    def __init__(self, reused: bool, grant_id: int | None) -> None:
        super().__init__("invalid_grant", "refresh_token is missing or invalid")
        self.reused = reused
        self.grant_id = grant_id
