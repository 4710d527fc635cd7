"""What the local VK's users do — write, press a callback button, join and leave chats, post
on the board — as the long-poll updates VK would send. Part of :class:`~localvk.state.LocalVK`."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .boardstore import Board
from .longpoll import LongPollQueue
from .models import CallbackEvent, Chat, ChatMember, Message, is_chat_peer, payload_text

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


class Incoming:
    """The users' side of :class:`~localvk.state.LocalVK`: a mixin whose attributes (below)
    are set up by ``LocalVK.__init__``; it also uses LocalVK's ``now()``, ``store_message()``,
    ``chat()`` and ``chat_by_peer()``."""

    lock: threading.RLock
    longpoll: LongPollQueue
    board: Board
    allowed: dict[int, bool]
    callback_events: dict[str, CallbackEvent]

    if TYPE_CHECKING:  # LocalVK's
        store_message: Callable[..., Message]

        def now(self) -> int: ...

        def chat(self, chat_id: int) -> Chat: ...

        def chat_by_peer(self, peer_id: int) -> Chat: ...

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
