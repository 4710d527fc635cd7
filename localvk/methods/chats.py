"""Chat methods: createChat, getInviteLink, removeChatUser, getConversationMembers."""

from __future__ import annotations

import secrets
from typing import Any

from ..errors import VKError, param_error
from ..models import Chat, ChatMember, is_chat_peer
from .groups import group_object
from .registry import CallContext, check_group_id, method


def _chat(ctx: CallContext, chat_id: int) -> Chat:
    chat = ctx.state.chats.get(chat_id)
    if chat is None:
        raise VKError(927)
    return chat


def _chat_of_peer(ctx: CallContext, peer_id: int) -> Chat:
    if not is_chat_peer(peer_id):
        raise param_error("peer_id should be a chat (2000000000 + chat_id)")
    return _chat(ctx, peer_id - 2_000_000_000)


def _is_admin(chat: Chat, member_id: int) -> bool:
    member = chat.members.get(member_id)
    return member is not None and (member.is_admin or member.is_owner)


@method("messages.createChat", scope="messages")
def create_chat(ctx: CallContext) -> dict[str, Any]:
    """A chat owned by the caller; users who do not allow the community's messages are
    left out (the answer's ``peer_ids`` lists who was added)."""
    if ctx.is_group:
        check_group_id(ctx, required=False)
    user_ids = ctx.params.get_int_list("user_ids", minimum=1) or []
    title = ctx.params.get_str("title", max_length=255) or "Беседа"
    state = ctx.state
    with state.lock:
        addable = [
            uid
            for uid in dict.fromkeys(user_ids)
            if not ctx.is_group or state.messages_allowed(uid)
        ]
        chat = state.create_chat(title, addable, owner_id=ctx.sender_id)
    return {"chat_id": chat.chat_id, "peer_ids": addable}


@method("messages.getInviteLink", scope="messages")
def get_invite_link(ctx: CallContext) -> dict[str, str]:
    if ctx.is_group:
        check_group_id(ctx, required=False)
    peer_id = ctx.params.req_int("peer_id")
    reset = ctx.params.get_bool("reset")
    with ctx.state.lock:
        chat = _chat_of_peer(ctx, peer_id)
        if not _is_admin(chat, ctx.sender_id):
            raise VKError(919)
        if chat.invite_link is None or reset:
            chat.invite_link = f"https://vk.me/join/{secrets.token_urlsafe(18)}"
        return {"link": chat.invite_link}


@method("messages.removeChatUser", scope="messages")
def remove_chat_user(ctx: CallContext) -> int:
    """Remove ``user_id``/``member_id``; the chat sees a ``chat_kick_user`` service message."""
    chat_id = ctx.params.req_int("chat_id", minimum=1, maximum=100_000_000)
    member_id = ctx.params.get_int("member_id")
    if member_id is None:
        member_id = ctx.params.get_int("user_id")
    if member_id is None:
        raise param_error("user_id or member_id is undefined")
    state = ctx.state
    with state.lock:
        chat = _chat(ctx, chat_id)
        if ctx.sender_id not in chat.members:
            raise VKError(917)
        if member_id != ctx.sender_id and not _is_admin(chat, ctx.sender_id):
            raise VKError(925)
        target = chat.members.get(member_id)
        if target is None:
            raise VKError(935)
        if target.is_owner and member_id != ctx.sender_id:
            raise VKError(15, "can't remove the chat owner")
        del chat.members[member_id]
        state.deliver_incoming(
            chat.peer_id,
            ctx.sender_id,
            "",
            action={"type": "chat_kick_user", "member_id": member_id},
        )
    return 1


@method("messages.getConversationMembers", scope="messages")
def get_conversation_members(ctx: CallContext) -> dict[str, Any]:
    if ctx.is_group:
        check_group_id(ctx, required=False)
    peer_id = ctx.params.req_int("peer_id")
    state = ctx.state
    with state.lock:
        chat = _chat_of_peer(ctx, peer_id)
        if ctx.sender_id not in chat.members:
            raise VKError(917)
        members: list[ChatMember] = list(chat.members.values())
        items = [member.to_vk() for member in members]
        for item in items:
            item["can_kick"] = _is_admin(chat, ctx.sender_id) and not item.get("is_owner", False)
        profiles = [state.user(m.member_id).to_vk() for m in members if m.member_id > 0]
        groups = [group_object(ctx) for m in members if m.member_id == state.community_id]
    return {"count": len(items), "items": items, "profiles": profiles, "groups": groups}
