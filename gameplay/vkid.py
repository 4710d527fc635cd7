"""VK ID (id.vk.com, OAuth 2.1): how a community admin's user token is issued and renewed.

VK lets only a user post in a board as the community, and a user token from VK ID lives an
hour. So the admin signs in once with the Authorization Code Flow with PKCE, and the server
renews the token with the refresh token VK ID issued beside it:

1. The browser goes to ``{VK_ID_URL}authorize`` (:func:`authorize_url`) with the app's id
   (``VK_ID_APP_ID``), the redirect address (this deployment's, registered in the app as a
   trusted redirect URL), the scopes, a ``state`` and the PKCE challenge (S256 of a verifier
   that never leaves the server: :func:`new_pkce`).
2. VK ID sends the browser back to the redirect address with ``code``, ``state`` and
   ``device_id`` (or ``error``); the server exchanges the code (:func:`exchange_code`: a POST
   to ``{VK_ID_URL}oauth2/auth`` with ``grant_type=authorization_code``, the code, the
   verifier, the device id, the redirect address, the state and the app's id).
3. Before the access token expires, the server renews it (:func:`refresh`: the same address,
   ``grant_type=refresh_token`` with the refresh token and the device id). A refresh token is
   single-use: the answer brings the next one.

Both answers are ``{"access_token", "refresh_token", "expires_in", "user_id", "scope",
"state", …}``; a refusal is ``{"error": "invalid_grant", "error_description": …}``
(:class:`VkIdRefused`: sign in again), while a network error, an unreadable answer or VK ID's
``server_error`` / ``temporarily_unavailable`` / ``slow_down`` is :class:`VkIdUnavailable`
(try again later, the refresh token still unspent as far as we know).

Synchronous (urllib, the standard library) and without the database: the callers are the
panel's request and the renewal service, which holds the community's row lock around it.
Tokens never reach a log line or an exception's text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

#: What the admin's token is asked for: ``groups`` for the board posts as the community (VK
#: answers 15 without it) and the connect checks, beside VK ID's default ``vkid.personal_info``.
SCOPES = ("vkid.personal_info", "groups")
#: The PKCE method VK ID takes (its docs spell it in lower case; it is RFC 7636's S256).
CHALLENGE_METHOD = "s256"
#: VK ID's errors that mean "not now" rather than "no": the grant stays usable.
TRANSIENT_ERRORS = frozenset({"server_error", "temporarily_unavailable", "slow_down"})
#: An access token's lifetime when VK ID's answer does not say (its documented hour).
DEFAULT_LIFETIME = 3600


class VkIdError(Exception):
    """VK ID did not issue a token. The text is an operator's (English), never a token."""


class VkIdRefused(VkIdError):
    """VK ID said no (``error``: ``invalid_grant``, ``invalid_client``, …): the code or the
    refresh token is spent, expired or revoked; the admin must sign in again."""

    def __init__(self, error: str, description: str = "") -> None:
        self.error, self.description = error, description
        super().__init__(f"VK ID refused: {error}" + (f" ({description})" if description else ""))


class VkIdUnavailable(VkIdError):
    """VK ID did not answer, or not readably, or asked to come back later."""


@dataclass(frozen=True)
class Pkce:
    """One sign-in's secrets: the ``state`` (bound to the browser's session, single-use) and
    the PKCE verifier with its S256 challenge. ``repr`` shows neither."""

    state: str = field(repr=False)
    verifier: str = field(repr=False)

    @property
    def challenge(self) -> str:
        return challenge_of(self.verifier)


@dataclass(frozen=True)
class Grant:
    """What VK ID issued: the access token (a user token for the VK API), the refresh token
    that renews it, its lifetime, whose it is, its scopes and the device it is bound to."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    expires_in: int
    device_id: str = field(repr=False)
    user_id: int | None = None
    scopes: frozenset[str] = frozenset()


def new_pkce() -> Pkce:
    """A fresh state and verifier (VK ID: 43–128 characters of ``a-zA-Z0-9_-``)."""
    return Pkce(state=secrets.token_urlsafe(32), verifier=secrets.token_urlsafe(64))


def challenge_of(verifier: str) -> str:
    """RFC 7636's S256: base64url (no padding) of the verifier's SHA-256."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def base_url() -> str:
    url = str(settings.VK_ID_URL).strip()
    return url if url.endswith("/") else url + "/"


def authorize_url(
    *, app_id: int, redirect_uri: str, pkce: Pkce, scopes: tuple[str, ...] = SCOPES
) -> str:
    """Where the browser signs in: VK ID's form asking the admin to allow ``scopes``."""
    query = {
        "response_type": "code",
        "client_id": str(app_id),
        "redirect_uri": redirect_uri,
        "scope": " ".join(scopes),
        "state": pkce.state,
        "code_challenge": pkce.challenge,
        "code_challenge_method": CHALLENGE_METHOD,
    }
    return base_url() + "authorize?" + urllib.parse.urlencode(query)


def exchange_code(
    *, app_id: int, code: str, device_id: str, redirect_uri: str, pkce: Pkce
) -> Grant:
    """The code VK ID sent the browser back with, exchanged for a token pair (the verifier
    proves this server started the sign-in). Raises :class:`VkIdError`."""
    answer = _post(
        {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": pkce.verifier,
            "client_id": str(app_id),
            "device_id": device_id,
            "redirect_uri": redirect_uri,
            "state": pkce.state,
        }
    )
    if str(answer.get("state") or pkce.state) != pkce.state:
        raise VkIdUnavailable("VK ID answered the code exchange with another state")
    return _grant(answer, device_id)


def refresh(*, app_id: int, refresh_token: str, device_id: str) -> Grant:
    """A new pair for the refresh token (which VK ID then retires). Raises
    :class:`VkIdError`."""
    state = secrets.token_urlsafe(16)
    answer = _post(
        {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": str(app_id),
            "device_id": device_id,
            "state": state,
        }
    )
    if answer.get("state") not in (None, state):
        # The pair is taken all the same: the old refresh token is spent either way.
        log.warning("VK ID answered a renewal with another state than it was sent")
    return _grant(answer, device_id)


def _grant(answer: dict[str, Any], device_id: str) -> Grant:
    access, renewal = answer.get("access_token"), answer.get("refresh_token")
    if not isinstance(access, str) or not access or not isinstance(renewal, str) or not renewal:
        raise VkIdUnavailable("VK ID's answer has no token pair")
    expires_in = answer.get("expires_in")
    user_id = answer.get("user_id")
    scope = answer.get("scope")
    lifetime = int(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else 0
    return Grant(
        access_token=access,
        refresh_token=renewal,
        expires_in=lifetime or DEFAULT_LIFETIME,
        device_id=str(answer.get("device_id") or device_id),
        user_id=user_id if isinstance(user_id, int) and not isinstance(user_id, bool) else None,
        scopes=frozenset(str(scope).replace(",", " ").split()) if scope else frozenset(),
    )


def _post(form: dict[str, str]) -> dict[str, Any]:
    """POST ``form`` to ``oauth2/auth``; VK ID's JSON answer, or :class:`VkIdError`."""
    url = base_url() + "oauth2/auth"
    body = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
    )
    timeout = float(settings.VK_HTTP_TIMEOUT_SECONDS)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - a setting's URL
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:  # VK ID answers its refusals with 400 and a body
        status, raw = error.code, error.read()
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        log.warning("VK ID unreachable (%s: %s)", type(error).__name__, reason)
        raise VkIdUnavailable(f"VK ID unreachable: {type(error).__name__}") from None
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise VkIdUnavailable(f"VK ID answered HTTP {status} with no JSON") from None
    if not isinstance(answer, dict):
        raise VkIdUnavailable(f"VK ID answered HTTP {status} with no object")
    refusal = answer.get("error")
    if refusal:
        code = str(refusal.get("error_code") if isinstance(refusal, dict) else refusal)
        description = str(answer.get("error_description") or "")[:200]
        if code in TRANSIENT_ERRORS or status >= 500:
            raise VkIdUnavailable(f"VK ID: {code} {description}".strip())
        raise VkIdRefused(code, description)
    if status >= 400:
        raise VkIdUnavailable(f"VK ID answered HTTP {status}")
    return answer
