"""How a round's claimed Outbox rows go to VK: the calls to make, and what to record first.

Pure (no database, no network): the rows in, a :class:`Plan` out. By kind of row:
``sends`` (private and chat messages, edits), ``board`` (comments), ``chats`` (invite links,
callback answers, removals, created chats); what they share is in ``rows``.

Exactly once. Every recipient of a ``messages.send`` gets the text with a ``random_id``; VK
drops a second send with the same ``random_id`` to the same peer (the local server does the
same, per token and peer). The ``random_id`` of each row is recorded in its ``result`` before
its first send and never changes, so any re-send — after a crash, a lost answer, an expired
lease, in any chunking into ``peer_ids`` calls — is a no-op for recipients who already have it.

Merging. Rows with the same text (and keyboard) going to different players are merged into
one ``peer_ids`` send: they all record the ``random_id`` of the group's lowest row. Only rows
that have no ``random_id`` yet are merged, and the lowest row's own id cannot have been given to
anyone before (it is given only to a group it leads), so no recipient can ever get two
different texts — or the same text twice — under one ``random_id``.

Board posts waiting for the same topic are merged into one comment (up to 9000 characters;
a longer post is split into several). The comment's ``guid`` and members are recorded in each
member's ``result`` before the call, and the members are always claimed and re-sent together
(``outbox_claim``), so a repeat carries the same text under the same ``guid`` and VK returns the
comment it already has.

Created chats. ``messages.createChat`` has no ``random_id``: VK would create a second chat for a
repeat. A ``create_chat`` row records ``create_chat_asked`` before its call; a row claimed again
with the mark still set (its answer was lost: a crash, a timeout, an expired lease) is not sent
again but failed, and the GM is told the chat may exist (``outbox.flags``). ``outcome`` removes
the mark only when VK's answer says it did not act (a rate limit: the row is retried).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from gameplay.models import Outbox, OutboxChannel

from .board import plan_board
from .chats import plan_answer, plan_create_chat, plan_kick, plan_links
from .order import in_turns_of_rows, plan_order
from .rows import MESSAGE_CHANNELS, Plan, invalid
from .sends import edit_target, is_edit, is_message, plan_edit, plan_messages


def plan_round(
    rows: Sequence[Outbox],
    *,
    group_id: int | None,
    texts: Mapping[int, str] | None = None,
    held: Mapping[int, Collection[int]] | None = None,
) -> Plan:
    """Calls for the claimed rows, in turns so that each peer reads its rows in order
    (:mod:`.order`; ``held``: the recipients the claim holds back, ``Lease.held``). Board
    posts need ``group_id`` (the community's id), and ``texts`` of the members of their
    recorded comments that were not claimed (already sent or failed: the comment is re-sent
    whole; "" for a row that no longer exists)."""
    plan = Plan()
    ordered = sorted(rows, key=lambda row: row.pk)
    order, going = plan_order(ordered, plan, held or {})
    edits = [r for r in ordered if is_edit(r)]
    for row in edits:
        if edit_target(row) is None or going.get(row.pk):
            plan_edit(row, plan)
    messages = [r for r in ordered if is_message(r) and r not in edits]
    plan_messages(messages, plan, going, order.turns)
    plan_links(
        [r for r in ordered if r.channel == OutboxChannel.INVITE and not is_message(r)], plan
    )
    for row in ordered:
        if row.channel == OutboxChannel.EVENT_ANSWER:
            plan_answer(row, plan)
        elif row.channel == OutboxChannel.KICK:
            plan_kick(row, plan)
        elif row.channel == OutboxChannel.CREATE_CHAT:
            plan_create_chat(row, plan)
        elif row.channel not in (*MESSAGE_CHANNELS, OutboxChannel.BOARD):
            plan.settled.append(invalid(row, f"unknown channel {row.channel!r}"))
    plan_board(
        [r for r in ordered if r.channel == OutboxChannel.BOARD], plan, group_id, texts or {}
    )
    in_turns_of_rows(plan, order)
    return plan
