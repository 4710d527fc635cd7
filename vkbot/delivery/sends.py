"""Private and chat messages: ``messages.send`` to up to 100 peers under one ``random_id``
(rows with the same text and keyboard merged; long texts in pieces), and ``messages.edit`` of
a page of buttons turned. The keyboard a row stores is rendered for VK here
(:mod:`vkbot.keyboards`). Pure."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any, cast

from gameplay.models import Outbox, OutboxChannel
from outbox.ids import outbox_random_id
from outbox.outcomes import Settlement
from outbox.results import EDIT, EDIT_REFUSED
from vkbot import keyboards

from .batch import Call
from .rows import (
    MAX_MESSAGE_LENGTH,
    MAX_PEERS,
    Plan,
    finished,
    fresh_result,
    message_text,
    part_random_id,
    recipients,
    remaining,
    split_text,
)


def _keyboard(row: Outbox) -> str | None:
    """The row's keyboard as VK's ``keyboard`` parameter (rendered: ``vkbot.keyboards``)."""
    board = keyboards.of_row(row.keyboard)
    if board is None:
        return None
    return json.dumps(board, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def is_message(row: Outbox) -> bool:
    """A ``messages.send`` of ``text``: message and chat rows, and invites once linked."""
    if row.channel == OutboxChannel.INVITE:
        return bool((row.result or {}).get("link"))
    return row.channel in (OutboxChannel.MESSAGE, OutboxChannel.CHAT)


def is_edit(row: Outbox) -> bool:
    """A message row to deliver by ``messages.edit`` (VK has not refused the edit yet)."""
    return (
        row.channel == OutboxChannel.MESSAGE
        and isinstance(row.payload, dict)
        and isinstance(row.payload.get(EDIT), dict)
        and EDIT_REFUSED not in (row.result or {})
    )


def edit_target(row: Outbox) -> tuple[int, int] | None:
    """The peer and the message an edit row changes; None when VK cannot take the row as an
    edit (not one peer, a text over one message)."""
    target = cast("dict[str, Any]", row.payload)[EDIT]  # an edit row's payload
    try:
        peer, message = int(target["peer_id"]), int(target["conversation_message_id"])
    except (KeyError, TypeError, ValueError):
        return None
    if recipients(row) != [peer] or len(row.text) > MAX_MESSAGE_LENGTH or message <= 0:
        return None
    return peer, message


def plan_edit(row: Outbox, plan: Plan) -> None:
    """A page of buttons turned: the message it replaces is edited. A row VK can no longer
    take as an edit (not one peer, a text over one message) is sent as a new message."""
    target = edit_target(row)
    if target is None:
        result = dict(row.result or {})
        result[EDIT_REFUSED] = "not an edit"
        plan.results[row.pk] = result
        plan.settled.append(Settlement(row.pk, "again", result=result))
        return
    peer, message = target
    # VK's method schema for 5.199 names the message ``cmid``, dev.vk.com (and older clients)
    # ``conversation_message_id``; VK takes either, and both when they agree (docs/vk.md).
    params: dict[str, Any] = {
        "peer_id": peer,
        "cmid": message,
        "conversation_message_id": message,
        "message": row.text,
    }
    keyboard = _keyboard(row)
    if keyboard is not None:
        params["keyboard"] = keyboard
    plan.calls.append(
        Call(
            token="group",
            method="messages.edit",
            params=params,
            kind="edit",
            row_ids=(row.pk,),
            targets=((row.pk, peer),),
        )
    )


def plan_messages(
    rows: list[Outbox],
    plan: Plan,
    going: Mapping[int, Collection[int]] | None = None,
    turns: Mapping[int, int] | None = None,
) -> None:
    """Sends of ``rows`` to their recipients left (of those in ``going``, when given: the
    others wait for an earlier row). Rows of different ``turns`` never share a send, so that
    a call's turn is its rows' (:mod:`.order`)."""
    turns = turns or {}
    live: list[tuple[Outbox, dict[str, Any], list[int], list[str]]] = []
    for row in rows:
        result = fresh_result(row, plan)
        left = remaining(row, result)
        if not left:
            plan.settled.append(finished(row, result))
            continue
        if going is not None:
            now = going.get(row.pk, ())
            left = [peer for peer in left if peer in now]
            if not left:
                continue
        live.append((row, result, left, split_text(message_text(row), MAX_MESSAGE_LENGTH)))
    _pin_random_ids(live, plan, turns)
    buckets: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    bucket_info: dict[tuple[Any, ...], tuple[Outbox, int, int, str]] = {}
    for row, result, left, parts in live:
        base = int(result["random_id"])
        progress = result.get("progress") or {}
        keyboard = _keyboard(row)
        for peer in left:
            part = min(int(progress.get(str(peer), 0)), len(parts) - 1)
            last = part == len(parts) - 1
            key = (
                turns.get(row.pk, 0),
                row.channel,
                parts[part],
                keyboard if last else None,
                part_random_id(base, part),
                part,
                len(parts),
            )
            buckets.setdefault(key, []).append((row.pk, peer))
            bucket_info.setdefault(key, (row, part, len(parts), parts[part]))
    for key, targets in buckets.items():
        row, part, count, text = bucket_info[key]
        keyboard, random_id = key[3], key[4]
        # A chat is written to with peer_id, one call each (VK documents peer_ids for users).
        size = 1 if row.channel == OutboxChannel.CHAT else MAX_PEERS
        for start in range(0, len(targets), size):
            chunk = tuple(targets[start : start + size])
            params: dict[str, Any] = {"random_id": random_id, "message": text}
            if row.channel == OutboxChannel.CHAT:
                params["peer_id"] = chunk[0][1]
            else:
                params["peer_ids"] = ",".join(str(peer) for _, peer in chunk)
            if keyboard is not None:
                params["keyboard"] = keyboard
            plan.calls.append(
                Call(
                    token="group",
                    method="messages.send",
                    params=params,
                    kind="send",
                    row_ids=tuple(dict.fromkeys(row_id for row_id, _ in chunk)),
                    targets=chunk,
                    part=part,
                    parts=count,
                )
            )


def _pin_random_ids(
    live: list[tuple[Outbox, dict[str, Any], list[int], list[str]]],
    plan: Plan,
    turns: Mapping[int, int],
) -> None:
    """Give every row without a ``random_id`` one: private rows with one-piece texts equal in
    channel, text and keyboard, whose recipients differ, going in the same turn, share their
    lowest row's (≤ 100 recipients); the others keep their own."""
    groups: dict[tuple[Any, ...], list[tuple[int, set[int]]]] = {}
    for row, result, _left, parts in live:
        if result.get("random_id"):
            continue
        peers = set(recipients(row))
        if len(parts) > 1 or row.channel == OutboxChannel.CHAT:
            result["random_id"] = outbox_random_id(row.pk)
        else:
            key = (turns.get(row.pk, 0), row.channel, parts[0], _keyboard(row))
            for group in groups.setdefault(key, []):
                leader_random_id, members = group
                if members.isdisjoint(peers) and len(members) + len(peers) <= MAX_PEERS:
                    members.update(peers)
                    result["random_id"] = leader_random_id
                    break
            else:
                own = outbox_random_id(row.pk)
                groups[key].append((own, peers))
                result["random_id"] = own
        plan.results[row.pk] = result
