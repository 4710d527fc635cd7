"""``LocalVK``: everything the local VK server knows, plus the in-process control API.

One instance is one community (group id + community token) with one or more community-admin
user tokens. The aiohttp app (:mod:`localvk.app`) serves it over HTTP; tests can also
drive it directly: inject what users do, flip settings, and inspect what the bot did.
All mutations take ``self.lock``, so a server running in another thread is safe to drive.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from .boardstore import Board
from .callback import CallbackPusher
from .errors import VKError
from .faults import FaultInjector
from .limits import FloodControl, TokenRateLimits
from .longpoll import LongPollQueue
from .models import (
    CallbackEvent,
    Chat,
    ChatMember,
    Message,
    Topic,
    User,
    chat_peer_id,
    is_chat_peer,
    is_user_peer,
    payload_text,
)
from .names import generated_name
from .recording import CallLog, CallRecord

GROUP = "group"
USER = "user"
#: VK lets a message be edited for 24 hours after it was sent.
EDIT_MAX_AGE = 24 * 3600

DEFAULT_CLIENT_INFO: dict[str, Any] = {
    "button_actions": [
        "text", "vkpay", "open_app", "location", "open_link", "callback",
        "intent_subscribe", "intent_unsubscribe",
    ],
    "keyboard": True,
    "inline_keyboard": True,
    "carousel": True,
    "lang_id": 0,
}  # fmt: skip


class LocalVK:
    """State of the local VK: one community, its tokens, and what happened so far."""

    def __init__(
        self,
        *,
        group_id: int = 1,
        group_token: str = "group-token",
        user_tokens: Mapping[str, int] | Iterable[str] = ("user-token",),
        admin_user_id: int = 100,
        group_name: str = "Мафия (локальный VK)",
        screen_name: str | None = None,
        allow_messages_by_default: bool = True,
        group_rps: int = 20,
        user_rps: int = 3,
        flood_per_hour: int = 1000,
        history_size: int = 10_000,
        echo_own_board_posts: bool = True,
        base_url: str = "http://127.0.0.1:8081",
    ) -> None:
        if group_id < 1:
            raise ValueError("group_id must be positive")
        self.group_id = group_id
        self.group_token = group_token
        if isinstance(user_tokens, Mapping):
            self.user_tokens = {str(t): int(uid) for t, uid in user_tokens.items()}
        else:
            self.user_tokens = {str(t): admin_user_id + i for i, t in enumerate(user_tokens)}
        if group_token in self.user_tokens:
            raise ValueError("the community token must differ from the user tokens")
        self.group_name = group_name
        self.screen_name = screen_name or f"club{group_id}"
        self.allow_messages_by_default = allow_messages_by_default
        self.base_url = base_url.rstrip("/")
        self.lock = threading.RLock()
        self.limits = TokenRateLimits({GROUP: group_rps, USER: user_rps})
        self.flood = FloodControl(flood_per_hour)
        self.faults = FaultInjector()
        self.log = CallLog()
        self.longpoll = LongPollQueue(group_id, history_size=history_size, lock=self.lock)
        #: The Callback API: pushes every event to the configured server (none by default).
        self.callbacks = CallbackPusher(group_id, self.faults, self.lock)
        self.longpoll.add_listener(self.callbacks.submit)
        self.board = Board(
            self.community_id, self.longpoll, self.lock, echo_own_posts=echo_own_board_posts
        )
        self.users: dict[int, User] = {}
        self._reset_content()

    def _reset_content(self) -> None:
        self.messages: list[Message] = []
        self._message_seq = 0
        self._cmid: dict[int, int] = {}
        self.edit_seq = 0
        self._sent_by_random_id: dict[tuple[str, int, int], Message] = {}
        self.allowed: dict[int, bool] = {}
        self.chats: dict[int, Chat] = {}
        self.board.clear()
        self.callback_events: dict[str, CallbackEvent] = {}
        #: Users a person plays on the player page (localvk.sandbox): simulated
        #: players leave them alone.
        self.taken_over: set[int] = set()

    # --- configuration -------------------------------------------------------------------

    @property
    def community_id(self) -> int:
        """The community as a sender or chat member: ``-group_id``."""
        return -self.group_id

    def token_identity(self, token: str | None) -> tuple[str, int | None] | None:
        """(kind, user id) of a token: ("group", None), ("user", id), or None if unknown."""
        if token is None:
            return None
        if secrets.compare_digest(token.encode(), self.group_token.encode()):
            return GROUP, None
        user_id = self.user_tokens.get(token)
        return (USER, user_id) if user_id is not None else None

    def add_user(self, user_id: int, first_name: str, last_name: str, sex: int = 0) -> User:
        with self.lock:
            user = User(user_id, first_name, last_name, sex)
            self.users[user_id] = user
            return user

    def user(self, user_id: int) -> User:
        """A known user, or one with a generated (deterministic) Russian name."""
        with self.lock:
            known = self.users.get(user_id)
            if known is not None:
                return known
        first, last, sex = generated_name(user_id)
        return User(user_id, first, last, sex)

    def set_taken_over(self, user_id: int, taken: bool = True) -> None:
        """Mark a user as played by a person (simulated players then leave them alone)."""
        with self.lock:
            if taken:
                self.taken_over.add(user_id)
            else:
                self.taken_over.discard(user_id)

    def set_messages_allowed(self, user_id: int, allowed: bool = True) -> None:
        """Whether the user lets the community write to them (else ``messages.send`` → 901).

        A private message from the user to the community allows it again, as in VK."""
        with self.lock:
            self.allowed[user_id] = allowed

    def messages_allowed(self, user_id: int) -> bool:
        with self.lock:
            return self.allowed.get(user_id, self.allow_messages_by_default)

    def now(self) -> int:
        return int(time.time())

    # --- messages ------------------------------------------------------------------------

    def store_message(
        self,
        *,
        peer_id: int,
        from_id: int,
        text: str,
        out: bool,
        random_id: int = 0,
        keyboard: dict[str, Any] | None = None,
        payload: str | None = None,
        action: dict[str, Any] | None = None,
        attachment: str | None = None,
        token_kind: str | None = None,
    ) -> Message:
        with self.lock:
            self._message_seq += 1
            cmid = self._cmid.get(peer_id, 0) + 1
            self._cmid[peer_id] = cmid
            message = Message(
                id=self._message_seq,
                peer_id=peer_id,
                from_id=from_id,
                text=text,
                date=self.now(),
                conversation_message_id=cmid,
                out=out,
                random_id=random_id,
                keyboard=keyboard,
                payload=payload,
                action=action,
                attachment=attachment,
                token_kind=token_kind,
            )
            self.messages.append(message)
            return message

    def send_message(
        self,
        *,
        token: str,
        token_kind: str,
        sender_id: int,
        peer_id: int,
        text: str,
        random_id: int,
        keyboard: dict[str, Any] | None = None,
        payload: str | None = None,
        attachment: str | None = None,
    ) -> Message:
        """``messages.send`` to one peer, with VK's checks; a repeated random_id is a no-op."""
        with self.lock:
            if random_id:
                previous = self._sent_by_random_id.get((token, peer_id, random_id))
                if previous is not None:
                    return previous
            self._check_can_write(token_kind, sender_id, peer_id)
            if not self.flood.allows(sender_id, peer_id):
                raise VKError(9)
            self.flood.count(sender_id, peer_id)
            message = self.store_message(
                peer_id=peer_id,
                from_id=sender_id,
                text=text,
                out=True,
                random_id=random_id,
                keyboard=keyboard,
                payload=payload,
                attachment=attachment,
                token_kind=token_kind,
            )
            if random_id:
                self._sent_by_random_id[(token, peer_id, random_id)] = message
            return message

    def edit_message(
        self,
        *,
        token_kind: str,
        sender_id: int,
        peer_id: int,
        text: str,
        conversation_message_id: int | None = None,
        message_id: int | None = None,
        keyboard: dict[str, Any] | None = None,
    ) -> Message:
        """``messages.edit`` of a message the sender wrote in ``peer_id`` (by its
        ``conversation_message_id`` or ``message_id``), with VK's refusals: 924 for a message
        that is not the sender's to edit, 909 for one older than :data:`EDIT_MAX_AGE`."""
        with self.lock:
            message = next(
                (
                    m
                    for m in self.messages
                    if m.peer_id == peer_id
                    and (
                        m.conversation_message_id == conversation_message_id
                        if conversation_message_id is not None
                        else m.id == message_id
                    )
                ),
                None,
            )
            if message is None:
                raise VKError(100, "message not found")
            if not message.out or message.from_id != sender_id:
                raise VKError(924)
            self._check_can_write(token_kind, sender_id, peer_id)
            now = self.now()
            if now - message.date > EDIT_MAX_AGE:
                raise VKError(909)
            # An edit takes a number from the message sequence: "changed after message N"
            # reads the same for new and edited messages (the page and the feed poll by it).
            self._message_seq += 1
            self.edit_seq = self._message_seq
            message.history.append({"text": message.text, "keyboard": message.keyboard})
            message.text = text
            message.keyboard = keyboard
            message.update_time = now
            message.edit_seq = self.edit_seq
            return message

    def _check_can_write(self, token_kind: str, sender_id: int, peer_id: int) -> None:
        if is_chat_peer(peer_id):
            chat = self.chats.get(peer_id - chat_peer_id(0))
            if chat is None or sender_id not in chat.members:
                raise VKError(917)
        elif is_user_peer(peer_id):
            if token_kind == GROUP and not self.messages_allowed(peer_id):
                raise VKError(901)
        elif peer_id < 0:
            raise VKError(932)
        else:
            raise VKError(100, "peer_id is invalid")

    def sent_messages(self, peer_id: int | None = None) -> list[Message]:
        """Messages sent through the API (by the community or a user token), oldest first."""
        with self.lock:
            return [m for m in self.messages if m.out and peer_id in (None, m.peer_id)]

    def conversation(self, peer_id: int) -> list[Message]:
        """Every message in one conversation, both directions, oldest first."""
        with self.lock:
            return [m for m in self.messages if m.peer_id == peer_id]

    # --- incoming events, as users make them ---------------------------------------------

    def inject_message(
        self,
        from_id: int,
        text: str = "",
        *,
        peer_id: int | None = None,
        payload: Any = None,
        client_info: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A user writes (privately, or in a chat with ``peer_id``): a ``message_new`` update."""
        if from_id <= 0:
            raise ValueError("from_id must be a user id")
        target = from_id if peer_id is None else peer_id
        with self.lock:
            if is_chat_peer(target):
                chat = self.chat_by_peer(target)
                if from_id not in chat.members:
                    raise ValueError(f"user {from_id} is not in chat {chat.chat_id}")
            elif target != from_id:
                raise ValueError("a private message goes to the community: omit peer_id")
            else:
                self.allowed[from_id] = True  # writing to a community lets it answer
            return self.deliver_incoming(
                target, from_id, text, payload=payload_text(payload), client_info=client_info
            )

    def deliver_incoming(
        self,
        peer_id: int,
        from_id: int,
        text: str,
        *,
        payload: str | None = None,
        action: dict[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        message = self.store_message(
            peer_id=peer_id, from_id=from_id, text=text, out=False, payload=payload, action=action
        )
        info = dict(client_info) if client_info is not None else dict(DEFAULT_CLIENT_INFO)
        return self.longpoll.publish(
            "message_new", {"message": message.to_vk(), "client_info": info}
        )

    def inject_message_event(
        self,
        user_id: int,
        payload: Any = None,
        *,
        peer_id: int | None = None,
        conversation_message_id: int | None = None,
    ) -> dict[str, Any]:
        """A user presses a callback button: a ``message_event`` update."""
        event_id = secrets.token_hex(6)
        event = CallbackEvent(
            event_id=event_id,
            user_id=user_id,
            peer_id=peer_id if peer_id is not None else user_id,
            payload=payload,
            created=time.monotonic(),
            conversation_message_id=conversation_message_id,
        )
        obj: dict[str, Any] = {
            "user_id": event.user_id,
            "peer_id": event.peer_id,
            "event_id": event_id,
            "payload": payload,
        }
        if conversation_message_id is not None:
            obj["conversation_message_id"] = conversation_message_id
        with self.lock:
            self.callback_events[event_id] = event
            return self.longpoll.publish("message_event", obj)

    def inject_chat_join(
        self, chat_id: int, user_id: int, *, by_link: bool = True, invited_by: int | None = None
    ) -> dict[str, Any]:
        """A user joins a chat (by its invite link, or invited by ``invited_by``)."""
        with self.lock:
            chat = self.chat(chat_id)
            inviter = user_id if by_link else (invited_by or chat.owner_id)
            chat.members[user_id] = ChatMember(user_id, invited_by=inviter, join_date=self.now())
            kind = "chat_invite_user_by_link" if by_link else "chat_invite_user"
            return self.deliver_incoming(
                chat.peer_id, inviter, "", action={"type": kind, "member_id": user_id}
            )

    def inject_chat_leave(
        self, chat_id: int, user_id: int, *, kicked_by: int | None = None
    ) -> dict[str, Any]:
        """A user leaves a chat (or a chat admin user ``kicked_by`` removes them)."""
        with self.lock:
            chat = self.chat(chat_id)
            if chat.members.pop(user_id, None) is None:
                raise ValueError(f"user {user_id} is not in chat {chat_id}")
            actor = kicked_by if kicked_by is not None else user_id
            return self.deliver_incoming(
                chat.peer_id, actor, "", action={"type": "chat_kick_user", "member_id": user_id}
            )

    def inject_board_post(self, from_id: int, topic_id: int, text: str) -> dict[str, Any]:
        """A user posts in a board topic: a ``board_post_new`` update with a new comment id."""
        return self.board.user_posts(from_id, topic_id, text)

    def inject_board_post_edit(self, topic_id: int, comment_id: int, text: str) -> dict[str, Any]:
        """A user edits their comment: ``board_post_edit``."""
        return self.board.user_edits(topic_id, comment_id, text)

    def inject_board_post_delete(self, topic_id: int, comment_id: int) -> dict[str, Any]:
        """A comment is deleted on the site: ``board_post_delete``."""
        return self.board.user_deletes(topic_id, comment_id)

    # --- chats ---------------------------------------------------------------------------

    def create_chat(
        self, title: str, member_ids: Iterable[int] = (), *, owner_id: int | None = None
    ) -> Chat:
        """A chat owned by the community (or a user) with the given users in it."""
        with self.lock:
            owner = self.community_id if owner_id is None else owner_id
            chat_id = len(self.chats) + 1
            chat = Chat(chat_id=chat_id, title=title, owner_id=owner)
            chat.members[owner] = ChatMember(
                owner, invited_by=owner, join_date=self.now(), is_admin=True, is_owner=True
            )
            for member in member_ids:
                if member not in chat.members:
                    chat.members[member] = ChatMember(
                        member, invited_by=owner, join_date=self.now()
                    )
            self.chats[chat_id] = chat
            return chat

    def chat(self, chat_id: int) -> Chat:
        with self.lock:
            chat = self.chats.get(chat_id)
            if chat is None:
                raise ValueError(f"no chat {chat_id}")
            return chat

    def chat_by_peer(self, peer_id: int) -> Chat:
        return self.chat(peer_id - chat_peer_id(0))

    # --- board ---------------------------------------------------------------------------

    @property
    def topics(self) -> dict[int, Topic]:
        return self.board.topics

    def create_topic(self, title: str, text: str = "", *, from_id: int | None = None) -> Topic:
        """A board topic; its first comment (``text``, if any) is by ``from_id`` (the community)."""
        return self.board.create_topic(title, text, from_id=from_id)

    def topic(self, topic_id: int) -> Topic:
        return self.board.topic(topic_id)

    # --- inspection and control ----------------------------------------------------------

    def calls(
        self,
        method: str | None = None,
        *,
        token_kind: str | None = None,
        since: int = 0,
        include_inner: bool = True,
    ) -> list[CallRecord]:
        with self.lock:
            return self.log.find(
                method, token_kind=token_kind, since=since, include_inner=include_inner
            )

    def max_requests_per_second(self, token_kind: str | None = None) -> int:
        """Most requests (with ``token_kind`` "group"/"user", or all) in any 1-second window."""
        with self.lock:
            return self.log.max_per_second(token_kind)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            stats = self.log.stats()
            stats["faults_injected"] = dict(self.faults.injected)
            stats["messages_sent"] = len(self.sent_messages())
            stats["longpoll_ts"] = self.longpoll.ts
            stats["callback"] = self.callbacks.stats()
            return stats

    def expire_longpoll_keys(self) -> None:
        self.longpoll.expire_keys()

    def drop_longpoll_history(self) -> None:
        self.longpoll.drop_history()

    def reset(self) -> None:
        """Forget content, calls, limits and faults; keep tokens, users, the long-poll
        numbering and keys, and the Callback API server (its records are forgotten), so a bot
        that is polling or serving callbacks goes on undisturbed."""
        with self.lock:
            self._reset_content()
            self.callbacks.reset()
            self.log.clear()
            self.limits.reset()
            self.flood.reset()
            self.faults.clear()
            self.longpoll.clear()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "group_id": self.group_id,
                "group_name": self.group_name,
                "user_tokens": len(self.user_tokens),
                "messages": [m.to_dict() for m in self.messages],
                "chats": [c.to_dict() for c in self.chats.values()],
                "topics": [t.to_dict() for t in self.topics.values()],
                "allowed": {str(uid): ok for uid, ok in self.allowed.items()},
                "longpoll": {"ts": self.longpoll.ts, "events": len(self.longpoll.events())},
                "faults": self.faults.config.to_dict(),
            }
