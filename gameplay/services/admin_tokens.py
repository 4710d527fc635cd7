"""A community admin's user token (board posts as the community): recorded when the admin signs
in with VK ID or pastes a key, renewed before it expires, and, when VK says no, the community
turned to «Войдите заново через VK ID».

**One renewal per expiry.** VK ID takes each refresh token once: two processes renewing with
the same one would leave the loser with a refused token and the community signed out. So
:func:`admin_token_renew` locks the community's row (``select_for_update``; on SQLite the
IMMEDIATE transaction takes the database's write lock at BEGIN) and looks again under the
lock: a process that waited finds the token renewed (not due any more, or no longer the one VK
refused) and uses it. The new pair is saved in the transaction that read the old one, while
VK ID's call runs under the lock — the one network call a service makes, which is what the
lock is for. The call waits for the admin token's rate limiter like every VK call.

**When VK says no** (VK ID refuses the refresh token: revoked, spent, the app's access taken
back; or VK refuses a token that cannot renew itself, a pasted one), the row records it
(``user_token_refused_at``), the delivery holds the community's board posts (pending, in
order; the community token's messages go on), and the GM of every game of the community that
is under way gets a flag (:data:`FlagKind.ADMIN_KEY`). Signing in again
(:func:`admin_token_store` through ``communities.community_record``) clears it and closes
those flags; the held posts go out.

The environment's community may start from a refresh token in the environment
(``VK_USER_REFRESH_TOKEN``, :func:`admin_token_from_env`): used once, its descendants live in
the database.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from redis.exceptions import RedisError

from gameplay import vkid
from gameplay.messages import render
from gameplay.models import (
    ACTIVE_STATUSES,
    AdminTokenSource,
    Community,
    FlagKind,
    FlagStatus,
    Game,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
)
from gameplay.selectors.admin_tokens import renew_at, renews_itself, stored_for_env
from gameplay.selectors.table import current_phase
from outbox.queue import request_delivery
from outbox.ratelimit import limiter_for

log = logging.getLogger(__name__)

#: Who closes the GM's flags when the admin signs in again.
RESOLVED_BY = "VK ID"


@dataclass(frozen=True)
class AdminKey:
    """An admin's user token as the panel got it: from VK ID (with the refresh token, its
    device id and lifetime) or pasted. ``repr`` shows no token."""

    access_token: str = field(repr=False)
    source: str = AdminTokenSource.PASTED
    refresh_token: str = field(default="", repr=False)
    device_id: str = field(default="", repr=False)
    expires_in: int | None = None

    @classmethod
    def of_grant(cls, grant: vkid.Grant) -> AdminKey:
        return cls(
            access_token=grant.access_token,
            source=AdminTokenSource.VK_ID,
            refresh_token=grant.refresh_token,
            device_id=grant.device_id,
            expires_in=grant.expires_in,
        )


@dataclass(frozen=True)
class Renewal:
    """What :func:`admin_token_renew` found: the token to use now ("" when there is none),
    whether this call renewed it, whether VK refused it for good (the admin must sign in
    again), whether VK ID did not answer (try again later), and when it is due next."""

    token: str = field(default="", repr=False)
    renewed: bool = False
    refused: bool = False
    unavailable: bool = False
    renew_at: datetime | None = None


def admin_token_store(*, row: Community, key: AdminKey, now: datetime | None = None) -> None:
    """Put the admin's new token in ``row`` (the caller saves it in its transaction, which
    has the row locked): a refusal recorded before is lifted and the GMs' flags of it closed."""
    now = now or timezone.now()
    renewing = key.source == AdminTokenSource.VK_ID
    row.user_token = key.access_token
    row.user_token_source = key.source
    row.user_refresh_token = key.refresh_token if renewing else ""
    row.user_device_id = key.device_id if renewing else ""
    row.user_token_issued_at = now
    row.user_token_expires_at = (
        now + timedelta(seconds=key.expires_in) if renewing and key.expires_in else None
    )
    if row.user_token_refused_at is not None:
        row.user_token_refused_at, row.user_token_problem = None, ""
        _close_flags(row, now)
        _release_board(row)


def admin_token_from_env(*, row: Community, now: datetime | None = None) -> bool:
    """The environment's community's admin token from the environment (the caller saves
    ``row``): with ``VK_USER_REFRESH_TOKEN``, the pair it starts — once: the same refresh
    token is never given to VK ID again, a new one replaces the stored pair; without it,
    ``VK_USER_TOKEN`` pasted. Returns whether the row changed."""
    refresh = getattr(settings, "VK_USER_REFRESH_TOKEN", "") or ""
    if not refresh:
        token = settings.VK_USER_TOKEN or ""
        if row.user_token == token and row.user_token_source == _source_of(token):
            return False
        admin_token_store(row=row, key=AdminKey(access_token=token), now=now)
        row.user_token_source = _source_of(token)
        row.user_token_seed = ""
        return True
    seed = hashlib.sha256(refresh.encode()).hexdigest()[:32]
    if row.user_token_seed == seed:
        return False
    key = AdminKey(
        access_token=settings.VK_USER_TOKEN or "",
        source=AdminTokenSource.VK_ID,
        refresh_token=refresh,
        device_id=settings.VK_USER_DEVICE_ID,
    )
    admin_token_store(row=row, key=key, now=now)
    row.user_token_expires_at = None  # unknown: renewed before its first use
    row.user_token_seed = seed
    log.info("Community %s: the admin token renews from the environment's refresh token", row.vk_id)
    return True


def _source_of(token: str) -> str:
    return AdminTokenSource.PASTED if token else ""


@transaction.atomic
def admin_token_renew(
    *, vk_id: int, refused_token: str = "", now: datetime | None = None
) -> Renewal:
    """Renew community ``vk_id``'s admin token if it is due, or if VK just refused
    ``refused_token`` (the one the caller sent: error 5) — once, however many processes ask at
    the same moment (see the module). A token VK refused that cannot renew itself, or a
    renewal VK ID refuses, turns the community to «Войдите заново через VK ID»."""
    now = now or timezone.now()
    row = Community.objects.select_for_update().filter(vk_id=int(vk_id)).first()
    if row is None:
        return Renewal()
    if row.user_token_refused_at is not None:
        return Renewal(refused=True)
    if row.from_env and not stored_for_env(row):
        # The environment's pasted VK_USER_TOKEN: the environment says which token it is.
        current = settings.VK_USER_TOKEN or ""
        if refused_token and refused_token == current:
            _refuse(row, now, "VK refused VK_USER_TOKEN, which cannot renew itself")
            return Renewal(refused=True)
        return Renewal(token=current)
    if refused_token and row.user_token != refused_token:
        return _current(row)  # renewed meanwhile by another process
    due_at = renew_at(row)
    if not refused_token and (due_at is None or now < due_at):
        return _current(row)
    if not renews_itself(row):
        if refused_token:
            _refuse(row, now, "VK refused the admin's pasted token, which cannot renew itself")
            return Renewal(refused=True)
        return _current(row)
    return _renew(row, now)


@transaction.atomic
def admin_token_refuse(*, vk_id: int, token: str, why: str, now: datetime | None = None) -> bool:
    """VK says ``token``, community ``vk_id``'s admin token, may no longer post as the
    community (``why``: the operator's English): the community turns to «Войдите заново через
    VK ID» unless its token was replaced meanwhile. Returns whether it did."""
    row = Community.objects.select_for_update().filter(vk_id=int(vk_id)).first()
    if row is None or row.user_token_refused_at is not None:
        return False
    current = (
        settings.VK_USER_TOKEN or "" if row.from_env and not stored_for_env(row) else row.user_token
    )
    if not token or token != current:
        return False
    _refuse(row, now or timezone.now(), why)
    return True


def _current(row: Community) -> Renewal:
    return Renewal(token=row.user_token or "", renew_at=renew_at(row))


def _renew(row: Community, now: datetime) -> Renewal:
    app_id = getattr(settings, "VK_ID_APP_ID", None)
    if not app_id:
        log.error("Community %s: its admin token cannot be renewed without VK_ID_APP_ID", row.vk_id)
        return Renewal(token=row.user_token or "", unavailable=True)
    _wait_for_slot(row.user_token or row.user_refresh_token)
    try:
        grant = vkid.refresh(
            app_id=int(app_id), refresh_token=row.user_refresh_token, device_id=row.user_device_id
        )
    except vkid.VkIdRefused as refusal:
        _refuse(row, now, str(refusal))
        return Renewal(refused=True)
    except vkid.VkIdUnavailable as error:
        log.warning("Community %s: the admin token's renewal waits: %s", row.vk_id, error)
        return Renewal(token=row.user_token or "", unavailable=True, renew_at=renew_at(row))
    row.user_token = grant.access_token
    row.user_refresh_token = grant.refresh_token
    row.user_device_id = grant.device_id or row.user_device_id
    row.user_token_issued_at = now
    row.user_token_expires_at = now + timedelta(seconds=grant.expires_in)
    row.user_token_renewals += 1
    row.save(
        update_fields=[
            "user_token",
            "user_refresh_token",
            "user_device_id",
            "user_token_issued_at",
            "user_token_expires_at",
            "user_token_renewals",
        ]
    )
    log.info(
        "Community %s: the admin token renewed (renewal %s, for %s s)",
        row.vk_id,
        row.user_token_renewals,
        grant.expires_in,
    )
    return Renewal(token=row.user_token, renewed=True, renew_at=renew_at(row))


def _wait_for_slot(token: str) -> None:
    """VK ID's call waits for the admin token's rate limiter, as the token's own calls do."""
    try:
        limiter_for(token, "user").acquire(timeout=float(settings.VK_HTTP_TIMEOUT_SECONDS))
    except (RedisError, TimeoutError, ValueError) as error:
        log.warning("The admin token's rate limiter is unavailable (%s); renewing anyway", error)


def _refuse(row: Community, now: datetime, why: str) -> None:
    """VK said no: board posts wait for the admin to sign in again; the GMs are told."""
    row.user_token_refused_at = now
    row.user_token_problem = why[:200]
    row.save(update_fields=["user_token_refused_at", "user_token_problem"])
    log.warning(
        "Community %s: the admin must sign in again with VK ID (%s); its board posts wait",
        row.vk_id,
        why,
    )
    text = render("gm/admin_key_refused", community=str(row))
    for game in Game.objects.filter(vk_group_id=row.vk_id, status__in=ACTIVE_STATUSES):
        open_flags = ModerationFlag.objects.filter(
            game=game, kind=FlagKind.ADMIN_KEY, status=FlagStatus.OPEN
        )
        if not open_flags.exists():
            ModerationFlag.objects.create(
                game=game, kind=FlagKind.ADMIN_KEY, text=text, phase=current_phase(game)
            )


def _release_board(row: Community) -> None:
    """The admin signed in again: the board posts held meanwhile are due at once (the
    delivery takes them in order, topic by topic), and a drain is asked for."""
    Outbox.objects.filter(
        game__vk_group_id=row.vk_id, channel=OutboxChannel.BOARD, status=OutboxStatus.PENDING
    ).update(next_attempt_at=None)
    request_delivery()


def _close_flags(row: Community, now: datetime) -> None:
    """The admin signed in again: the GMs' open flags of it are closed, saying so."""
    ModerationFlag.objects.filter(
        game__vk_group_id=row.vk_id, kind=FlagKind.ADMIN_KEY, status=FlagStatus.OPEN
    ).update(
        status=FlagStatus.ACTED,
        note=render("gm/admin_key_restored", community=str(row)),
        resolved_by=RESOLVED_BY,
        resolved_at=now,
    )
