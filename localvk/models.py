"""The objects the local VK keeps: users, messages, chats, board topics and comments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CHAT_PEER_BASE = 2_000_000_000
#: The kinds of token: the community's, and a community admin user's.
GROUP = "group"
USER = "user"


def chat_peer_id(chat_id: int) -> int:
    return CHAT_PEER_BASE + chat_id


def is_chat_peer(peer_id: int) -> bool:
    return peer_id > CHAT_PEER_BASE


def is_user_peer(peer_id: int) -> bool:
    return 0 < peer_id < CHAT_PEER_BASE


@dataclass
class User:
    id: int
    first_name: str
    last_name: str
    sex: int = 0

    def to_vk(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "first_name": self.first_name,
            "last_name": self.last_name,
            "can_access_closed": True,
            "is_closed": False,
        }


@dataclass
class Message:
    """A message in a conversation, incoming (from a user) or outgoing (sent via the API)."""

    id: int
    peer_id: int
    from_id: int
    text: str
    date: int
    conversation_message_id: int
    out: bool
    random_id: int = 0
    keyboard: dict[str, Any] | None = None
    payload: str | None = None
    action: dict[str, Any] | None = None
    attachment: str | None = None
    token_kind: str | None = None
    #: ``messages.edit``: when it was last edited (VK's ``update_time``), and the number the
    #: edit took from the message sequence (the player page and the feed poll edits by it).
    update_time: int | None = None
    edit_seq: int = 0
    #: What the message said before each edit (``{"text", "keyboard"}``, oldest first): what
    #: its reader saw then (tests and the leak scan read it; VK does not show it).
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_vk(self, *, for_bot: bool = True) -> dict[str, Any]:
        """The ``message`` object of ``message_new`` (a bot sees id 0 in chats, as in VK)."""
        data: dict[str, Any] = {
            "date": self.date,
            "from_id": self.from_id,
            "id": 0 if for_bot and is_chat_peer(self.peer_id) else self.id,
            "out": 1 if self.out else 0,
            "version": self.id,
            "attachments": [],
            "conversation_message_id": self.conversation_message_id,
            "fwd_messages": [],
            "important": False,
            "is_hidden": False,
            "peer_id": self.peer_id,
            "random_id": self.random_id,
            "text": self.text,
        }
        if self.payload is not None:
            data["payload"] = self.payload
        if self.action is not None:
            data["action"] = self.action
        if self.keyboard is not None:
            data["keyboard"] = self.keyboard
        if self.update_time is not None:
            data["update_time"] = self.update_time
        return data

    def to_dict(self) -> dict[str, Any]:
        """Everything, for ``/_test/messages`` and in-process assertions."""
        data = self.to_vk(for_bot=False)
        data["token_kind"] = self.token_kind
        data["attachment"] = self.attachment
        return data


@dataclass
class ChatMember:
    member_id: int
    invited_by: int
    join_date: int
    is_admin: bool = False
    is_owner: bool = False

    def to_vk(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "member_id": self.member_id,
            "invited_by": self.invited_by,
            "join_date": self.join_date,
        }
        if self.is_admin:
            data["is_admin"] = True
        if self.is_owner:
            data["is_owner"] = True
        return data


@dataclass
class Chat:
    chat_id: int
    title: str
    owner_id: int
    members: dict[int, ChatMember] = field(default_factory=dict)
    invite_link: str | None = None

    @property
    def peer_id(self) -> int:
        return chat_peer_id(self.chat_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chat_id": self.chat_id,
            "peer_id": self.peer_id,
            "title": self.title,
            "owner_id": self.owner_id,
            "members": [member.to_vk() for member in self.members.values()],
            "invite_link": self.invite_link,
        }


@dataclass
class Comment:
    id: int
    topic_id: int
    from_id: int
    date: int
    text: str
    attachments: str | None = None
    guid: str | None = None
    deleted: bool = False

    def to_vk(self) -> dict[str, Any]:
        return {"id": self.id, "from_id": self.from_id, "date": self.date, "text": self.text}

    def to_dict(self) -> dict[str, Any]:
        data = self.to_vk()
        data.update(topic_id=self.topic_id, deleted=self.deleted, guid=self.guid)
        return data


@dataclass
class Topic:
    id: int
    title: str
    created_by: int
    date: int
    comments: list[Comment] = field(default_factory=list)
    is_closed: bool = False

    def visible_comments(self) -> list[Comment]:
        return [comment for comment in self.comments if not comment.deleted]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_by": self.created_by,
            "date": self.date,
            "is_closed": self.is_closed,
            "comments": [comment.to_dict() for comment in self.comments],
        }


@dataclass
class CallbackEvent:
    """A pressed callback button (``message_event``) awaiting its answer."""

    event_id: str
    user_id: int
    peer_id: int
    payload: Any
    created: float
    conversation_message_id: int | None = None
    answer: dict[str, Any] | None = None


def payload_text(payload: Any) -> str | None:
    """A message payload as VK delivers it: a JSON string."""
    if payload is None:
        return None
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
