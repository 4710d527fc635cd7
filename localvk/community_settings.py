"""What a community admin sets through the API when connecting a bot: the Bots Long Poll
settings (``groups.setLongPollSettings``), the Callback API servers (``groups.addCallbackServer``
and ``groups.setCallbackSettings``) and the messages/bot settings (``groups.setSettings``).

One :class:`CommunitySettings` per community (``LocalVK.settings``). The long poll delivers
every event until ``setLongPollSettings`` is called (as the local VK always did), then only the
enabled types (none while disabled). A Callback server added through the API gets the events
ticked with ``setCallbackSettings`` (none before: VK starts a new server with no event types);
the community's pusher (:mod:`localvk.callback`) pushes to the newest server added (VK pushes to
each of up to ten: a simplification).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from .longpoll import API_VERSION

#: The event types ``groups.setLongPollSettings`` / ``groups.setCallbackSettings`` take as
#: flags (vkbottle_types 5.199, ``GroupsLongPollEvents`` and the methods' parameters).
EVENT_TYPES: tuple[str, ...] = (
    "audio_new", "board_post_delete", "board_post_edit", "board_post_new",
    "board_post_restore", "donut_money_withdraw", "donut_money_withdraw_error",
    "donut_subscription_cancelled", "donut_subscription_create", "donut_subscription_expired",
    "donut_subscription_price_changed", "donut_subscription_prolonged", "group_change_photo",
    "group_change_settings", "group_join", "group_leave", "group_officers_edit",
    "lead_forms_new", "like_add", "like_remove", "market_comment_delete",
    "market_comment_edit", "market_comment_new", "market_comment_restore", "market_order_edit",
    "market_order_new", "message_allow", "message_deny", "message_edit", "message_event",
    "message_new", "message_reaction_event", "message_read", "message_reply",
    "message_typing_state", "photo_comment_delete", "photo_comment_edit", "photo_comment_new",
    "photo_comment_restore", "photo_new", "poll_vote_new", "user_block", "user_unblock",
    "video_comment_delete", "video_comment_edit", "video_comment_new", "video_comment_restore",
    "video_new", "wall_post_new", "wall_reply_delete", "wall_reply_edit", "wall_reply_new",
    "wall_reply_restore", "wall_repost", "wall_schedule_post_delete", "wall_schedule_post_new",
)  # fmt: skip
#: ``groups.setSettings`` flags the local VK remembers (the ones a bot's connect flow sets).
BOT_SETTINGS: tuple[str, ...] = (
    "messages", "bots_capabilities", "bots_start_button", "bots_add_to_chat",
)  # fmt: skip
MAX_CALLBACK_SERVERS = 10


def events_object(enabled: frozenset[str] | None) -> dict[str, int]:
    """VK's ``events`` object: every type with 1 or 0 (None: all enabled)."""
    return {name: int(enabled is None or name in enabled) for name in EVENT_TYPES}


@dataclass(frozen=True)
class LongPollSettings:
    enabled: bool
    api_version: str
    events: frozenset[str]

    def delivers(self, event_type: str) -> bool:
        return self.enabled and event_type in self.events

    def to_vk(self) -> dict[str, Any]:
        return {
            "is_enabled": self.enabled,
            "api_version": self.api_version,
            "events": events_object(self.events),
        }


@dataclass
class CallbackServer:
    """A server added with ``groups.addCallbackServer``."""

    id: int
    title: str
    url: str
    secret_key: str
    creator_id: int
    api_version: str = API_VERSION
    events: frozenset[str] = frozenset()

    def to_vk(self, status: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "creator_id": self.creator_id,
            "url": self.url,
            "secret_key": self.secret_key,
            "status": status,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "url": self.url,
            "secret_key": self.secret_key,
            "creator_id": self.creator_id,
            "api_version": self.api_version,
            "events": sorted(self.events),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallbackServer:
        return cls(
            id=int(data["id"]),
            title=str(data["title"]),
            url=str(data["url"]),
            secret_key=str(data["secret_key"]),
            creator_id=int(data["creator_id"]),
            api_version=str(data.get("api_version") or API_VERSION),
            events=frozenset(str(e) for e in data.get("events") or ()),
        )


@dataclass
class CommunitySettings:
    """The connect flow's settings of one community (see the module doc)."""

    confirmation_code: str = field(default_factory=lambda: secrets.token_hex(4))
    longpoll: LongPollSettings | None = None
    callback_servers: list[CallbackServer] = field(default_factory=list)
    bot_settings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BOT_SETTINGS, 0))
    _server_seq: int = 0

    def longpoll_delivers(self, event_type: str) -> bool:
        return self.longpoll is None or self.longpoll.delivers(event_type)

    def longpoll_view(self) -> dict[str, Any]:
        """``groups.getLongPollSettings``; before any ``set``: on, every event (what is
        delivered)."""
        if self.longpoll is None:
            return {"is_enabled": True, "api_version": API_VERSION, "events": events_object(None)}
        return self.longpoll.to_vk()

    def add_server(self, title: str, url: str, secret_key: str, creator_id: int) -> CallbackServer:
        if len(self.callback_servers) >= MAX_CALLBACK_SERVERS:
            raise ValueError("too many servers")
        self._server_seq += 1
        server = CallbackServer(self._server_seq, title, url, secret_key, creator_id)
        self.callback_servers.append(server)
        return server

    def server(self, server_id: int) -> CallbackServer | None:
        return next((s for s in self.callback_servers if s.id == server_id), None)

    def newest_server(self) -> CallbackServer | None:
        return self.callback_servers[-1] if self.callback_servers else None

    def export(self) -> dict[str, Any]:
        return {
            "confirmation_code": self.confirmation_code,
            "longpoll": None
            if self.longpoll is None
            else {
                "enabled": self.longpoll.enabled,
                "api_version": self.longpoll.api_version,
                "events": sorted(self.longpoll.events),
            },
            "callback_servers": [s.to_dict() for s in self.callback_servers],
            "server_seq": self._server_seq,
            "bot_settings": dict(self.bot_settings),
        }

    def restore(self, data: dict[str, Any]) -> None:
        longpoll = data.get("longpoll")
        self.confirmation_code = str(data["confirmation_code"])
        self.longpoll = (
            None
            if longpoll is None
            else LongPollSettings(
                bool(longpoll["enabled"]),
                str(longpoll["api_version"]),
                frozenset(str(e) for e in longpoll["events"]),
            )
        )
        self.callback_servers = [CallbackServer.from_dict(s) for s in data["callback_servers"]]
        self._server_seq = int(data["server_seq"])
        self.bot_settings = {k: int(data["bot_settings"].get(k, 0)) for k in BOT_SETTINGS}

    def fingerprint(self) -> tuple[Any, ...]:
        return (
            self.confirmation_code,
            self.longpoll,
            tuple((s.id, s.url, s.secret_key, s.events) for s in self.callback_servers),
            tuple(sorted(self.bot_settings.items())),
        )
