"""Which community each Outbox row goes out as, with which tokens, and whether it can go now.

A row goes out as ``Outbox.group_id`` (None: the deployment's default community, the
environment's ``VK_GROUP_ID``), with that community's credentials
(``gameplay.selectors.communities.credentials``): private and chat messages and button answers
on its community token, board posts on its admin's user token under its ``group_id``. Without
any community configured (no ``VK_GROUP_ID``) the settings' tokens send what needs no
community id, as a single-community deployment always did.

A community that is disconnected, unknown, or lacks the token a row needs cannot send it: its
rows stay pending and are put off for :data:`WAIT_SECONDS` at a time (``outbox_postpone``),
and go out once the community is connected again. Credentials are read again every
:data:`REFRESH_SECONDS`, so a community connected, disconnected or given new tokens in the
panel is seen without a restart.

The admin's user token of a community that signed in with VK ID lives an hour: it is renewed
when due (``gameplay.services.admin_tokens.admin_token_renew``, once across every process)
before its community's board posts go out, and again when VK refuses it (error 5:
:meth:`Senders.renew`, then the drain sends the refused requests once more). A community
whose admin must sign in again (VK refused the renewal, or a key that cannot renew itself)
holds its board posts like a community without the token: pending, in order; its community
token's messages go on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.utils import timezone

from gameplay.models import OutboxChannel
from gameplay.selectors.communities import (
    Credentials,
    credentials,
    default_group_id,
    served,
)
from gameplay.services.admin_tokens import Renewal, admin_token_renew

from .transport import Transport

log = logging.getLogger(__name__)

#: Credentials are read again after this many seconds.
REFRESH_SECONDS = 5.0
#: A row of a community that cannot send it is looked at again after this many seconds.
WAIT_SECONDS = 10.0
#: Why a community's rows wait is logged again after this many seconds at the earliest.
WARN_EVERY_SECONDS = 300.0
#: VK ID did not answer a renewal: asked again after this many seconds.
RENEW_RETRY_SECONDS = 5.0

GROUP_CHANNELS = (
    OutboxChannel.MESSAGE,
    OutboxChannel.CHAT,
    OutboxChannel.EVENT_ANSWER,
    OutboxChannel.INVITE,
    OutboxChannel.KICK,
    OutboxChannel.CREATE_CHAT,
)


@dataclass(frozen=True)
class Sender:
    """What a community can send now: ``group`` (its community token is known), ``board``
    (its admin's user token, and it has an id); ``renew_at``: when its admin's token is due
    for renewal (None: it does not renew itself)."""

    community: int | None
    group: bool
    board: bool
    renew_at: datetime | None = None

    def can_send(self, channel: str) -> bool:
        return self.board if channel == OutboxChannel.BOARD else self.group


class Senders:
    """The communities of one drain run, registered with its :class:`Transport` as they are
    met."""

    def __init__(self, transport: Transport, *, default: int | None = None) -> None:
        self.transport = transport
        self.default = default if default is not None else default_group_id()
        self._known: dict[int | None, tuple[float, Sender | None]] = {}
        self._warned: dict[tuple[int | None, str], float] = {}

    def key(self, group_id: int | None) -> int | None:
        """The community a row of ``group_id`` goes out as."""
        return int(group_id) if group_id is not None else self.default

    def get(self, community: int | None) -> Sender | None:
        """The community's :class:`Sender` (None: it is not served: unknown or disconnected)."""
        now = time.monotonic()
        known = self._known.get(community)
        if known is not None and now - known[0] < REFRESH_SECONDS and not _due(known[1]):
            return known[1]
        sender = self._resolve(community)
        self._known[community] = (now, sender)
        return sender

    def _resolve(self, community: int | None) -> Sender | None:
        if community is None:  # no community configured: the transport's own (settings') tokens
            return Sender(None, self.transport.has_token("group"), False)
        found = credentials(community)
        if found is None:
            self.transport.disconnect(community)
            self.warn(community, "is not connected", "its rows wait until it is connected again")
            return None
        return self._use(found)

    def _use(self, found: Credentials) -> Sender:
        community = found.group_id
        user_token, renew_at = found.user_token, found.user_token_renew_at
        refused = found.user_token_refused
        if user_token and not refused and renew_at is not None and timezone.now() >= renew_at:
            renewal = admin_token_renew(vk_id=community)
            refused = renewal.refused
            user_token = renewal.token or user_token
            renew_at = _next_look(renewal)
        self.transport.connect(
            community, group_token=found.group_token, user_token="" if refused else user_token
        )
        sender = Sender(community, bool(found.group_token), bool(user_token) and not refused)
        sender = replace(sender, renew_at=renew_at if sender.board else None)
        if not sender.group:
            self.warn(community, "has no community token", "its messages wait")
        if refused:
            self.warn(community, "needs its admin to sign in again (VK ID)", "its board posts wait")
        elif not sender.board:
            self.warn(community, "has no admin (user) token", "its board posts wait")
        return sender

    def renew(self, community: int, *, refused_token: str) -> Renewal:
        """VK refused ``refused_token``, the admin token ``community``'s board requests went
        with (error 5): renew it (or take the one another process renewed meanwhile) and send
        with that from now on; or hold the community's board posts when VK says no."""
        renewal = admin_token_renew(vk_id=community, refused_token=refused_token)
        known = self._known.get(community)
        group = known[1].group if known is not None and known[1] is not None else True
        board = bool(renewal.token) and not renewal.refused and not renewal.unavailable
        self.transport.connect(
            community,
            group_token=self.transport.token("group", community),
            user_token=renewal.token if board else "",
        )
        sender = Sender(community, group, board, _next_look(renewal) if board else None)
        self._known[community] = (time.monotonic(), sender)
        if renewal.refused:
            self.warn(community, "needs its admin to sign in again (VK ID)", "its board posts wait")
        return renewal

    def hold_board(self, community: int) -> None:
        """The community's admin must sign in again: its board posts wait from now on."""
        self.transport.connect(
            community, group_token=self.transport.token("group", community), user_token=""
        )
        known = self._known.get(community)
        group = known[1].group if known is not None and known[1] is not None else True
        self._known[community] = (time.monotonic(), Sender(community, group, False))
        self.warn(community, "needs its admin to sign in again (VK ID)", "its board posts wait")

    def warn(self, community: int | None, what: str, consequence: str) -> None:
        """Log why a community's rows wait (never a token), at most every few minutes."""
        now = time.monotonic()
        last = self._warned.get((community, what))
        if last is not None and now - last < WARN_EVERY_SECONDS:
            return
        self._warned[(community, what)] = now
        log.warning("Delivery: community %s %s; %s", community, what, consequence)

    def channels(self) -> list[str]:
        """The channels some community of this deployment can send now (the others are not
        even looked at). Reads every served community's credentials at once (and keeps
        them for :data:`REFRESH_SECONDS`)."""
        now = time.monotonic()
        senders = [self.get(None)] if self.default is None else []
        for found in served():
            sender = self._use(found)
            self._known[found.group_id] = (now, sender)
            senders.append(sender)
        if self.default is not None and self.default not in self._known:
            senders.append(self.get(self.default))
        channels: list[str] = []
        if any(s is not None and s.group for s in senders):
            channels.extend(GROUP_CHANNELS)
        if any(s is not None and s.board for s in senders):
            channels.append(OutboxChannel.BOARD)
        return channels


def _due(sender: Sender | None) -> bool:
    """Whether the community's admin token is due for renewal now."""
    return sender is not None and sender.renew_at is not None and timezone.now() >= sender.renew_at


def _next_look(renewal: Renewal) -> datetime | None:
    """When to look at the admin token again: when it is next due; soon, when VK ID did not
    answer."""
    if renewal.unavailable:
        return timezone.now() + timedelta(seconds=RENEW_RETRY_SECONDS)
    return renewal.renew_at
