"""«Войти через VK ID» on «Подключить сообщество»: a community's admin signs in with VK ID,
so the user token the board posts go with renews itself (``gameplay.services.admin_tokens``).

Authorization Code Flow with PKCE (``gameplay.vkid``):

1. :func:`sign_in_start` checks the community token typed on the form (a wrong one is said at
   once, before the trip to VK ID), keeps the sign-in in the browser's session and returns VK
   ID's address for the browser: the app (``VK_ID_APP_ID``), the redirect address
   (:func:`redirect_uri`: ``PUBLIC_URL`` + the panel's ``communities/vkid/``), the scopes,
   the ``state`` and the S256 challenge.
2. VK ID sends the browser back to that address; :func:`sign_in_finish` takes the sign-in out
   of the session first (single-use), refuses an answer whose ``state`` is not this session's
   own, or that comes too late or for another panel user, exchanges the code on the server
   with the verifier, and connects the community as with a pasted key
   (``panel.connect.connect``: the same checks, then the long poll or Callback set up).

The session holds the sign-in sealed with the tokens' Fernet keys: the community token and the
PKCE verifier are no more readable in the session store than in the database. Nothing of the
answer picks where the browser goes next (no open redirect): the views send it to this
panel's own pages.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.views.decorators.debug import sensitive_variables

from gameplay import vkid
from gameplay.models import Community
from gameplay.models.secrets import crypter
from gameplay.refusals import (
    CommunityTokenOfAnother,
    VkIdCancelled,
    VkIdCodeRefused,
    VkIdNotConfigured,
    VkIdRightMissing,
    VkIdSignInLost,
    VkUnreachable,
)
from gameplay.services.admin_tokens import AdminKey
from panel import connect

log = logging.getLogger(__name__)

#: Where the session keeps the sign-in under way.
SESSION_KEY = "panel.vkid"
#: How long a sign-in may take, from «Войти через VK ID» to VK ID's answer (its code's
#: lifetime).
SIGN_IN_SECONDS = 600
#: The right the board needs (VK answers 15 without it).
BOARD_RIGHT = "groups"


@dataclass(frozen=True)
class Pending:
    """A sign-in under way. ``repr`` shows no secret."""

    state: str = field(repr=False)
    verifier: str = field(repr=False)
    group_token: str = field(repr=False)
    community: int | None
    user: int
    started: float


def configured() -> bool:
    """Whether this deployment can sign admins in with VK ID: a VK ID app and a public
    address for VK ID to send the browser back to."""
    return bool(getattr(settings, "VK_ID_APP_ID", None)) and bool(_public_url())


def _public_url() -> str:
    return (getattr(settings, "PUBLIC_URL", "") or "").rstrip("/")


def redirect_uri() -> str:
    """The address VK ID sends the browser back to: the trusted redirect URL to register in
    the VK ID app (docs/operations.md, "The admin's key: VK ID"). '' without PUBLIC_URL."""
    base = _public_url()
    return f"{base}{reverse('panel:community_vkid')}" if base else ""


@sensitive_variables()
def sign_in_start(request: HttpRequest, *, group_token: str, community: Community | None) -> str:
    """Begin a sign-in for connecting a community (``community``: connecting it again; an
    empty ``group_token`` keeps its stored one) and return VK ID's address for the browser.
    Raises the refusals of the community token's checks, or :class:`VkIdNotConfigured`."""
    if not configured():
        raise VkIdNotConfigured()
    token = group_token.strip() or (community.group_token if community is not None else "")
    found = connect.check_community_token(token)
    if community is not None and community.vk_id != found.vk_id:
        raise CommunityTokenOfAnother(community=str(community))
    known = Community.objects.filter(vk_id=found.vk_id).first()
    if known is not None:
        connect.may_connect(known, request.user)
    pkce = vkid.new_pkce()
    pending = Pending(
        state=pkce.state,
        verifier=pkce.verifier,
        group_token=token,
        community=found.vk_id if community is not None else None,
        user=int(cast(int, request.user.pk)),  # a signed-in GM
        started=time.time(),
    )
    request.session[SESSION_KEY] = _seal(pending)
    log.info("VK ID sign-in started for community %s by %s", found.vk_id, request.user.pk)
    return vkid.authorize_url(
        app_id=int(cast(int, settings.VK_ID_APP_ID)), redirect_uri=redirect_uri(), pkce=pkce
    )


@dataclass(frozen=True)
class SignedIn:
    """A finished sign-in: the community connected, and whether it was connected before (the
    admin signed in again)."""

    community: Community
    again: bool


@sensitive_variables()
def sign_in_finish(request: HttpRequest) -> SignedIn:
    """Finish the session's sign-in with VK ID's answer (the request's query) and connect the
    community. Raises a refusal, with nothing changed, when the answer is not this session's,
    VK ID did not issue the token, or the connect checks fail; the sign-in is used up either
    way."""
    pending = _open(request.session.pop(SESSION_KEY, None))
    state = str(request.GET.get("state") or "")
    if (
        pending is None
        or not state
        or not secrets.compare_digest(state.encode(), pending.state.encode())
        or pending.user != request.user.pk
        or time.time() - pending.started > SIGN_IN_SECONDS
    ):
        raise VkIdSignInLost()
    if request.GET.get("error"):
        log.info("VK ID sign-in not allowed: %s", str(request.GET.get("error"))[:60])
        raise VkIdCancelled()
    code, device_id = str(request.GET.get("code") or ""), str(request.GET.get("device_id") or "")
    if not code or not device_id:
        raise VkIdCodeRefused()
    try:
        grant = vkid.exchange_code(
            app_id=int(cast(int, settings.VK_ID_APP_ID)),
            code=code,
            device_id=device_id,
            redirect_uri=redirect_uri(),
            pkce=vkid.Pkce(state=pending.state, verifier=pending.verifier),
        )
    except vkid.VkIdRefused as refusal:
        log.warning("VK ID sign-in: the code exchange refused (%s)", refusal.error)
        raise VkIdCodeRefused() from None
    except vkid.VkIdUnavailable as error:
        log.warning("VK ID sign-in: %s", error)
        raise VkUnreachable() from None
    if grant.scopes and BOARD_RIGHT not in grant.scopes:
        raise VkIdRightMissing(right=BOARD_RIGHT)
    community = (
        Community.objects.filter(vk_id=pending.community).first()
        if pending.community is not None
        else None
    )
    row = connect.connect(
        group_token=pending.group_token,
        key=AdminKey.of_grant(grant),
        by=request.user,
        community=community,
    )
    return SignedIn(community=row, again=community is not None)


def _seal(pending: Pending) -> str:
    return crypter().encrypt(json.dumps(asdict(pending)).encode()).decode()


def _open(sealed: Any) -> Pending | None:
    if not isinstance(sealed, str):
        return None
    try:
        data = json.loads(crypter().decrypt(sealed.encode()).decode())
        return Pending(**data)
    except (InvalidToken, ValueError, TypeError):
        return None
