"""VK ID as the local VK serves it: the apps, the codes of the Authorization Code Flow with PKCE,
and the user access and refresh tokens it issues (its records and rules:
:mod:`localvk.vkid_records`; ``oauth2/auth``: :mod:`localvk.vkid_exchange`; the HTTP side:
:mod:`localvk.vkid_routes`).

What VK documents, and what this follows (docs/vk.md, "VK ID", has the sources):

- ``authorize`` takes ``response_type=code``, ``client_id``, a trusted ``redirect_uri``,
  ``state``, ``code_challenge`` = BASE64URL(SHA256(verifier)) and ``code_challenge_method``
  ``s256`` (VK's API description and SDKs; one VK page writes RFC 7636's ``S256``: both are
  accepted); after the user allows, the browser goes back with ``code``, ``state``,
  ``device_id``, ``expires_in`` (600) and ``type=code_v2``.
- ``oauth2/auth`` exchanges a code or a refresh token for new tokens
  (:mod:`localvk.vkid_exchange`).
- An access token is a user token: the API accepts it for the communities its user administers,
  with the rights (scopes) granted, until it expires (3600 s unless configured); then error 5
  ``User authorization failed: access_token has expired.``; after the user revoked the app's
  access, ``User authorization failed: user revoke access for this token.``

Everything here happens under the server's lock; times come from ``clock`` (wall-clock seconds)
so that tests can move it.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .vkid_exchange import TokenExchange
from .vkid_records import (
    ACCESS_TOKEN_TTL,
    CHALLENGE,
    CODE_TTL,
    CODE_TYPE,
    EXPIRED_REASON,
    REFRESH_TOKEN_TTL,
    REVOKED_REASON,
    S256,
    AccessInfo,
    AccessToken,
    AuthCode,
    AuthorizeError,
    AuthorizeRequest,
    Grant,
    VKIDApp,
    VKIDEvent,
    code_challenge,
    parse_scope,
)

__all__ = ["VKID", "code_challenge"]  # the PKCE rule, reached through VK ID's module too


class VKID(TokenExchange):
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
        if not CHALLENGE.fullmatch(challenge):
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
            return {"grants": [grant.to_state(self._access) for grant in self.grants.values()]}

    def restore(self, data: Mapping[str, Any]) -> None:
        """Take back what :meth:`export` wrote (replacing the sign-ins held now)."""
        with self.lock:
            self.grants.clear()
            self._by_refresh.clear()
            self._by_used_refresh.clear()
            self._access.clear()
            for raw in data.get("grants", []):
                grant, tokens = Grant.from_state(raw)
                self.grants[grant.id] = grant
                self._by_refresh[grant.refresh_token] = grant.id
                for used in grant.used_refresh_tokens:
                    self._by_used_refresh[used] = grant.id
                self._access.update((token.token, token) for token in tokens)
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
