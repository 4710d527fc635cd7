"""Each peer reads its messages in the order of their Outbox rows.

A peer is a player's private chat or a chat (``outbox.results.PEER_CHANNELS``), of one
community. Three steps keep the order:

1. The claim (``outbox.leases.outbox_claim``): a recipient of a row waits while an earlier row
   to it is pending outside the claim — waiting for a retry, or being sent by another worker —
   until that row is delivered or given up (``Lease.held``); only that peer waits, the row's
   other recipients are sent.
2. The plan (:func:`peer_order`): the round's rows take turns. A row's turn is one after the
   latest turn of an earlier row sharing a recipient with it, so its calls come after theirs
   (calls are ordered by turn, then by row). A recipient is held for the round when an earlier
   row cannot complete it in this round: it waits (step 1), it is an invite still without its
   link, a long text with pieces still to send, or a page edit VK cannot take.
3. The send (:func:`send_in_order`): VK runs the calls of one ``execute`` in order, but the
   requests of a round go out concurrently; a request sharing a recipient with an earlier one
   goes only once that one is answered, without the recipients it left undelivered (a
   retryable error, no answer: the row waits for its retry; a page edit VK refused: sent as a
   new message next round). A recipient VK refused for good does not hold the others back.

A held recipient's row is settled ``held``: due again at once, the claim not counted as an
attempt; the next claim puts it off behind the row it waits for (step 1).

Within one ``execute``, VK runs the calls in order, but fails one on its own (an error inside
the program, e.g. 10) and runs the next: a message to a peer an earlier call of the program
messages runs only if that call succeeded (``batch.guards``); if not, its recipients are held.
A request that failed as a whole (5xx, a network error, error 6 or 10 for the ``execute``)
fails all its calls together. Not ordered: a broadcast (``peer_ids``) that succeeded as a call
but failed one recipient with a retryable error in its list, while a later call of the same
program messages that recipient (VK gives per-recipient errors such as 901, which are final).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gameplay.models import Outbox
from outbox.outcomes import Failure
from outbox.results import PEER_CHANNELS, recipients

from .batch import PEER_KINDS, Call, CallResult, Request, is_retryable
from .rows import MAX_MESSAGE_LENGTH, Plan, fresh_result, message_text, remaining, split_text
from .sends import edit_target, is_edit, is_message


@dataclass
class PeerOrder:
    """A round's rows in turns (step 2): ``turns`` per row id, and ``blocked`` peers no later
    row may go to in this round."""

    turns: dict[int, int] = field(default_factory=dict)
    last: dict[int, int] = field(default_factory=dict)
    blocked: set[int] = field(default_factory=set)

    def admit(self, row: Outbox, peers: Iterable[int], held: dict[int, set[int]]) -> list[int]:
        """The peers ``row`` goes to in this round (the others into ``held``), and its turn."""
        going = [p for p in peers if p not in self.blocked]
        stopped = [p for p in peers if p in self.blocked]
        if stopped:
            held.setdefault(row.pk, set()).update(stopped)
        if going:
            turn = max((self.last[p] + 1 for p in going if p in self.last), default=0)
            self.turns[row.pk] = turn
            for peer in going:
                self.last[peer] = turn
        return going

    def block(self, peers: Iterable[int]) -> None:
        """These peers get nothing more in this round (an earlier row cannot complete them)."""
        self.blocked.update(peers)

    def hold(self, row: Outbox, peers: Iterable[int], held: dict[int, set[int]]) -> None:
        """``row`` waits for these peers (the claim said so), and so does every later row."""
        peers = list(peers)
        if peers:
            held.setdefault(row.pk, set()).update(peers)
            self.block(peers)

    def turn_of(self, call: Call) -> int:
        return max((self.turns.get(pk, 0) for pk in call.row_ids), default=0)


def plan_order(
    rows: Sequence[Outbox], plan: Plan, held: Mapping[int, Collection[int]]
) -> tuple[PeerOrder, dict[int, list[int]]]:
    """The round's message rows in turns (step 2): the order, and per row the recipients it
    goes to in this round (the others are in ``plan.held``). ``held``: the recipients the
    claim holds back (``Lease.held``)."""
    order = PeerOrder()
    going: dict[int, list[int]] = {}
    for row in sorted((r for r in rows if r.channel in PEER_CHANNELS), key=lambda r: r.pk):
        waiting = set(held.get(row.pk, ()))
        if is_edit(row):
            target = edit_target(row)
            if target is None:  # sent as a new message next round
                order.block(recipients(row))
                continue
            peers = [target[0]]
        elif is_message(row):
            result = fresh_result(row, plan)
            peers = remaining(row, result)
        else:  # an invite still without its link: its message goes next round
            order.block(remaining(row, row.result or {}))
            continue
        order.hold(row, [p for p in peers if p in waiting], plan.held)
        going[row.pk] = order.admit(row, [p for p in peers if p not in waiting], plan.held)
        if not is_edit(row):
            order.block(_unfinished(row, going[row.pk], plan))
    return order, going


def _unfinished(row: Outbox, peers: list[int], plan: Plan) -> list[int]:
    """The peers that get a piece of a long text other than its last in this round."""
    text = message_text(row)
    if len(text) <= MAX_MESSAGE_LENGTH:
        return []
    last = len(split_text(text, MAX_MESSAGE_LENGTH)) - 1
    progress = (plan.results.get(row.pk) or row.result or {}).get("progress") or {}
    return [p for p in peers if int(progress.get(str(p), 0)) < last]


def in_turns_of_rows(plan: Plan, order: PeerOrder) -> None:
    """Order the plan's calls by turn, then by their first row (a stable sort)."""
    plan.calls.sort(key=lambda call: (order.turn_of(call), min(call.row_ids, default=0)))


# --- sending ------------------------------------------------------------------------------------


class Sender(Protocol):
    def send(self, requests: Sequence[Request], *, timeout: float) -> list[list[CallResult]]: ...


Peer = tuple[int | None, int]


def send_in_order(
    transport: Sender, requests: Sequence[Request], *, timeout: float
) -> list[list[CallResult]]:
    """Every request's per-call results, in order (as ``Transport.send``), the requests sent in
    layers (step 3): a request goes once every earlier request sharing a recipient with it is
    answered, without the recipients those left undelivered (their results name them
    ``held``). Requests of one layer go out concurrently, within ``timeout`` in all."""
    layers = request_layers(requests)
    if max(layers, default=0) == 0:
        return transport.send(requests, timeout=timeout)
    deadline = time.monotonic() + timeout
    replies: list[list[CallResult]] = [[] for _ in requests]
    blocked: set[Peer] = set()
    for layer in range(max(layers) + 1):
        indexes = [i for i, at in enumerate(layers) if at == layer]
        trimmed = {i: _without(requests[i], blocked) for i in indexes}
        going = [i for i in indexes if trimmed[i][0] is not None]
        answers = transport.send(
            [trimmed[i][0] for i in going],  # type: ignore[misc]
            timeout=deadline - time.monotonic(),
        )
        answered = dict(zip(going, answers, strict=True))
        for i in indexes:
            request = requests[i]
            sent, held = trimmed[i]
            results = _merge(request, sent, answered.get(i), held)
            replies[i] = results
            for call, result in zip(request.calls, results, strict=True):
                blocked.update((request.community, p) for p in undelivered(call, result))
    return replies


def request_layers(requests: Sequence[Request]) -> list[int]:
    """Per request, its layer: one after the latest earlier request sharing a recipient."""
    layers: list[int] = []
    last: dict[Peer, int] = {}
    for request in requests:
        peers = _peers_of(request)
        layer = max((last[p] + 1 for p in peers if p in last), default=0)
        layers.append(layer)
        for peer in peers:
            last[peer] = layer
    return layers


def undelivered(call: Call, result: CallResult) -> set[int]:
    """The recipients ``call`` did not complete, so that later rows to them must wait: held,
    a retryable error or no answer, a page edit VK refused, a piece with more to come. A
    recipient VK refused a message for good is given up: later rows may go."""
    if call.kind not in PEER_KINDS:
        return set()
    peers = {peer for _, peer in call.targets}
    missing = set(result.held) & peers
    if call.part + 1 < call.parts:
        return peers
    failure = result.failure
    if failure is not None:
        if call.kind == "send" and not is_retryable(failure):
            return missing
        return peers
    value = result.value
    if call.kind == "edit" or (isinstance(value, int) and len(call.targets) == 1):
        return missing
    items: dict[int, dict[str, Any]] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("peer_id"), int):
                items[item["peer_id"]] = item
    for peer in peers - missing:
        item = items.get(peer)
        if item is None:
            missing.add(peer)
        elif item.get("error"):
            error = item["error"] if isinstance(item["error"], dict) else {}
            code = error.get("code", error.get("error_code"))
            if not isinstance(code, int) or is_retryable(Failure(code, "")):
                missing.add(peer)
    return missing


def _peers_of(request: Request) -> set[Peer]:
    return {
        (request.community, peer)
        for call in request.calls
        if call.kind in PEER_KINDS
        for _, peer in call.targets
    }


def _without(request: Request, blocked: Collection[Peer]) -> tuple[Request | None, list[set[int]]]:
    """The request without the recipients in ``blocked`` (None: nothing is left to send),
    and per call the recipients taken out."""
    held: list[set[int]] = []
    calls: list[Call] = []
    for call in request.calls:
        out = {
            peer
            for _, peer in call.targets
            if call.kind in PEER_KINDS and (request.community, peer) in blocked
        }
        held.append(out)
        if not out:
            calls.append(call)
            continue
        kept = tuple((pk, peer) for pk, peer in call.targets if peer not in out)
        if kept:
            calls.append(_narrowed(call, kept))
    if not calls:
        return None, held
    return Request(request.token, calls, request.community), held


def _narrowed(call: Call, targets: tuple[tuple[int, int], ...]) -> Call:
    """``call`` to fewer recipients: the same text under the same ``random_id``."""
    params = dict(call.params)
    if "peer_ids" in params:
        params["peer_ids"] = ",".join(str(peer) for _, peer in targets)
    row_ids = tuple(dict.fromkeys(pk for pk, _ in targets))
    return replace(call, params=params, targets=targets, row_ids=row_ids)


def _merge(
    request: Request,
    sent: Request | None,
    answer: list[CallResult] | None,
    held: list[set[int]],
) -> list[CallResult]:
    """The results of ``request``'s calls: VK's answers to what was sent, and ``held`` for
    the recipients taken out."""
    answers = iter(answer or ())
    results: list[CallResult] = []
    for call, out in zip(request.calls, held, strict=True):
        everyone = {peer for _, peer in call.targets}
        if out and out >= everyone:
            results.append(CallResult(held=tuple(sorted(out))))
            continue
        result = next(answers)
        if out:
            result = replace(result, held=tuple(sorted(out)))
        results.append(result)
    return results
