"""What VK's answers mean for the round's rows: one :class:`Settlement` per row. Pure.

A recipient VK refused for good (901, 902, …) is recorded in the row's ``result["failed"]`` and
flagged to the GM at once; a recipient hit by a retryable error (6, 9, 10, a network error) is
tried again later with the same ``random_id``; a recipient held back for an earlier row to it
(:mod:`.order`) makes the row ``held``; the row is sent when every recipient has an outcome
and at least one got it.

A created chat (``messages.createChat``) is known not to exist only when VK answered with an
error other than :data:`UNKNOWN_OUTCOME_CODES`: then the row's ``create_chat_asked`` mark is
removed (retried after a rate limit, or failed). Without an answer, or after VK's «unknown» or
«internal» error, the mark stays and the row fails: the chat may exist (see ``plan``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gameplay.models import Outbox
from outbox.outcomes import Failure, Outcome, Settlement
from outbox.results import CREATE_CHAT_ASKED, EDIT_REFUSED

from .batch import Call, CallResult, is_retryable
from .rows import Plan, remaining

#: VK's answer when a user is not in the chat any more: what removing them wanted.
NOT_IN_CHAT = 935
#: VK errors after which VK may have acted all the same (unknown error, internal error).
UNKNOWN_OUTCOME_CODES = frozenset({1, 10})
#: Chat peer ids are 2000000000 + the chat's id.
CHAT_PEER_BASE = 2_000_000_000


@dataclass
class _Delivery:
    """One message row's progress in this round (``held``: recipients not sent in it, so that
    each peer reads its rows in order)."""

    result: dict[str, Any]
    refused: dict[int, Failure] = field(default_factory=dict)
    retry: dict[int, Failure] = field(default_factory=dict)
    held: set[int] = field(default_factory=set)


def settle_round(
    rows: Sequence[Outbox], plan: Plan, answered: Sequence[tuple[Call, CallResult]]
) -> list[Settlement]:
    """Settlements for every row of the plan: decided by the plan, or by VK's answers."""
    by_id = {row.pk: row for row in rows}
    settlements = list(plan.settled)
    deliveries: dict[int, _Delivery] = {}
    for call, answer in answered:
        if call.kind == "send":
            _record_send(call, answer, by_id, plan, deliveries)
        elif call.kind == "board":
            settlements.extend(_settle_board(call, answer, by_id, plan))
        elif call.kind == "link":
            settlements.extend(_settle_link(call, answer, by_id, plan))
        elif call.kind == "kick":
            settlements.append(_settle_kick(call, answer, by_id))
        elif call.kind == "create_chat":
            settlements.append(_settle_create_chat(call, answer, by_id, plan))
        elif call.kind == "edit":
            settlements.append(_settle_edit(call, answer, by_id))
        else:
            settlements.append(_settle_answer(call, answer))
    for row_id, peers in plan.held.items():
        if row_id not in deliveries:
            deliveries[row_id] = _Delivery(_result(by_id[row_id], plan))
        deliveries[row_id].held.update(peers)
    for row_id, delivery in deliveries.items():
        settlements.append(_settle_message(by_id[row_id], delivery))
    return settlements


def _result(row: Outbox, plan: Plan) -> dict[str, Any]:
    return dict(plan.results.get(row.pk) or row.result or {})


# --- messages.send --------------------------------------------------------------------------------


def _record_send(
    call: Call,
    answer: CallResult,
    rows: dict[int, Outbox],
    plan: Plan,
    deliveries: dict[int, _Delivery],
) -> None:
    def delivery(row_id: int) -> _Delivery:
        if row_id not in deliveries:
            deliveries[row_id] = _Delivery(_result(rows[row_id], plan))
        return deliveries[row_id]

    held = set(answer.held)
    for row_id, peer in call.targets:
        if peer in held:
            delivery(row_id).held.add(peer)
    targets = tuple(target for target in call.targets if target[1] not in held)
    if not targets:
        return
    call = replace(call, targets=targets) if held else call
    if answer.failure is not None:
        for row_id, peer in call.targets:
            _failed(delivery(row_id), peer, answer.failure)
        return
    value = answer.value
    if isinstance(value, int) and not isinstance(value, bool) and len(call.targets) == 1:
        row_id, peer = call.targets[0]
        _delivered(delivery(row_id), peer, value, call)
        return
    items: dict[int, dict[str, Any]] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("peer_id"), int):
                items[item["peer_id"]] = item
    for row_id, peer in call.targets:
        item = items.get(peer)
        if item is None:
            _failed(delivery(row_id), peer, Failure(None, "VK's answer did not mention the peer"))
        elif item.get("error"):
            error = item["error"] if isinstance(item["error"], dict) else {}
            code = error.get("code", error.get("error_code"))
            message = error.get("description", error.get("error_msg", "refused"))
            _failed(
                delivery(row_id),
                peer,
                Failure(code if isinstance(code, int) else None, str(message)),
            )
        else:
            message_id = item.get("message_id") or item.get("conversation_message_id") or 0
            _delivered(delivery(row_id), peer, int(message_id), call)


def _delivered(delivery: _Delivery, peer: int, message_id: int, call: Call) -> None:
    progress = dict(delivery.result.get("progress") or {})
    if call.part + 1 >= call.parts:
        sent = dict(delivery.result.get("sent") or {})
        sent[str(peer)] = message_id
        delivery.result["sent"] = sent
        progress.pop(str(peer), None)
    else:
        progress[str(peer)] = call.part + 1
    if progress:
        delivery.result["progress"] = progress
    else:
        delivery.result.pop("progress", None)


def _failed(delivery: _Delivery, peer: int, failure: Failure) -> None:
    if is_retryable(failure):
        delivery.retry[peer] = failure
        return
    failed = dict(delivery.result.get("failed") or {})
    failed[str(peer)] = str(failure)
    delivery.result["failed"] = failed
    delivery.refused[peer] = failure


def _settle_message(row: Outbox, delivery: _Delivery) -> Settlement:
    result = delivery.result
    left = remaining(row, result)
    refused = delivery.refused
    if not left:
        if result.get("sent"):
            return Settlement(row.pk, "sent", result=result, undelivered=refused)
        first = next(iter(refused.values()), Failure(None, "no recipient could be reached"))
        return Settlement(row.pk, "failed", result=result, failure=first, undelivered=refused)
    if delivery.retry:
        first = next(iter(delivery.retry.values()))
        return Settlement(
            row.pk, "retry", result=result, failure=first, undelivered=refused, waiting=left
        )
    if delivery.held:
        return Settlement(row.pk, "held", result=result, undelivered=refused)
    return Settlement(row.pk, "again", result=result, undelivered=refused)


# --- the other calls ------------------------------------------------------------------------


def _settle_board(
    call: Call, answer: CallResult, rows: dict[int, Outbox], plan: Plan
) -> list[Settlement]:
    members = [rows[row_id] for row_id in call.row_ids]
    if answer.failure is not None:
        outcome: Outcome = "retry" if is_retryable(answer.failure) else "failed"
        return [
            Settlement(m.pk, outcome, result=_result(m, plan), failure=answer.failure)
            for m in members
        ]
    comment_id = answer.value if isinstance(answer.value, int) else 0
    settlements = []
    for member in members:
        result = _result(member, plan)
        record = dict(result.get("board") or {})
        comments = dict(record.get("comments") or {})
        comments[str(call.part)] = comment_id
        record["comments"] = comments
        result["board"] = record
        done = len(comments) >= call.parts
        settlements.append(Settlement(member.pk, "sent" if done else "again", result=result))
    return settlements


def _settle_link(
    call: Call, answer: CallResult, rows: dict[int, Outbox], plan: Plan
) -> list[Settlement]:
    value = answer.value if isinstance(answer.value, dict) else {}
    link = value.get("link") if answer.failure is None else None
    settlements = []
    for row_id in call.row_ids:
        row = rows[row_id]
        result = _result(row, plan)
        if link:
            result["link"] = str(link)
            settlements.append(Settlement(row_id, "again", result=result))
            continue
        failure = answer.failure or Failure(None, f"unexpected answer: {str(answer.value)[:200]}")
        left = remaining(row, result)
        if is_retryable(failure):
            settlements.append(
                Settlement(row_id, "retry", result=result, failure=failure, waiting=left)
            )
            continue
        failed = dict(result.get("failed") or {})
        failed.update({str(peer): str(failure) for peer in left})
        result["failed"] = failed
        settlements.append(
            Settlement(
                row_id,
                "failed",
                result=result,
                failure=failure,
                undelivered={peer: failure for peer in left},
            )
        )
    return settlements


def _settle_kick(call: Call, answer: CallResult, rows: dict[int, Outbox]) -> Settlement:
    row_id = call.row_ids[0]
    result = dict(rows[row_id].result or {})
    failure = answer.failure
    if failure is None:
        result["answer"] = answer.value
        return Settlement(row_id, "sent", result=result)
    if failure.code == NOT_IN_CHAT:
        result["answer"] = "not in the chat"
        return Settlement(row_id, "sent", result=result)
    outcome: Outcome = "retry" if is_retryable(failure) else "failed"
    return Settlement(row_id, outcome, result=result, failure=failure)


def created_chat_id(value: Any) -> int | None:
    """The new chat's id in VK's answer to ``messages.createChat``: ``{"chat_id", "peer_ids"}``
    (API 5.199, the schema's ``messages_createChat_withPeerIds_response``) or a bare id (older
    versions)."""
    chat_id = value.get("chat_id") if isinstance(value, dict) else value
    if isinstance(chat_id, int) and not isinstance(chat_id, bool) and chat_id > 0:
        return chat_id
    return None


def _settle_create_chat(
    call: Call, answer: CallResult, rows: dict[int, Outbox], plan: Plan
) -> Settlement:
    row_id = call.row_ids[0]
    result = _result(rows[row_id], plan)
    failure = answer.failure
    if failure is None:
        chat_id = created_chat_id(answer.value)
        if chat_id is None:  # VK acted, but we cannot tell on what: the mark stays
            why = Failure(None, f"unexpected answer: {str(answer.value)[:200]}")
            return Settlement(row_id, "failed", result=result, failure=why)
        added = answer.value.get("peer_ids") if isinstance(answer.value, dict) else None
        result["chat_id"] = chat_id
        result["peer_id"] = CHAT_PEER_BASE + chat_id
        result["added"] = [p for p in added or () if isinstance(p, int)]
        result.pop(CREATE_CHAT_ASKED, None)
        return Settlement(row_id, "sent", result=result, created_chat=CHAT_PEER_BASE + chat_id)
    if failure.code is None or failure.code in UNKNOWN_OUTCOME_CODES:
        return Settlement(row_id, "failed", result=result, failure=failure)
    result.pop(CREATE_CHAT_ASKED, None)
    outcome: Outcome = "retry" if is_retryable(failure) else "failed"
    return Settlement(row_id, outcome, result=result, failure=failure)


def _settle_edit(call: Call, answer: CallResult, rows: dict[int, Outbox]) -> Settlement:
    """A page edited in place: sent. A retryable error is retried as an edit; any refusal
    (909 too old, 910 too big, 924 no access, …) is recorded and the row is sent as a new
    message at once (the next round plans it as one)."""
    row_id = call.row_ids[0]
    result = dict(rows[row_id].result or {})
    failure = answer.failure
    if answer.held:  # an earlier row to the peer was not delivered: the page waits for it
        return Settlement(row_id, "held")
    if failure is None:
        [(_, peer)] = call.targets
        result["edited"] = {str(peer): call.params.get("conversation_message_id")}
        return Settlement(row_id, "sent", result=result)
    if is_retryable(failure):
        return Settlement(row_id, "retry", failure=failure)
    result[EDIT_REFUSED] = failure.code if failure.code is not None else failure.message
    return Settlement(row_id, "again", result=result)


def _settle_answer(call: Call, answer: CallResult) -> Settlement:
    """A callback-button answer. One VK no longer takes (expired, or answered already by an
    earlier attempt whose reply was lost) fails quietly: nothing for the GM to do."""
    row_id = call.row_ids[0]
    failure = answer.failure
    if failure is None:
        return Settlement(row_id, "sent", result={"answer": answer.value})
    if failure.code == 100 and "already answered" in failure.message:
        return Settlement(row_id, "sent", result={"answer": "answered already"})
    if is_retryable(failure):
        return Settlement(row_id, "retry", failure=failure)
    return Settlement(row_id, "failed", failure=failure, flag=False)
