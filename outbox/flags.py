"""ModerationFlags of kind ``delivery``: what the GM reads about messages VK refused.

One open flag per player (or per board topic) in a game collects the failures, a line each
(the newest ``MAX_FLAG_LINES``), so a player who has not allowed messages from the community
makes one flag, not one per message. Called by :mod:`outbox.outcomes` inside its transaction
(and by the services for failures they find themselves).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from gameplay.messages import render
from gameplay.models import FlagKind, FlagStatus, ModerationFlag, Outbox, OutboxChannel, Seat

from .results import create_chat_unanswered

#: An open delivery flag keeps at most this many lines (the newest).
MAX_FLAG_LINES = 40


def _what(row: Outbox) -> str:
    """What the row said, for the GM: its first line, shortened."""
    first = (row.text or "").strip().split("\n", 1)[0]
    return first if len(first) <= 60 else first[:59].rstrip() + "…"


def flag_failed_delivery(row: Outbox, why: str, recipients: Mapping[int, str]) -> None:
    """Tell the GM of the row's game: ``recipients`` maps each player VK refused to the reason
    in the GM's words; ``why`` is the reason for the row as a whole (a board post, a chat
    action, or a message none of whose recipients is listed)."""
    if row.channel == OutboxChannel.BOARD:
        line = render("gm/board_failed", id=row.pk, what=_what(row), topic=row.topic_id, why=why)
        add_flag_line(row, line, topic_id=row.topic_id)
        return
    if row.channel == OutboxChannel.CREATE_CHAT:
        title = str((row.payload or {}).get("title") or row.text)
        asked = create_chat_unanswered(row)
        name = "gm/chat_create_unknown" if asked else "gm/chat_create_failed"
        add_flag_line(row, render(name, id=row.pk, title=title, why=why))
        return
    if row.channel in (OutboxChannel.KICK, OutboxChannel.INVITE) and not recipients:
        member = (row.payload or {}).get("member_id")
        line = render("gm/chat_action_failed", id=row.pk, what=_what(row), why=why)
        add_flag_line(row, line, vk_user_id=int(member) if member else None)
        return
    reasons = dict(recipients) or {int(peer): why for peer in row.peer_ids or ()}
    for peer, reason in sorted(reasons.items()):
        line = render("gm/message_failed", id=row.pk, what=_what(row), why=reason)
        add_flag_line(row, line, vk_user_id=peer)


def add_flag_line(
    row: Outbox, line: str, *, vk_user_id: int | None = None, topic_id: int | None = None
) -> None:
    """Append to the open delivery flag of this player (or topic) in the game, or open one."""
    open_flags = ModerationFlag.objects.select_for_update().filter(
        game_id=cast(int, row.game_id), kind=FlagKind.DELIVERY, status=FlagStatus.OPEN
    )
    if vk_user_id is not None:
        open_flags = open_flags.filter(vk_user_id=vk_user_id)
    elif topic_id is not None:
        open_flags = open_flags.filter(vk_user_id__isnull=True, topic_id=topic_id)
    else:
        open_flags = open_flags.filter(vk_user_id__isnull=True, topic_id__isnull=True)
    flag = open_flags.order_by("id").first()
    if flag is not None:
        lines = [*flag.text.splitlines(), line][-MAX_FLAG_LINES:]
        flag.text = "\n".join(lines)
        flag.save(update_fields=["text"])
        return
    seat = None
    if vk_user_id is not None:
        seat = Seat.objects.filter(game_id=cast(int, row.game_id), vk_user_id=vk_user_id).first()
    ModerationFlag.objects.create(
        game_id=cast(int, row.game_id),  # a delivery flag's row is a game's
        seat=seat,
        vk_user_id=vk_user_id,
        kind=FlagKind.DELIVERY,
        text=line,
        topic_id=topic_id,
    )
