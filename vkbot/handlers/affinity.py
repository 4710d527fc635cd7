"""Which game an update's handlers can change: the ingestion pipeline applies a long-poll
batch game by game (each game's updates in their order, in transactions of their own), which
keeps a game's rows locked and read once for all of its updates (``gameplay.unit_of_work``).

:func:`games_of` answers for a whole batch with two queries at most (the senders' active
games, the topics' active games). An update gets a game only when its handlers cannot touch
any other: a board post in a topic that only that active game uses, or a private message or
button of a user seated (or in the reserve) in that active game only, unless it is a sign-up,
a withdrawal or a spectator chat request (those look for other games). Anything else gets
None: the pipeline applies it in the batch's order, after everything before it and before
everything after it.

The answer is read before the updates' transactions: should a user's games change in
between, an update may be applied in another game's turn, which only moves it within the
batch (its handlers still check everything under the game's lock).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gameplay.buttons import SIGNUP, BadPayload, decode
from gameplay.selectors import bot as sel
from vkbot import parsing

from .base import CHAT_PEER_BASE, as_dict, as_int, user_id

#: Private text commands that may act on a game other than the sender's one.
_ROAMING = frozenset({parsing.SIGNUP, parsing.RESERVE, parsing.WITHDRAW, parsing.SPECTATORS})
_BOARD = frozenset({"board_post_new", "board_post_edit", "board_post_delete"})


def _private_sender(update: dict[str, Any]) -> int | None:
    """The sender of a private message or button that stays in the sender's game, else
    None."""
    kind = update.get("type")
    obj = as_dict(update.get("object"))
    if kind == "message_new":
        message = as_dict(obj.get("message"))
        sender = user_id(message.get("from_id"))
        peer = as_int(message.get("peer_id"))
        if sender is None or peer != sender or as_int(message.get("out")) == 1:
            return None
        raw = message.get("payload")
        if raw is not None:
            try:
                return None if decode(raw).action == SIGNUP else sender
            except BadPayload:
                pass  # the text decides, as in the handlers
        cmd = parsing.parse_private(message.get("text"))
        return None if cmd.kind in _ROAMING else sender
    if kind == "message_event":
        sender = user_id(obj.get("user_id"))
        peer = as_int(obj.get("peer_id"))
        if sender is None or peer != sender or peer > CHAT_PEER_BASE:
            return None
        try:
            return None if decode(obj.get("payload")).action == SIGNUP else sender
        except BadPayload:
            return sender  # refused, to this user only
    return None


def _topic(update: dict[str, Any]) -> int | None:
    if update.get("type") not in _BOARD:
        return None
    topic = as_int(as_dict(update.get("object")).get("topic_id"))
    return topic if topic is not None and topic > 0 else None


def games_of(updates: Sequence[Any]) -> list[int | None]:
    """For each update, the one game its handlers can change, or None (see the module doc)."""
    senders: list[int | None] = []
    topics: list[int | None] = []
    for update in updates:
        ok = isinstance(update, dict)
        senders.append(_private_sender(update) if ok else None)
        topics.append(_topic(update) if ok else None)
    of_user = sel.active_games_of_users(u for u in senders if u is not None)
    of_topic = sel.active_games_of_topics(t for t in topics if t is not None)
    out: list[int | None] = []
    for sender, topic in zip(senders, topics, strict=True):
        games = (
            of_user.get(sender, set())
            if sender is not None
            else (of_topic.get(topic, set()) if topic is not None else set())
        )
        out.append(next(iter(games)) if len(games) == 1 else None)
    return out


def prefetch_seats(updates: Sequence[Any]) -> None:
    """Read the seats of the senders of these private messages and buttons at once, for the
    handlers of the transaction that applies them (``gameplay.selectors.bot``)."""
    sel.keep_seats_of_users(
        u
        for u in (_private_sender(x) if isinstance(x, dict) else None for x in updates)
        if u is not None
    )
