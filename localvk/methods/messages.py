"""messages.send, messages.edit, messages.sendMessageEventAnswer and
messages.isMessagesFromGroupAllowed."""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import VKError, param_error
from ..keyboard import validate_keyboard
from ..models import chat_peer_id
from ..params import INT32_MAX, INT32_MIN
from .registry import CallContext, check_group_id, method

MAX_MESSAGE_LENGTH = 9000
MAX_PEER_IDS = 100
MAX_PAYLOAD_LENGTH = 1000
EVENT_ANSWER_TIMEOUT = 60.0
SNACKBAR_MAX_TEXT = 90


def _single_peer(ctx: CallContext) -> int | None:
    params = ctx.params
    peer_id = params.get_int("peer_id")
    if peer_id is not None:
        return peer_id
    user_id = params.get_int("user_id", minimum=1)
    if user_id is not None:
        return user_id
    chat_id = params.get_int("chat_id", minimum=1, maximum=100_000_000)
    if chat_id is not None:
        return chat_peer_id(chat_id)
    if params.has("domain"):
        raise param_error("domain is not supported by the local VK; use peer_id")
    return None


@method("messages.send", scope="messages")
def messages_send(ctx: CallContext) -> Any:
    """Send to ``peer_id`` (answer: message id) or ``peer_ids`` (answer: one item per peer)."""
    params = ctx.params
    if ctx.is_group:
        check_group_id(ctx, required=False)
    peer_ids = params.get_int_list("peer_ids")
    if peer_ids is not None and len(peer_ids) > MAX_PEER_IDS:
        raise param_error(f"peer_ids is too long, max {MAX_PEER_IDS} recipients")
    single = _single_peer(ctx) if peer_ids is None else None
    if peer_ids is None and single is None:
        raise param_error("peer_id is undefined")
    random_id = params.get_int("random_id", minimum=INT32_MIN, maximum=INT32_MAX)
    if random_id is None:
        raise param_error("random_id is a required parameter")
    text = params.get_str("message") or ""
    if len(text) > MAX_MESSAGE_LENGTH:
        raise VKError(914)
    attachment = params.get_str("attachment", max_length=MAX_MESSAGE_LENGTH)
    sticker_id = params.get_int("sticker_id", minimum=0)
    if not text.strip() and not attachment and sticker_id is None:
        raise param_error("message is empty or invalid")
    raw_keyboard = params.get_str("keyboard")
    keyboard = validate_keyboard(raw_keyboard) if raw_keyboard is not None else None
    payload = params.get_str("payload", max_length=MAX_PAYLOAD_LENGTH)
    state = ctx.state

    def send_to(peer_id: int) -> Any:
        return state.send_message(
            token=ctx.token,
            token_kind=ctx.token_kind,
            sender_id=ctx.sender_id,
            peer_id=peer_id,
            text=text,
            random_id=random_id,
            keyboard=keyboard,
            payload=payload,
            attachment=attachment,
        )

    if peer_ids is None:
        assert single is not None
        return send_to(single).id
    results: list[dict[str, Any]] = []
    for peer_id in peer_ids:
        try:
            message = send_to(peer_id)
        except VKError as exc:
            results.append(
                {
                    "peer_id": peer_id,
                    "message_id": 0,
                    "conversation_message_id": 0,
                    "error": {"code": exc.code, "description": exc.message},
                }
            )
        else:
            results.append(
                {
                    "peer_id": peer_id,
                    "message_id": message.id,
                    "conversation_message_id": message.conversation_message_id,
                }
            )
    return results


def _edited_cmid(ctx: CallContext) -> int | None:
    """The message's number in the conversation: ``cmid`` in VK's method schema for 5.199
    (``VKCOM/vk-api-schema`` renamed it from ``conversation_message_id`` in "JSON-schema for
    public 5.199", 2023-03-02); dev.vk.com and clients such as vkbottle's ``MessageEvent.
    edit_message`` still send ``conversation_message_id``, so both are read. Both at once must
    agree."""
    params = ctx.params
    cmid = params.get_int("cmid", minimum=1)
    legacy = params.get_int("conversation_message_id", minimum=1)
    if cmid is not None and legacy is not None and cmid != legacy:
        raise param_error("cmid and conversation_message_id differ")
    return cmid if cmid is not None else legacy


@method("messages.edit", scope="messages")
def messages_edit(ctx: CallContext) -> int:
    """Edit a message the sender wrote in ``peer_id``, named by ``cmid`` (or its older name
    ``conversation_message_id``, or by ``message_id``): its text and keyboard are replaced (no
    keyboard: none). Answer: 1. Refused as VK does: 910 for a text over 9000 characters, 909
    for a message over a day old, 924 for someone else's message."""
    params = ctx.params
    if ctx.is_group:
        check_group_id(ctx, required=False)
    peer_id = params.req_int("peer_id")
    cmid = _edited_cmid(ctx)
    message_id = params.get_int("message_id", minimum=1)
    if cmid is None and message_id is None:
        raise param_error("message_id or cmid is undefined")
    text = params.get_str("message") or ""
    if len(text) > MAX_MESSAGE_LENGTH:
        raise VKError(910)
    if not text.strip():
        raise param_error("message is empty or invalid")
    raw_keyboard = params.get_str("keyboard")
    keyboard = validate_keyboard(raw_keyboard) if raw_keyboard is not None else None
    ctx.state.edit_message(
        token_kind=ctx.token_kind,
        sender_id=ctx.sender_id,
        peer_id=peer_id,
        text=text,
        conversation_message_id=cmid,
        message_id=None if cmid is not None else message_id,
        keyboard=keyboard,
    )
    return 1


@method("messages.sendMessageEventAnswer", scope="messages")
def send_message_event_answer(ctx: CallContext) -> int:
    """Answer a callback-button press; only once, within a minute, to the user who pressed."""
    params = ctx.params
    event_id = params.req_str("event_id")
    user_id = params.req_int("user_id")
    peer_id = params.req_int("peer_id")
    raw_data = params.get_str("event_data", max_length=1000)
    event_data: dict[str, Any] | None = None
    if raw_data is not None:
        event_data = _parse_event_data(raw_data)
    state = ctx.state
    with state.lock:
        event = state.callback_events.get(event_id)
        if event is None or event.user_id != user_id or event.peer_id != peer_id:
            raise param_error("event_id is invalid")
        if event.answer is not None:
            raise param_error("event_id is already answered")
        if time.monotonic() - event.created > EVENT_ANSWER_TIMEOUT:
            raise param_error("event_id is expired")
        event.answer = event_data or {}
    return 1


def _parse_event_data(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise param_error("event_data is not a valid JSON") from None
    if not isinstance(data, dict):
        raise param_error("event_data should be an object")
    kind = data.get("type")
    if kind == "show_snackbar":
        text = data.get("text")
        if not isinstance(text, str) or not text or len(text) > SNACKBAR_MAX_TEXT:
            raise param_error(f"event_data.text should be 1..{SNACKBAR_MAX_TEXT} characters")
    elif kind == "open_link":
        if not isinstance(data.get("link"), str):
            raise param_error("event_data.link is undefined")
    elif kind == "open_app":
        if not isinstance(data.get("app_id"), int):
            raise param_error("event_data.app_id is undefined")
    else:
        raise param_error("event_data.type should be show_snackbar, open_link or open_app")
    return data


@method("messages.isMessagesFromGroupAllowed", scope="messages")
def is_messages_from_group_allowed(ctx: CallContext) -> dict[str, int]:
    check_group_id(ctx, required=True)
    user_id = ctx.params.req_int("user_id", minimum=1)
    return {"is_allowed": 1 if ctx.state.messages_allowed(user_id) else 0}
