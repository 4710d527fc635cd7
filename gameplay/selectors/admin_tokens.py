"""A community admin's user token as the database holds it: the token to post in the board
with, when it is due for renewal, and whether VK refused it.

A token from VK ID renews itself (``gameplay.services.admin_tokens``) a little before it
expires: :data:`settings.VK_USER_TOKEN_RENEW_SECONDS` before, or a quarter of its lifetime
before when that is shorter. A pasted token never renews itself.

The environment's community keeps its pair in the database too once the environment gives a
refresh token (``VK_USER_REFRESH_TOKEN``): VK ID takes each refresh token once, so after the
first renewal only the database has a usable one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from gameplay.models import AdminTokenSource, Community, Outbox, OutboxChannel, OutboxStatus


@dataclass(frozen=True)
class AdminToken:
    """The admin's token of one community. ``repr`` never shows it."""

    token: str = field(default="", repr=False)
    #: When to renew it (None: it does not renew itself).
    renew_at: datetime | None = None
    #: VK refused it: board posts wait until the admin signs in again.
    refused: bool = False


def renews_itself(row: Community) -> bool:
    """Whether the row's admin token came from VK ID with a refresh token to renew it."""
    return (
        row.user_token_source == AdminTokenSource.VK_ID
        and bool(row.user_refresh_token)
        and bool(row.user_device_id)
    )


def renew_at(row: Community) -> datetime | None:
    """When the row's token is due for renewal: None for one that does not renew itself; the
    past for one of unknown expiry (renewed before its first use)."""
    if not renews_itself(row):
        return None
    expires = row.user_token_expires_at
    if expires is None or not row.user_token:
        return timezone.now() - timedelta(days=1)
    margin = timedelta(seconds=int(settings.VK_USER_TOKEN_RENEW_SECONDS))
    issued = row.user_token_issued_at
    if issued is not None and expires > issued:
        margin = min(margin, (expires - issued) / 4)
    return expires - margin


def stored_for_env(row: Community) -> bool:
    """Whether the environment's community's admin token is the database's (the environment
    gave a refresh token) rather than the environment's ``VK_USER_TOKEN``."""
    return row.from_env and bool(getattr(settings, "VK_USER_REFRESH_TOKEN", ""))


def admin_token(row: Community) -> AdminToken:
    """The row's admin token, when it is due, whether VK refused it."""
    return AdminToken(
        token=row.user_token or "",
        renew_at=renew_at(row),
        refused=row.user_token_refused_at is not None,
    )


def board_posts_waiting(community: Community) -> int:
    """How many board posts of the community's games wait to go out."""
    return Outbox.objects.filter(
        game__vk_group_id=community.vk_id,
        channel=OutboxChannel.BOARD,
        status=OutboxStatus.PENDING,
    ).count()
