"""The bot's handlers: one raw VK update in, game changes and Outbox rows out.

``dispatch(update)`` is called by the ingestion pipeline (vkbot/pipeline.py) inside the
transaction that records the update's ``event_id``, so an update is applied once. It is
synchronous, never talks to VK (every reply is an Outbox row the delivery sends) and never
raises for bad input of any kind — an unknown type, a forged payload, missing fields, any
text: bad input gets a refusal (when there is someone to tell) and changes nothing. Only a bug
raises.

Routing: one table, ``routes`` (the update's type; a private text command's kind; a pressed
button's action; a command in a game's topic).

Optionally the pipeline can ask VK for users' names and the «may the community write to
them» check before opening its transaction: ``facts_needed(update)`` says for whom, and the
answers go to ``dispatch(update, facts=VkFacts(...))``.
"""

from __future__ import annotations

import logging
from typing import Any

from gameplay.buttons import SIGNUP, BadPayload, decode
from vkbot import parsing

from . import routes
from .affinity import games_of, prefetch_seats
from .base import FactsRequest, VkFacts, as_dict, as_int, user_id

__all__ = ["FactsRequest", "VkFacts", "dispatch", "facts_needed", "games_of", "prefetch_seats"]

logger = logging.getLogger(__name__)


def dispatch(update: dict[str, Any], facts: VkFacts | None = None) -> None:
    """Apply one raw VK update (see the module doc)."""
    if not isinstance(update, dict):
        logger.warning("Ignored a VK update that is not an object (%s)", type(update).__name__)
        return
    kind = update.get("type")
    handler = routes.UPDATES.get(kind) if isinstance(kind, str) else None
    if handler is None:
        logger.debug("No handler for VK update type %.60r", kind)
        return
    handler(as_dict(update.get("object")), facts or VkFacts())


def facts_needed(update: Any) -> FactsRequest:
    """Which users' names and «may we write to them» the handlers would use for this update
    (only sign-ups need them). Pure: no database, no VK."""
    if not isinstance(update, dict):
        return FactsRequest()
    obj = as_dict(update.get("object"))
    kind = update.get("type")
    if kind == "message_new":
        message = as_dict(obj.get("message"))
        sender = user_id(message.get("from_id"))
        if sender is None or as_int(message.get("peer_id")) != sender:
            return FactsRequest()
        try:
            if decode(message.get("payload")).action == SIGNUP:
                return FactsRequest(names=frozenset({sender}))
        except BadPayload:
            pass
        cmd: parsing.Command | None  # a board post may have none
        cmd = parsing.parse_private(message.get("text"))
        if cmd.kind in (parsing.SIGNUP, parsing.RESERVE):
            return FactsRequest(names=frozenset({sender}))
    elif kind == "message_event":
        sender = user_id(obj.get("user_id"))
        try:
            if sender is not None and decode(obj.get("payload")).action == SIGNUP:
                return FactsRequest(names=frozenset({sender}))
        except BadPayload:
            pass
    elif kind == "board_post_new":
        sender = user_id(obj.get("from_id"))
        cmd = parsing.parse_board(obj.get("text"))
        if sender is not None and cmd is not None and cmd.kind in (parsing.SIGNUP, parsing.RESERVE):
            return FactsRequest(names=frozenset({sender}), pm_allowed=frozenset({sender}))
    return FactsRequest()
