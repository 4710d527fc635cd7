"""What an Outbox row's ``payload`` and ``result`` hold: the keys the services, the delivery's
planner and its outcomes share.

``result`` keys written by :mod:`outbox.leases` and :mod:`outbox.outcomes` and read by the
worker: ``random_id``, ``sent`` (recipient → VK message id), ``failed`` (recipient → error),
``progress`` (recipient → parts delivered of a long text), ``link`` (an invite's link),
``board`` (``guid``, ``group``, ``parts``, ``done``), ``answer`` (what VK answered for the
other channels), and for ``create_chat`` ``create_chat_asked`` (the request may have reached
VK), ``chat_id``, ``peer_id``, ``added``.
"""

from __future__ import annotations

from gameplay.models import Outbox, OutboxChannel

#: Channels whose rows are messages a peer reads (a player's private chat, a chat): each peer
#: reads them in the order of their rows. A row waiting for a retry holds the later rows of
#: its peers back (``outbox.leases``), and a round sends a peer's rows in order
#: (``vkbot.delivery.order``).
PEER_CHANNELS = (OutboxChannel.MESSAGE, OutboxChannel.CHAT, OutboxChannel.INVITE)

#: A ``message`` row whose ``payload[EDIT]`` names a message the bot sent
#: (``{"peer_id", "conversation_message_id"}``: a page of buttons turned) is delivered by
#: ``messages.edit`` of that message; when VK refuses the edit (909 too old, 910 too big, 924
#: no access, …) its code is recorded in ``result[EDIT_REFUSED]`` and the row is sent as a new
#: message instead (``vkbot.delivery``).
EDIT = "edit"
EDIT_REFUSED = "edit_refused"

#: ``result`` key of a ``create_chat`` row: set before the call to VK, removed when VK's answer
#: says the chat was not created; left set when the answer was lost (the chat may exist).
CREATE_CHAT_ASKED = "create_chat_asked"


def create_chat_unanswered(row: Outbox) -> bool:
    """A ``create_chat`` row whose request may have reached VK without its answer reaching us."""
    result = row.result or {}
    return bool(result.get(CREATE_CHAT_ASKED)) and not result.get("chat_id")


def board_group(row: Outbox) -> list[int]:
    """The rows recorded as one board comment with this one (empty: not yet planned)."""
    board = (row.result or {}).get("board") or {}
    return [int(i) for i in board.get("group") or ()]


def recipients(row: Outbox) -> list[int]:
    """The row's recipients (``peer_ids``), each once, in order."""
    seen: dict[int, None] = {}
    for peer in row.peer_ids or ():
        try:
            seen[int(peer)] = None
        except (TypeError, ValueError):
            continue
    return list(seen)


def peers_left(row: Outbox) -> list[int]:
    """Recipients of a row with neither a delivery nor a final refusal recorded."""
    result = row.result or {}
    sent = result.get("sent") or {}
    failed = result.get("failed") or {}
    return [p for p in recipients(row) if str(p) not in sent and str(p) not in failed]
