"""The conversations of the local VK: messages (stored, sent and edited with VK's checks) and
chats. Part of :class:`~localvk.state.LocalVK`, which holds the state used here."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .errors import VKError
from .limits import FloodControl
from .models import GROUP, Chat, ChatMember, Message, chat_peer_id, is_chat_peer, is_user_peer

#: VK lets a message be edited for 24 hours after it was sent.
EDIT_MAX_AGE = 24 * 3600


class Conversations:
    """The messages and chats of :class:`~localvk.state.LocalVK`: a mixin whose attributes
    (below) are set up by ``LocalVK.__init__``; it also uses LocalVK's ``now()`` and
    ``community_id``."""

    lock: threading.RLock
    flood: FloodControl
    allow_messages_by_default: bool
    messages: list[Message]
    _message_seq: int
    _cmid: dict[int, int]
    edit_seq: int
    _sent_by_random_id: dict[tuple[str, int, int], Message]
    allowed: dict[int, bool]
    chats: dict[int, Chat]

    if TYPE_CHECKING:  # LocalVK's

        @property
        def community_id(self) -> int: ...

        def now(self) -> int: ...

    # --- messages ------------------------------------------------------------------------

    def set_messages_allowed(self, user_id: int, allowed: bool = True) -> None:
        """Whether the user lets the community write to them (else ``messages.send`` → 901).

        A private message from the user to the community allows it again, as in VK."""
        with self.lock:
            self.allowed[user_id] = allowed

    def messages_allowed(self, user_id: int) -> bool:
        with self.lock:
            return self.allowed.get(user_id, self.allow_messages_by_default)

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
