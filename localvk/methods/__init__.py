"""The VK API methods the local server implements, looked up by name."""

from __future__ import annotations

from . import account, board, chats, groups, messages, users
from .registry import METHODS, CallContext, MethodSpec, check_group_id

__all__ = [
    "METHODS",
    "account",
    "CallContext",
    "MethodSpec",
    "board",
    "chats",
    "check_group_id",
    "groups",
    "messages",
    "users",
]
