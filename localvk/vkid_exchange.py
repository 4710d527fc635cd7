"""VK ID's ``oauth2/auth`` (:mod:`localvk.vkid`), as VK documents it (docs/vk.md, "VK ID"): it
exchanges a code (``grant_type=authorization_code``: once, within its lifetime, with the
verifier, the same ``client_id``, ``redirect_uri`` and ``device_id``) or a refresh token
(``grant_type=refresh_token``, the same ``client_id`` and ``device_id``) for a new access token
*and* a new refresh token; a refresh token works once. ``state`` is echoed. Errors are
``{error, error_description, state}``, each recorded as a ``refused`` event."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .vkid_records import (
    AUTHORIZATION_CODE,
    REFRESH_TOKEN,
    VERIFIER,
    AccessToken,
    AuthCode,
    DeadRefreshToken,
    Grant,
    VKIDApp,
    VKIDError,
    b64url,
    code_challenge,
    parse_scope,
)


class TokenExchange:
    """``oauth2/auth`` of :class:`~localvk.vkid.VKID`, which holds the state it works on
    (declared here) and records its events."""

    lock: threading.RLock
    clock: Callable[[], float]
    access_ttl: float
    refresh_ttl: float
    apps: dict[int, VKIDApp]
    grants: dict[int, Grant]
    _codes: dict[str, AuthCode]
    _by_refresh: dict[str, int]
    _by_used_refresh: dict[str, int]
    _access: dict[str, AccessToken]
    _grant_seq: itertools.count[int]
    _id_token_key: bytes
    _event: Callable[..., None]

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
        if not VERIFIER.fullmatch(verifier):
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
            raise DeadRefreshToken(reused, self._by_used_refresh.get(raw))
        grant = self.grants[grant_id]
        now = self.clock()
        if grant.revoked or grant.refresh_expires_at <= now:
            raise DeadRefreshToken(False, grant.id)
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
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {
            "iss": "VK ID",
            "sub": str(grant.user_id),
            "app": grant.client_id,
            "exp": int(now + self.access_ttl),
            "iat": int(now),
            "jti": secrets.token_hex(8),
        }
        payload = b64url(json.dumps(claims).encode())
        signature = hmac.new(
            self._id_token_key, f"{header}.{payload}".encode(), hashlib.sha256
        ).digest()
        return f"{header}.{payload}.{b64url(signature)}"

    def _refused(self, params: Mapping[str, str], exc: VKIDError) -> None:
        reused = isinstance(exc, DeadRefreshToken) and exc.reused
        grant_id = exc.grant_id if isinstance(exc, DeadRefreshToken) else None
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
