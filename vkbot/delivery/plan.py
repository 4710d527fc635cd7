"""How a round's claimed Outbox rows go to VK: the calls to make, and what to record first.

Pure (no database, no network): the rows in, a :class:`Plan` out.

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

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gameplay.models import Outbox, OutboxChannel
from outbox.ids import board_guid, outbox_random_id
from outbox.outcomes import Failure, Settlement
from outbox.results import (
    CREATE_CHAT_ASKED,
    EDIT,
    EDIT_REFUSED,
    board_group,
    create_chat_unanswered,
)
from vkbot import keyboards

from .batch import Call

#: VK's limits (VK.md): recipients of one send, characters of one message.
MAX_PEERS = 100
MAX_MESSAGE_LENGTH = 9000
#: A board comment: VK's message limit is used for comments too (the conservative bound).
MAX_COMMENT_LENGTH = 9000
#: Between posts merged into one comment.
COMMENT_SEPARATOR = "\n\n"
#: In an invite's text, replaced by the chat's invite link.
LINK_MARKER = "{link}"

_MESSAGE_CHANNELS = (OutboxChannel.MESSAGE, OutboxChannel.CHAT, OutboxChannel.INVITE)


@dataclass
class Plan:
    """``results``: rows whose ``result`` must be recorded before any call; ``calls``: in the
    order to make them; ``settled``: rows decided without calling VK."""

    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    settled: list[Settlement] = field(default_factory=list)

    def row_ids(self) -> set[int]:
        ids = {s.outbox_id for s in self.settled}
        for call in self.calls:
            ids.update(call.row_ids)
        return ids


def plan_round(
    rows: Sequence[Outbox], *, group_id: int | None, texts: Mapping[int, str] | None = None
) -> Plan:
    """Calls for the claimed rows. Board posts need ``group_id`` (the community's id), and
    ``texts`` of the members of their recorded comments that were not claimed (already sent or
    failed: the comment is re-sent whole; "" for a row that no longer exists)."""
    plan = Plan()
    ordered = sorted(rows, key=lambda row: row.pk)
    edits = [r for r in ordered if is_edit(r)]
    for row in edits:
        _plan_edit(row, plan)
    _plan_messages([r for r in ordered if _is_message(r) and r not in edits], plan)
    _plan_links(
        [r for r in ordered if r.channel == OutboxChannel.INVITE and not _is_message(r)], plan
    )
    for row in ordered:
        if row.channel == OutboxChannel.EVENT_ANSWER:
            _plan_answer(row, plan)
        elif row.channel == OutboxChannel.KICK:
            _plan_kick(row, plan)
        elif row.channel == OutboxChannel.CREATE_CHAT:
            _plan_create_chat(row, plan)
        elif row.channel not in (*_MESSAGE_CHANNELS, OutboxChannel.BOARD):
            plan.settled.append(_invalid(row, f"unknown channel {row.channel!r}"))
    _plan_board(
        [r for r in ordered if r.channel == OutboxChannel.BOARD], plan, group_id, texts or {}
    )
    return plan


# --- texts ---------------------------------------------------------------------------------------


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at a paragraph, a line or a
    space where one is near the end of a piece."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = -1
        for separator in ("\n\n", "\n", " "):
            at = rest.rfind(separator, 0, limit + 1)
            if at >= limit // 2:
                cut = at
                break
        if cut <= 0:
            cut = limit
        if rest[:cut].strip():  # a piece of only blanks is not sent (VK refuses it)
            pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest.strip() or not pieces:
        pieces.append(rest)
    return pieces


def part_random_id(random_id: int, part: int) -> int:
    """The ``random_id`` of piece ``part`` of a long text (piece 0: the row's own)."""
    if part == 0:
        return random_id
    digest = hashlib.sha256(f"{random_id}:{part}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2_147_483_647 or 1


def part_guid(guid: str, part: int) -> str:
    return guid if part == 0 else f"{guid}.{part}"


def _keyboard(row: Outbox) -> str | None:
    """The row's keyboard as VK's ``keyboard`` parameter (rendered: ``vkbot.keyboards``)."""
    board = keyboards.of_row(row.keyboard)
    if board is None:
        return None
    return json.dumps(board, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _is_message(row: Outbox) -> bool:
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


def _plan_edit(row: Outbox, plan: Plan) -> None:
    """A page of buttons turned: the message it replaces is edited. A row VK can no longer
    take as an edit (not one peer, a text over one message) is sent as a new message."""
    target = row.payload[EDIT]
    try:
        peer, message = int(target["peer_id"]), int(target["conversation_message_id"])
    except (KeyError, TypeError, ValueError):
        peer, message = 0, 0
    if recipients(row) != [peer] or len(row.text) > MAX_MESSAGE_LENGTH or message <= 0:
        result = dict(row.result or {})
        result[EDIT_REFUSED] = "not an edit"
        plan.results[row.pk] = result
        plan.settled.append(Settlement(row.pk, "again", result=result))
        return
    params: dict[str, Any] = {
        "peer_id": peer,
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


def message_text(row: Outbox) -> str:
    if row.channel == OutboxChannel.INVITE:
        return row.text.replace(LINK_MARKER, str((row.result or {}).get("link", "")))
    return row.text


def recipients(row: Outbox) -> list[int]:
    seen: dict[int, None] = {}
    for peer in row.peer_ids or ():
        try:
            seen[int(peer)] = None
        except (TypeError, ValueError):
            continue
    return list(seen)


def remaining(row: Outbox, result: dict[str, Any]) -> list[int]:
    """Recipients with neither a delivery nor a final refusal recorded."""
    sent = result.get("sent") or {}
    failed = result.get("failed") or {}
    return [p for p in recipients(row) if str(p) not in sent and str(p) not in failed]


def _invalid(row: Outbox, why: str) -> Settlement:
    """A row no VK call could deliver (a bug of its writer): failed, told to the GM."""
    return Settlement(row.pk, "failed", failure=Failure(100, f"invalid Outbox row: {why}"))


# --- messages ------------------------------------------------------------------------------------


def fresh_result(row: Outbox, plan: Plan) -> dict[str, Any]:
    """The row's ``result`` to work from. A row re-queued from scratch (a retry sets
    ``attempts`` to 0; this claim made it 1) tries the recipients VK refused before again."""
    result = dict(row.result or {})
    if row.attempts <= 1 and result.get("failed"):
        del result["failed"]
        plan.results[row.pk] = result
    return result


def _plan_messages(rows: list[Outbox], plan: Plan) -> None:
    live: list[tuple[Outbox, dict[str, Any], list[int], list[str]]] = []
    for row in rows:
        result = fresh_result(row, plan)
        left = remaining(row, result)
        if not left:
            plan.settled.append(finished(row, result))
            continue
        live.append((row, result, left, split_text(message_text(row), MAX_MESSAGE_LENGTH)))
    _pin_random_ids(live, plan)
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
        keyboard, random_id = key[2], key[3]
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
    live: list[tuple[Outbox, dict[str, Any], list[int], list[str]]], plan: Plan
) -> None:
    """Give every row without a ``random_id`` one: private rows with one-piece texts equal in
    channel, text and keyboard, whose recipients differ, share their lowest row's (≤ 100
    recipients); the others keep their own."""
    groups: dict[tuple[Any, ...], list[tuple[int, set[int]]]] = {}
    for row, result, _left, parts in live:
        if result.get("random_id"):
            continue
        peers = set(recipients(row))
        if len(parts) > 1 or row.channel == OutboxChannel.CHAT:
            result["random_id"] = outbox_random_id(row.pk)
        else:
            key = (row.channel, parts[0], _keyboard(row))
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


def finished(row: Outbox, result: dict[str, Any]) -> Settlement:
    """A row every recipient of which has an outcome: sent if anyone got it."""
    if result.get("sent"):
        return Settlement(row.pk, "sent", result=result)
    if result.get("failed"):
        return Settlement(
            row.pk,
            "failed",
            result=result,
            flag=False,
            failure=Failure(None, "no recipient could be reached"),
        )
    return _invalid(row, "no recipients")


# --- invites, callback answers, removals ------------------------------------------------------


def _plan_links(rows: list[Outbox], plan: Plan) -> None:
    by_chat: dict[int, list[int]] = {}
    for row in rows:
        chat = (row.payload or {}).get("chat_peer_id")
        if not isinstance(chat, int) or isinstance(chat, bool):
            plan.settled.append(_invalid(row, "payload lacks chat_peer_id"))
            continue
        result = fresh_result(row, plan)
        if not remaining(row, result):
            plan.settled.append(finished(row, result))
            continue
        by_chat.setdefault(chat, []).append(row.pk)
    for chat, row_ids in by_chat.items():
        plan.calls.append(
            Call(
                token="group",
                method="messages.getInviteLink",
                params={"peer_id": chat},
                kind="link",
                row_ids=tuple(row_ids),
            )
        )


def _plan_answer(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    try:
        params: dict[str, Any] = {
            "event_id": str(payload["event_id"]),
            "user_id": int(payload["user_id"]),
            "peer_id": int(payload["peer_id"]),
        }
    except (KeyError, TypeError, ValueError):
        plan.settled.append(_invalid(row, "payload lacks event_id, user_id or peer_id"))
        return
    data = payload.get("event_data")
    if data:
        params["event_data"] = (
            data
            if isinstance(data, str)
            else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        )
    plan.calls.append(
        Call(
            token="group",
            method="messages.sendMessageEventAnswer",
            params=params,
            kind="answer",
            row_ids=(row.pk,),
        )
    )


def _plan_kick(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    try:
        params = {"chat_id": int(payload["chat_id"]), "member_id": int(payload["member_id"])}
    except (KeyError, TypeError, ValueError):
        plan.settled.append(_invalid(row, "payload lacks chat_id or member_id"))
        return
    plan.calls.append(
        Call(
            token="group",
            method="messages.removeChatUser",
            params=params,
            kind="kick",
            row_ids=(row.pk,),
        )
    )


def _plan_create_chat(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    title = payload.get("title")
    users = payload.get("user_ids") or []
    if (
        not isinstance(title, str)
        or not title.strip()
        or not isinstance(users, list)
        or not all(isinstance(u, int) and not isinstance(u, bool) and u > 0 for u in users)
    ):
        plan.settled.append(_invalid(row, "payload lacks a title or has bad user_ids"))
        return
    result = dict(row.result or {})
    if create_chat_unanswered(row):
        plan.settled.append(
            Settlement(
                row.pk,
                "failed",
                result=result,
                failure=Failure(None, "an earlier request got no answer: the chat may exist"),
            )
        )
        return
    result[CREATE_CHAT_ASKED] = True
    plan.results[row.pk] = result
    params: dict[str, Any] = {"title": title}
    if users:
        params["user_ids"] = ",".join(str(u) for u in users)
    plan.calls.append(
        Call(
            token="group",
            method="messages.createChat",
            params=params,
            kind="create_chat",
            row_ids=(row.pk,),
        )
    )


# --- board ----------------------------------------------------------------------------------------


def board_text(members: Sequence[Outbox]) -> str:
    """The comment a group of posts makes: their texts in order, a blank line between."""
    return COMMENT_SEPARATOR.join(m.text for m in sorted(members, key=lambda m: m.pk))


def _plan_board(
    rows: list[Outbox], plan: Plan, group_id: int | None, others: Mapping[int, str]
) -> None:
    if not rows:
        return
    if group_id is None:
        raise ValueError("board posts need the community's id (VK_GROUP_ID)")
    by_id = {row.pk: row for row in rows}
    grouped: dict[str, list[Outbox]] = {}
    loose: dict[int, list[Outbox]] = {}
    for row in rows:
        if board_group(row):
            guid = str(row.result["board"]["guid"])
            grouped.setdefault(guid, []).append(row)
        else:
            loose.setdefault(int(row.topic_id or 0), []).append(row)
    for topic_rows in loose.values():
        for members in _merge_posts(topic_rows):
            record = {
                "guid": board_guid(members[0].pk),
                "group": [m.pk for m in members],
                "parts": len(split_text(board_text(members), MAX_COMMENT_LENGTH)),
                "comments": {},
            }
            for member in members:
                result = dict(member.result or {})
                result["board"] = dict(record)
                member_result = plan.results.setdefault(member.pk, result)
                member_result["board"] = dict(record)
            grouped[record["guid"]] = members
    for guid, members in sorted(grouped.items(), key=lambda item: item[1][0].pk):
        texts = {m.pk: m.text for m in members}
        for pk in _group_of(members[0], plan):
            if pk not in by_id and pk in others:
                texts[pk] = others[pk]
        if any(pk not in texts for pk in _group_of(members[0], plan)):
            continue  # the comment's text is not all known: never send another text under its guid
        record = _board_record(members[0], plan)
        comment = COMMENT_SEPARATOR.join(texts[pk] for pk in sorted(texts) if texts[pk])
        parts = split_text(comment, MAX_COMMENT_LENGTH)
        done = record.get("comments") or {}
        part = next((i for i in range(len(parts)) if str(i) not in done), None)
        if part is None:
            for member in members:
                plan.settled.append(Settlement(member.pk, "sent", result=_result_of(member, plan)))
            continue
        plan.calls.append(
            Call(
                token="user",
                method="board.createComment",
                params={
                    "group_id": group_id,
                    "topic_id": int(members[0].topic_id or 0),
                    "message": parts[part],
                    "from_group": 1,
                    "guid": part_guid(guid, part),
                },
                kind="board",
                row_ids=tuple(m.pk for m in sorted(members, key=lambda m: m.pk)),
                part=part,
                parts=len(parts),
            )
        )


def _merge_posts(rows: list[Outbox]) -> list[list[Outbox]]:
    """Consecutive posts of one topic, as long as their comment stays within the limit."""
    groups: list[list[Outbox]] = []
    size = 0
    for row in rows:
        extra = len(row.text) + (len(COMMENT_SEPARATOR) if groups and groups[-1] else 0)
        if groups and groups[-1] and size + extra <= MAX_COMMENT_LENGTH:
            groups[-1].append(row)
            size += extra
        else:
            groups.append([row])
            size = len(row.text)
    return groups


def _result_of(row: Outbox, plan: Plan) -> dict[str, Any]:
    return plan.results.get(row.pk) or dict(row.result or {})


def _board_record(row: Outbox, plan: Plan) -> dict[str, Any]:
    return dict(_result_of(row, plan).get("board") or {})


def _group_of(row: Outbox, plan: Plan) -> list[int]:
    return [int(pk) for pk in _board_record(row, plan).get("group") or ()]
