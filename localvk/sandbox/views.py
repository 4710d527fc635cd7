"""What the player page shows, read from the local VK's state: pure functions, no HTTP.

Everything is what a user's phone would show: their private conversation with the community
(with the keyboards it sent), the community's board, and the chats they are a member of. The
actions (:func:`press`, :func:`join_by_link`) go through the same injection paths as the
``/_test/`` endpoints, so the bot receives them by long poll exactly as from VK.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..models import Chat, Comment, Message, is_user_peer
from ..state import LocalVK

#: Button types the page can press (the others are shown but disabled, as on a desktop).
PRESSABLE = frozenset({"text", "callback"})
#: Answers to callback buttons are shown for this long after the press (VK: one minute).
SNACKBAR_SECONDS = 60.0
#: At most this many items per answer (the page asks again with a cursor for more).
PAGE = 500
INVITE_LINK = re.compile(r"https://vk\.me/join/[\w-]+")
#: The times the page shows are Moscow's, as the game's texts say («до 21:00 МСК»), whatever
#: the clock of the browser or the server.
MOSCOW = ZoneInfo("Europe/Moscow")


def moscow_time(date: int) -> str:
    """A message's or a comment's ``date`` (Unix seconds) as the page shows it:
    «01.12 14:33 МСК»."""
    return f"{datetime.fromtimestamp(date, MOSCOW):%d.%m %H:%M} МСК"


class SandboxError(Exception):
    """A refusal the page shows to the person (Russian)."""


def user_name(state: LocalVK, user_id: int) -> str:
    if user_id == state.community_id:
        return state.group_name
    if user_id < 0:
        return f"Сообщество {-user_id}"
    user = state.user(user_id)
    return f"{user.first_name} {user.last_name}".strip()


def known_users(state: LocalVK) -> list[int]:
    """Users of the community: those the server was told about, plus everyone who wrote,
    was written to, posted in the board or sits in a chat."""
    with state.lock:
        ids = set(state.users)
        ids.update(m.peer_id for m in state.messages if is_user_peer(m.peer_id))
        ids.update(m.from_id for m in state.messages if m.from_id > 0 and not m.out)
        for topic in state.topics.values():
            ids.update(c.from_id for c in topic.comments if c.from_id > 0)
        for chat in state.chats.values():
            ids.update(uid for uid in chat.members if uid > 0)
        admins = set(state.user_tokens.values())
        return sorted(uid for uid in ids if is_user_peer(uid) and uid not in admins)


def users_list(state: LocalVK, communities: Iterable[LocalVK] = ()) -> dict[str, Any]:
    """The community's users, and every hosted community (the page's selector)."""
    with state.lock:
        hosted = list(communities) or [state]
        return {
            "group": {"id": state.group_id, "name": state.group_name},
            "communities": [{"id": c.group_id, "name": c.group_name} for c in hosted],
            "users": [
                {"id": uid, "name": user_name(state, uid), "taken_over": uid in state.taken_over}
                for uid in known_users(state)
            ],
        }


def message_view(state: LocalVK, message: Message) -> dict[str, Any]:
    """A message as the page draws it: who wrote it, its text, its buttons."""
    data: dict[str, Any] = {
        "id": message.id,
        "cmid": message.conversation_message_id,
        "peer_id": message.peer_id,
        "from_id": message.from_id,
        "from_name": user_name(state, message.from_id),
        "from_community": message.out and message.from_id == state.community_id,
        "text": message.text,
        "date": message.date,
        "time": moscow_time(message.date),
    }
    if message.payload is not None:
        data["payload"] = message.payload
    if message.keyboard is not None:
        data["keyboard"] = keyboard_view(message.keyboard)
    if message.action is not None:
        data["action"] = _action_text(state, message.action)
    links = INVITE_LINK.findall(message.text or "")
    if links:
        data["invite_links"] = links
    return data


def keyboard_view(keyboard: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for row in keyboard.get("buttons") or []:
        out_row = []
        for button in row:
            action = button.get("action") or {}
            kind = action.get("type")
            out_row.append(
                {
                    "type": kind,
                    "label": action.get("label") or _default_label(kind),
                    "color": button.get("color") or "secondary",
                    "link": action.get("link"),
                    "payload": action.get("payload"),
                    "pressable": kind in PRESSABLE,
                }
            )
        rows.append(out_row)
    return {
        "inline": bool(keyboard.get("inline")),
        "one_time": bool(keyboard.get("one_time")),
        "rows": rows,
    }


def _default_label(kind: Any) -> str:
    return {"location": "Отправить местоположение", "vkpay": "Оплатить через VK Pay"}.get(
        kind if isinstance(kind, str) else "", "Кнопка"
    )


def _action_text(state: LocalVK, action: dict[str, Any]) -> str:
    member = action.get("member_id")
    who = user_name(state, member) if isinstance(member, int) else "участник"
    return {
        "chat_invite_user": f"{who} добавлен(а) в беседу",
        "chat_invite_user_by_link": f"{who} вступил(а) в беседу по ссылке",
        "chat_kick_user": f"{who} покинул(а) беседу",
        "chat_create": "Беседа создана",
    }.get(str(action.get("type")), "Служебное сообщение")


def current_keyboard(conversation: list[Message], user_id: int) -> Message | None:
    """The message whose regular keyboard is shown under the input, as VK keeps it: the
    latest regular keyboard the community sent, until a newer one replaces it (an empty one
    hides it) or, for a ``one_time`` keyboard, until the user writes."""
    shown: Message | None = None
    for message in conversation:
        if message.out and message.keyboard is not None:
            if not message.keyboard.get("inline"):
                shown = message if message.keyboard.get("buttons") else None
        elif not message.out and message.from_id == user_id and shown is not None:
            if shown.keyboard and shown.keyboard.get("one_time"):
                shown = None
    return shown


def comment_view(state: LocalVK, comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "topic_id": comment.topic_id,
        "from_id": comment.from_id,
        "from_name": user_name(state, comment.from_id),
        "from_community": comment.from_id == state.community_id,
        "text": comment.text,
        "date": comment.date,
        "time": moscow_time(comment.date),
    }


def topics_view(state: LocalVK, after_comment: int = 0) -> list[dict[str, Any]]:
    """Every topic (newest activity first) with its visible comments newer than the cursor."""
    out: list[dict[str, Any]] = []
    for topic in state.topics.values():
        visible = topic.visible_comments()
        last = max((c.date for c in visible), default=topic.date)
        out.append(
            {
                "id": topic.id,
                "title": topic.title,
                "is_closed": topic.is_closed,
                "count": len(visible),
                "last_date": last,
                "comments": [comment_view(state, c) for c in visible if c.id > after_comment][
                    -PAGE:
                ],
            }
        )
    out.sort(key=lambda t: (-t["last_date"], -t["id"]))
    return out


def chats_of(state: LocalVK, user_id: int) -> list[Chat]:
    return [chat for chat in state.chats.values() if user_id in chat.members]


def user_view(
    state: LocalVK,
    user_id: int,
    *,
    after_message: int = 0,
    after_comment: int = 0,
    after_edit: int = 0,
) -> dict[str, Any]:
    """Everything the user's phone shows, with messages and comments newer than the cursors
    (the page polls with the last ids it has) and the messages edited since ``after_edit``
    (``messages.edit``: the page redraws them in place)."""
    with state.lock:
        conversation = state.conversation(user_id)
        keyboard = current_keyboard(conversation, user_id)
        chats = chats_of(state, user_id)
        chat_peers = {chat.peer_id for chat in chats}
        chat_messages = [
            m for m in state.messages if m.peer_id in chat_peers and m.id > after_message
        ]
        now = time.monotonic()
        snackbars = [
            {"event_id": e.event_id, "text": e.answer.get("text")}
            for e in state.callback_events.values()
            if e.user_id == user_id
            and e.answer
            and e.answer.get("type") == "show_snackbar"
            and now - e.created < SNACKBAR_SECONDS
        ]
        newer = [m for m in conversation if m.id > after_message][-PAGE:]
        return {
            "user": {
                "id": user_id,
                "name": user_name(state, user_id),
                "taken_over": user_id in state.taken_over,
            },
            "group": {"id": state.group_id, "name": state.group_name},
            "messages": [message_view(state, m) for m in newer],
            "edited": [
                message_view(state, m)
                for m in conversation
                if m.edit_seq > after_edit and m.id <= after_message
            ],
            "keyboard": None
            if keyboard is None
            else {"message_id": keyboard.id, **keyboard_view(keyboard.keyboard or {})},
            "topics": topics_view(state, after_comment),
            "chats": [
                {
                    "chat_id": chat.chat_id,
                    "peer_id": chat.peer_id,
                    "title": chat.title,
                    "members": len(chat.members),
                    "messages": [
                        message_view(state, m) for m in chat_messages if m.peer_id == chat.peer_id
                    ][-PAGE:],
                }
                for chat in chats
            ],
            "snackbars": snackbars,
            "cursor": {
                "message": max((m.id for m in state.messages), default=0),
                "comment": state.board._comment_seq,
                "edit": state.edit_seq,
            },
        }


def feed(
    state: LocalVK, *, after_message: int = 0, after_comment: int = 0, after_edit: int = 0
) -> dict[str, Any]:
    """For simulated players: every private message and every comment newer than the
    cursors, who is taken over, and the new cursors. A message edited since ``after_edit``
    (``messages.edit``: a page of buttons turned) comes again, as it reads now."""
    with state.lock:
        messages = [m for m in state.messages if m.id > after_message and is_user_peer(m.peer_id)][
            :PAGE
        ]
        comments = sorted(
            (
                c
                for t in state.topics.values()
                for c in t.visible_comments()
                if c.id > after_comment
            ),
            key=lambda c: c.id,
        )[:PAGE]
        last_message = (
            messages[-1].id
            if len(messages) == PAGE
            else max((m.id for m in state.messages), default=0)
        )
        last_comment = comments[-1].id if len(comments) == PAGE else state.board._comment_seq
        edited = [
            m
            for m in state.messages
            if m.edit_seq > after_edit and m.id <= after_message and is_user_peer(m.peer_id)
        ]
        return {
            "messages": [
                message_view(state, m) for m in sorted(edited, key=lambda m: m.edit_seq) + messages
            ],
            "comments": [comment_view(state, c) for c in comments],
            "taken_over": sorted(state.taken_over),
            "cursor": {
                "message": max(last_message, after_message),
                "comment": max(last_comment, after_comment),
                "edit": state.edit_seq,
            },
        }


# --- what a user does ------------------------------------------------------------------------


def press(state: LocalVK, user_id: int, message_id: int, row: int, column: int) -> dict[str, Any]:
    """The user presses a button of a message the community sent them, as a VK client does:
    a text button sends its label as a message with the button's payload (``message_new``);
    a callback button sends the payload without a message (``message_event``)."""
    with state.lock:
        message = next(
            (m for m in state.messages if m.id == message_id and m.peer_id == user_id), None
        )
        if message is None or not message.out or message.keyboard is None:
            raise SandboxError("Такого сообщения с кнопками нет в этом диалоге.")
        try:
            button = message.keyboard["buttons"][row][column]
        except (IndexError, KeyError, TypeError):
            raise SandboxError("Такой кнопки нет.") from None
        action = button.get("action") or {}
        kind = action.get("type")
        payload = action.get("payload")
        if kind == "text":
            update = state.inject_message(user_id, str(action.get("label") or ""), payload=payload)
            return {"sent": "message", "update": update}
        if kind == "callback":
            parsed: Any = payload
            if isinstance(payload, str):
                try:
                    parsed = json.loads(payload)
                except ValueError:
                    parsed = payload
            update = state.inject_message_event(
                user_id,
                parsed,
                peer_id=user_id,
                conversation_message_id=message.conversation_message_id,
            )
            return {"sent": "event", "event_id": update["object"]["event_id"], "update": update}
        raise SandboxError("Эту кнопку в песочнице нажать нельзя.")


def join_by_link(state: LocalVK, user_id: int, link: str) -> dict[str, Any]:
    """The user opens a chat's invite link and joins (``chat_invite_user_by_link``)."""
    with state.lock:
        chat = next((c for c in state.chats.values() if c.invite_link == link), None)
        if chat is None:
            raise SandboxError("Ссылка недействительна: беседа не найдена или ссылка сброшена.")
        if user_id in chat.members:
            raise SandboxError("Вы уже в этой беседе.")
        update = state.inject_chat_join(chat.chat_id, user_id, by_link=True)
        return {"chat_id": chat.chat_id, "update": update}


def leave_chat(state: LocalVK, user_id: int, chat_id: int) -> dict[str, Any]:
    with state.lock:
        chat = state.chats.get(chat_id)
        if chat is None or user_id not in chat.members:
            raise SandboxError("Вы не состоите в этой беседе.")
        return {"update": state.inject_chat_leave(chat_id, user_id)}


def write_to_chat(state: LocalVK, user_id: int, chat_id: int, text: str) -> dict[str, Any]:
    with state.lock:
        chat = state.chats.get(chat_id)
        if chat is None or user_id not in chat.members:
            raise SandboxError("Вы не состоите в этой беседе.")
        return {"update": state.inject_message(user_id, text, peer_id=chat.peer_id)}


def post_comment(state: LocalVK, user_id: int, topic_id: int, text: str) -> dict[str, Any]:
    with state.lock:
        topic = state.topics.get(topic_id)
        if topic is None:
            raise SandboxError("Такой темы нет.")
        if topic.is_closed:
            raise SandboxError("Тема закрыта.")
        return {"update": state.inject_board_post(user_id, topic_id, text)}
