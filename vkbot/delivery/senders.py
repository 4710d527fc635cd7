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
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from gameplay.models import OutboxChannel
from gameplay.selectors.communities import (
    Credentials,
    credentials,
    default_group_id,
    served,
)

from .transport import Transport

log = logging.getLogger(__name__)

#: Credentials are read again after this many seconds.
REFRESH_SECONDS = 5.0
#: A row of a community that cannot send it is looked at again after this many seconds.
WAIT_SECONDS = 10.0
#: Why a community's rows wait is logged again after this many seconds at the earliest.
WARN_EVERY_SECONDS = 300.0

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
    (its admin's user token, and it has an id)."""

    community: int | None
    group: bool
    board: bool

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
        if known is not None and now - known[0] < REFRESH_SECONDS:
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
        self.transport.connect(
            community, group_token=found.group_token, user_token=found.user_token
        )
        sender = Sender(community, bool(found.group_token), bool(found.user_token))
        if not sender.group:
            self.warn(community, "has no community token", "its messages wait")
        if not sender.board:
            self.warn(community, "has no admin (user) token", "its board posts wait")
        return sender

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
