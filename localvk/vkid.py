"""VK ID as the local VK serves it: the apps, the codes of the Authorization Code Flow with PKCE,
and the user access and refresh tokens it issues (the HTTP side is :mod:`localvk.vkid_routes`).

What VK documents, and what this follows (docs/vk.md, "VK ID", has the sources):

- ``authorize`` takes ``response_type=code``, ``client_id``, a trusted ``redirect_uri``,
  ``state``, ``code_challenge`` = BASE64URL(SHA256(verifier)) and ``code_challenge_method``
  ``s256`` (VK's API description and SDKs; one VK page writes RFC 7636's ``S256``: both are
  accepted); after the user allows, the browser goes back with ``code``, ``state``,
  ``device_id``, ``expires_in`` (600) and ``type=code_v2``.
- ``oauth2/auth`` exchanges a code (``grant_type=authorization_code``: once, within its
  lifetime, with the verifier, the same ``client_id``, ``redirect_uri`` and ``device_id``) or a
  refresh token (``grant_type=refresh_token``, the same ``client_id`` and ``device_id``) for a new
  access token *and* a new refresh token; a refresh token works once. ``state`` is echoed.
  Errors are ``{error, error_description, state}``.
- An access token is a user token: the API accepts it for the communities its user administers,
  with the rights (scopes) granted, until it expires (3600 s unless configured); then error 5
  ``User authorization failed: access_token has expired.``; after the user revoked the app's
  access, ``User authorization failed: user revoke access for this token.``

Everything here happens under the server's lock; times come from ``clock`` (wall-clock seconds)
so that tests can move it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
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
_VERIFIER = re.compile(r"[A-Za-z0-9_\-]{43,128}")
#: BASE64URL of a SHA-256 digest without padding: 43 characters.
_CHALLENGE = re.compile(r"[A-Za-z0-9_\-]{43}")

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


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


class VKID:
    """VK ID of one local VK server: apps, codes, sign-ins (grants) and their tokens."""

    def __init__(
        self,
        *,
        lock: threading.RLock | None = None,
        clock: Callable[[], float] = time.time,
        access_ttl: float = ACCESS_TOKEN_TTL,
        code_ttl: float = CODE_TTL,
        refresh_ttl: float = REFRESH_TOKEN_TTL,
    ) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self.clock = clock
        self.access_ttl = access_ttl
        self.code_ttl = code_ttl
        self.refresh_ttl = refresh_ttl
        self.apps: dict[int, VKIDApp] = {}
        self._codes: dict[str, AuthCode] = {}
        self.grants: dict[int, Grant] = {}
        self._by_refresh: dict[str, int] = {}
        self._by_used_refresh: dict[str, int] = {}
        self._access: dict[str, AccessToken] = {}
        self._grant_seq = itertools.count(1)
        self._event_seq = itertools.count(1)
        self.events: list[VKIDEvent] = []
        #: Signs the ``id_token`` (a JWT, HS256) of this server.
        self._id_token_key = secrets.token_bytes(32)

    # --- configuration ------------------------------------------------------------------------

    def configure(
        self,
        *,
        access_ttl: float | None = None,
        code_ttl: float | None = None,
        refresh_ttl: float | None = None,
    ) -> None:
        """Lifetimes in seconds (None: unchanged); they apply to what is issued from now on."""
        given = {
            name: value
            for name, value in (
                ("access_ttl", access_ttl),
                ("code_ttl", code_ttl),
                ("refresh_ttl", refresh_ttl),
            )
            if value is not None
        }
        for name, value in given.items():
            if not value > 0:
                raise ValueError(f"{name} must be positive")
        with self.lock:
            for name, value in given.items():
                setattr(self, name, float(value))

    def add_app(self, client_id: int, redirect_uris: Iterable[str]) -> VKIDApp:
        """An app (replaced if known) with its trusted redirect URLs (at least one)."""
        uris = tuple(dict.fromkeys(str(uri) for uri in redirect_uris))
        if isinstance(client_id, bool) or int(client_id) < 1:
            raise ValueError("client_id must be a positive integer")
        if not uris or any(not uri.strip() for uri in uris):
            raise ValueError("an app needs at least one non-empty redirect URL")
        app = VKIDApp(int(client_id), uris)
        with self.lock:
            self.apps[app.client_id] = app
        return app

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                "apps": [app.to_dict() for app in self.apps.values()],
                "access_ttl": self.access_ttl,
                "code_ttl": self.code_ttl,
                "refresh_ttl": self.refresh_ttl,
                "grants": [grant.to_dict() for grant in self.grants.values()],
                "stats": self.stats(),
            }

    # --- authorize ----------------------------------------------------------------------------

    def check_authorize(self, params: Mapping[str, str]) -> AuthorizeRequest:
        """The ``authorize`` request, checked as RFC 6749 §4.1.2.1 orders it: the app and its
        redirect URL first (a failure there cannot go back to the app), then the rest (a
        failure goes back with ``error``)."""
        raw_client = (params.get("client_id") or "").strip()
        with self.lock:
            app = self.apps.get(int(raw_client)) if raw_client.isdigit() else None
        if app is None:
            raise AuthorizeError("invalid_client", "client_id is invalid", redirect=False)
        redirect_uri = params.get("redirect_uri") or ""
        if redirect_uri not in app.redirect_uris:
            raise AuthorizeError(
                "invalid_request",
                "redirect_uri is missing or not in the app's trusted redirect URLs",
                redirect=False,
            )
        if params.get("response_type") != "code":
            raise AuthorizeError(
                "unsupported_response_type", "response_type should be code", redirect=True
            )
        state = params.get("state") or ""
        if not state:
            raise AuthorizeError("invalid_request", "state is missing", redirect=True)
        challenge = params.get("code_challenge") or ""
        if not _CHALLENGE.fullmatch(challenge):
            raise AuthorizeError(
                "invalid_request", "code_challenge is missing or invalid", redirect=True
            )
        if (params.get("code_challenge_method") or "").lower() != S256:
            raise AuthorizeError(
                "invalid_request", "code_challenge_method should be s256", redirect=True
            )
        return AuthorizeRequest(
            app.client_id, redirect_uri, state, challenge, parse_scope(params.get("scope"))
        )

    def issue_code(self, request: AuthorizeRequest, user_id: int) -> dict[str, str]:
        """The user allowed: a new code and device id; the query VK appends to the
        ``redirect_uri`` (code, state, device_id, expires_in, type, ext_id)."""
        with self.lock:
            now = self.clock()
            # Codes past their lifetime can never be exchanged: forget them.
            for stale in [c for c, known in self._codes.items() if known.expires_at <= now]:
                del self._codes[stale]
            code = AuthCode(
                code=secrets.token_urlsafe(48),
                request=request,
                user_id=user_id,
                device_id=secrets.token_urlsafe(64),
                expires_at=now + self.code_ttl,
            )
            self._codes[code.code] = code
            self._event("code", user_id=user_id, client_id=request.client_id)
            return {
                "code": code.code,
                "state": request.state,
                "device_id": code.device_id,
                "expires_in": str(int(self.code_ttl)),
                "type": CODE_TYPE,
                "ext_id": secrets.token_urlsafe(24),
            }

    def record_denied(self, request: AuthorizeRequest) -> None:
        with self.lock:
            self._event("denied", client_id=request.client_id)

    # --- oauth2/auth --------------------------------------------------------------------------

    def exchange(self, params: Mapping[str, str]) -> dict[str, Any]:
        """Answer ``oauth2/auth`` (the token response); :class:`VKIDError` if refused (the
        refusal is recorded as a ``refused`` event)."""
        grant_type = params.get("grant_type") or ""
        with self.lock:
            try:
                if grant_type == AUTHORIZATION_CODE:
                    return self._exchange_code(params)
                if grant_type == REFRESH_TOKEN:
                    return self._refresh(params)
                if not grant_type:
                    raise VKIDError("invalid_request", "grant_type is missing")
                raise VKIDError("unsupported_grant_type", "grant_type is not supported")
            except VKIDError as exc:
                self._refused(params, exc)
                raise

    def _app(self, params: Mapping[str, str]) -> VKIDApp:
        raw = (params.get("client_id") or "").strip()
        if not raw:
            raise VKIDError("invalid_request", "client_id is missing")
        app = self.apps.get(int(raw)) if raw.isdigit() else None
        if app is None:
            raise VKIDError("invalid_client", "client_id is invalid", status=401)
        return app

    @staticmethod
    def _required(params: Mapping[str, str], name: str) -> str:
        value = params.get(name) or ""
        if not value:
            raise VKIDError("invalid_request", f"{name} is missing")
        return value

    def _exchange_code(self, params: Mapping[str, str]) -> dict[str, Any]:
        app = self._app(params)
        raw_code = self._required(params, "code")
        verifier = self._required(params, "code_verifier")
        device_id = self._required(params, "device_id")
        redirect_uri = self._required(params, "redirect_uri")
        self._required(params, "state")
        code = self._codes.get(raw_code)
        if code is None or code.expires_at <= self.clock():
            raise VKIDError("invalid_grant", "code is invalid or expired")
        if code.used:
            raise VKIDError("invalid_grant", "code was already used")
        if code.request.client_id != app.client_id:
            raise VKIDError("invalid_grant", "code was issued to another client_id")
        if redirect_uri != code.request.redirect_uri:
            raise VKIDError(
                "invalid_grant",
                "redirect_uri is invalid, please pass same redirect_uri, "
                "you used in authorize method.",
            )
        if device_id != code.device_id:
            raise VKIDError("invalid_grant", "device_id is invalid")
        if not _VERIFIER.fullmatch(verifier):
            raise VKIDError("invalid_grant", "code_verifier is invalid")
        if not hmac.compare_digest(code_challenge(verifier), code.request.code_challenge):
            raise VKIDError("invalid_grant", "code_challenge does not match code_verifier")
        code.used = True
        now = self.clock()
        grant = Grant(
            id=next(self._grant_seq),
            client_id=app.client_id,
            user_id=code.user_id,
            device_id=code.device_id,
            scopes=code.request.scopes,
            created=now,
            refresh_token=self._new_refresh_token(),
            refresh_expires_at=now + self.refresh_ttl,
        )
        self.grants[grant.id] = grant
        self._by_refresh[grant.refresh_token] = grant.id
        self._event("grant", grant=grant, grant_type=AUTHORIZATION_CODE)
        return self._token_response(grant, grant.scopes, params)

    def _refresh(self, params: Mapping[str, str]) -> dict[str, Any]:
        app = self._app(params)
        raw = self._required(params, "refresh_token")
        device_id = self._required(params, "device_id")
        self._required(params, "state")
        grant_id = self._by_refresh.get(raw)
        if grant_id is None:
            reused = raw in self._by_used_refresh
            raise _DeadRefreshToken(reused, self._by_used_refresh.get(raw))
        grant = self.grants[grant_id]
        now = self.clock()
        if grant.revoked or grant.refresh_expires_at <= now:
            raise _DeadRefreshToken(False, grant.id)
        if grant.client_id != app.client_id:
            raise VKIDError("invalid_grant", "refresh_token was issued to another client_id")
        if device_id != grant.device_id:
            raise VKIDError("invalid_grant", "device_id is invalid")
        scopes = grant.scopes
        if params.get("scope"):
            asked = parse_scope(params.get("scope"))
            if not set(asked) <= set(grant.scopes):
                raise VKIDError("invalid_scope", "scope is more than was granted")
            scopes = asked
        # The rotation: the presented token is spent, a new one replaces it.
        del self._by_refresh[raw]
        grant.used_refresh_tokens.append(raw)
        self._by_used_refresh[raw] = grant.id
        grant.refresh_token = self._new_refresh_token()
        grant.refresh_expires_at = now + self.refresh_ttl
        grant.refreshes += 1
        self._by_refresh[grant.refresh_token] = grant.id
        self._event("refresh", grant=grant, grant_type=REFRESH_TOKEN)
        return self._token_response(grant, scopes, params)

    def _new_refresh_token(self) -> str:
        return "vk2.r." + secrets.token_urlsafe(64)

    def _token_response(
        self, grant: Grant, scopes: tuple[str, ...], params: Mapping[str, str]
    ) -> dict[str, Any]:
        now = self.clock()
        token = AccessToken(
            token="vk2.a." + secrets.token_urlsafe(96),
            grant_id=grant.id,
            scopes=frozenset(scopes),
            expires_at=now + self.access_ttl,
        )
        self._access[token.token] = token
        grant.access_tokens.append(token.token)
        return {
            "access_token": token.token,
            "refresh_token": grant.refresh_token,
            "id_token": self._id_token(grant, now),
            "token_type": "Bearer",
            "expires_in": int(self.access_ttl),
            "user_id": grant.user_id,
            "state": params.get("state") or "",
            "scope": " ".join(scopes),
        }

    def _id_token(self, grant: Grant, now: float) -> str:
        """A JWT (HS256, this server's key) naming the user, as VK's ``id_token`` does."""
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {
            "iss": "VK ID",
            "sub": str(grant.user_id),
            "app": grant.client_id,
            "exp": int(now + self.access_ttl),
            "iat": int(now),
            "jti": secrets.token_hex(8),
        }
        payload = _b64(json.dumps(claims).encode())
        signature = hmac.new(
            self._id_token_key, f"{header}.{payload}".encode(), hashlib.sha256
        ).digest()
        return f"{header}.{payload}.{_b64(signature)}"

    def _refused(self, params: Mapping[str, str], exc: VKIDError) -> None:
        reused = isinstance(exc, _DeadRefreshToken) and exc.reused
        grant_id = exc.grant_id if isinstance(exc, _DeadRefreshToken) else None
        grant = self.grants.get(grant_id) if grant_id is not None else None
        raw_client = (params.get("client_id") or "").strip()
        self._event(
            "refused",
            grant=grant,
            client_id=int(raw_client) if raw_client.isdigit() else None,
            grant_type=params.get("grant_type") or None,
            error=exc.error,
            description=exc.description,
            reused=reused,
        )

    # --- the API's side ---------------------------------------------------------------------------

    def access(self, token: str | None) -> AccessInfo | None:
        """Whose live access token ``token`` is (None: not one of ours, expired or revoked)."""
        if not token:
            return None
        with self.lock:
            issued = self._access.get(token)
            if issued is None or issued.revoked or issued.expires_at <= self.clock():
                return None
            grant = self.grants[issued.grant_id]
            return AccessInfo(grant.user_id, issued.scopes, grant.client_id, issued.expires_at)

    def rejection(self, token: str | None) -> str | None:
        """Why the API refuses one of our access tokens (error 5's reason), None if it is not
        ours or is live."""
        if not token:
            return None
        with self.lock:
            issued = self._access.get(token)
            if issued is None:
                return None
            if issued.revoked:
                return REVOKED_REASON
            if issued.expires_at <= self.clock():
                return EXPIRED_REASON
            return None

    # --- control ------------------------------------------------------------------------------

    def revoke_user(self, user_id: int, client_id: int | None = None) -> int:
        """The user revoked the app's access (or ``client_id``'s; None: every app's): every
        sign-in of theirs ends, its refresh token is refused (``invalid_grant``) and its access
        tokens get error 5 ("user revoke access for this token."). Returns how many sign-ins
        ended."""
        with self.lock:
            ended = 0
            for grant in self.grants.values():
                if grant.user_id != user_id or grant.revoked:
                    continue
                if client_id is not None and grant.client_id != client_id:
                    continue
                grant.revoked = True
                for token in grant.access_tokens:
                    self._access[token].revoked = True
                self._event("revoke", grant=grant)
                ended += 1
            return ended

    def expire(
        self,
        *,
        user_id: int | None = None,
        access_token: str | None = None,
        refresh: bool = False,
    ) -> int:
        """Make access tokens expire now: ``access_token`` alone, or every one of ``user_id``
        (None and no token: everyone's); with ``refresh``, their sign-ins' refresh tokens too.
        Returns how many access tokens were live and now are not."""
        with self.lock:
            now = self.clock()
            expired = 0
            for grant in self.grants.values():
                if user_id is not None and grant.user_id != user_id:
                    continue
                tokens = [t for t in grant.access_tokens if access_token in (None, t)]
                if access_token is not None and not tokens:
                    continue
                for token in tokens:
                    issued = self._access[token]
                    if issued.expires_at > now and not issued.revoked:
                        expired += 1
                    issued.expires_at = min(issued.expires_at, now)
                if refresh:
                    grant.refresh_expires_at = min(grant.refresh_expires_at, now)
                self._event("expire", grant=grant)
            return expired

    # --- keeping (``--state-file``) --------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """The sign-ins with their tokens, JSON-ready (apps and lifetimes come from the
        options; codes live minutes and events are a test's record: neither is kept)."""
        with self.lock:
            return {
                "grants": [
                    {
                        "id": grant.id,
                        "client_id": grant.client_id,
                        "user_id": grant.user_id,
                        "device_id": grant.device_id,
                        "scopes": list(grant.scopes),
                        "created": grant.created,
                        "refresh_token": grant.refresh_token,
                        "refresh_expires_at": grant.refresh_expires_at,
                        "used_refresh_tokens": list(grant.used_refresh_tokens),
                        "refreshes": grant.refreshes,
                        "revoked": grant.revoked,
                        "access_tokens": [
                            {
                                "token": token,
                                "scopes": sorted(self._access[token].scopes),
                                "expires_at": self._access[token].expires_at,
                                "revoked": self._access[token].revoked,
                            }
                            for token in grant.access_tokens
                        ],
                    }
                    for grant in self.grants.values()
                ]
            }

    def restore(self, data: Mapping[str, Any]) -> None:
        """Take back what :meth:`export` wrote (replacing the sign-ins held now)."""
        with self.lock:
            self.grants.clear()
            self._by_refresh.clear()
            self._by_used_refresh.clear()
            self._access.clear()
            for raw in data.get("grants", []):
                grant = Grant(
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
                self.grants[grant.id] = grant
                self._by_refresh[grant.refresh_token] = grant.id
                for used in grant.used_refresh_tokens:
                    self._by_used_refresh[used] = grant.id
                for item in raw["access_tokens"]:
                    token = AccessToken(
                        token=str(item["token"]),
                        grant_id=grant.id,
                        scopes=frozenset(str(name) for name in item["scopes"]),
                        expires_at=float(item["expires_at"]),
                        revoked=bool(item["revoked"]),
                    )
                    self._access[token.token] = token
                    grant.access_tokens.append(token.token)
            self._grant_seq = itertools.count(max(self.grants, default=0) + 1)

    def fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever something :meth:`export` keeps has changed (cheap)."""
        with self.lock:
            return (
                len(self.grants),
                len(self._access),
                sum(grant.refreshes for grant in self.grants.values()),
                sum(1 for grant in self.grants.values() if grant.revoked),
                len(self.events),
            )

    def find_events(self, kind: str | None = None, *, since: int = 0) -> list[VKIDEvent]:
        with self.lock:
            return [
                event
                for event in self.events
                if event.seq > since and (kind is None or event.kind == kind)
            ]

    def stats(self) -> dict[str, int]:
        """Counters: codes issued, denials, code exchanges (``grants``), renewals
        (``refreshes``), refusals, and the refusals of an already used refresh token
        (``reused_refresh``: a double renewal)."""
        with self.lock:
            counts = {
                "codes": 0,
                "denied": 0,
                "grants": 0,
                "refreshes": 0,
                "refused": 0,
                "reused_refresh": 0,
            }
            names = {"code": "codes", "grant": "grants", "refresh": "refreshes"}
            for event in self.events:
                name = names.get(event.kind, event.kind)
                if name in counts:
                    counts[name] += 1
                if event.reused:
                    counts["reused_refresh"] += 1
            return counts

    def clear_events(self) -> None:
        with self.lock:
            self.events.clear()

    def _event(
        self,
        kind: str,
        *,
        grant: Grant | None = None,
        user_id: int | None = None,
        client_id: int | None = None,
        grant_type: str | None = None,
        error: str | None = None,
        description: str | None = None,
        reused: bool = False,
    ) -> None:
        self.events.append(
            VKIDEvent(
                seq=next(self._event_seq),
                time=self.clock(),
                kind=kind,
                user_id=grant.user_id if grant is not None else user_id,
                client_id=grant.client_id if grant is not None else client_id,
                grant_id=grant.id if grant is not None else None,
                grant_type=grant_type,
                error=error,
                description=description,
                reused=reused,
            )
        )


class _DeadRefreshToken(VKIDError):
    """A refresh token VK no longer knows: used before, revoked, expired or never issued.
    VK answers them all alike (``refresh_token is missing or invalid``); ``reused`` records a
    double renewal for the tests' counters."""

    def __init__(self, reused: bool, grant_id: int | None) -> None:
        super().__init__("invalid_grant", "refresh_token is missing or invalid")
        self.reused = reused
        self.grant_id = grant_id
