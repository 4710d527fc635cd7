"""VK references a GM types in the panel: a user (``123``, ``id123``, a link, a mention) and a
chat (its number in the community or its peer id). Pure parsing: nothing is asked of VK."""

from __future__ import annotations

import re

from gameplay.refusals import (
    ChatNumberImpossible,
    ChatNumberMissing,
    NotVkUser,
    ScreenName,
    VkUserMissing,
    VkUserUnreadable,
)

#: VK peer ids of chats start here (peer_id = 2000000000 + chat_id).
CHAT_PEER_BASE = 2_000_000_000

_VK_ID = re.compile(
    r"^(?:(?:https?://)?(?:m\.|www\.)?vk\.(?:com|ru)/)?(?:id)?(\d+)/?$", re.IGNORECASE
)

_VK_SCREEN = re.compile(
    r"^(?:(?:https?://)?(?:m\.|www\.)?vk\.(?:com|ru)/)?@?([a-z0-9_.]{2,64})/?$", re.IGNORECASE
)

_MENTION = re.compile(r"^\[id(\d+)\|[^\]]*\]$")


def parse_vk_user(*, text: str) -> int:
    """A VK user id from ``123``, ``id123``, ``vk.com/id123``, ``https://vk.com/id123`` or a
    mention ``[id123|Имя]``. A screen name (``vk.com/durov``) needs VK to resolve: refused."""
    raw = (text or "").strip()
    if not raw:
        raise VkUserMissing()
    match = _VK_ID.match(raw) or _MENTION.match(raw)
    if match:
        vk_id = int(match.group(1))
        if vk_id < 1 or vk_id >= CHAT_PEER_BASE:
            raise NotVkUser(raw=raw)
        return vk_id
    screen = _VK_SCREEN.match(raw)
    if screen:
        raise ScreenName(screen=screen.group(1))
    raise VkUserUnreadable(raw=raw)


def chat_peer_id(*, value: int) -> int:
    """A chat's peer id from its peer id (2000000005) or its number in the community (5)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ChatNumberMissing()
    peer = value if value > CHAT_PEER_BASE else CHAT_PEER_BASE + value
    if peer - CHAT_PEER_BASE > 100_000_000:
        raise ChatNumberImpossible()
    return peer
