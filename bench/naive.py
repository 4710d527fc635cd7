"""The naive baseline: what a bot that answers with vkbottle's ``message.answer`` sends.

Every Outbox row goes out as it is written: one ``messages.send`` per row and recipient (no
``peer_ids``, no ``execute``), every board post as its own ``board.createComment``, every other
channel as its own call. It uses the project's Outbox leases, Redis rate limiter and retries
(so that it is *correct* — within VK's limits, each message once: the ``random_id``/``guid``
comes from the row) and differs only in how many requests it makes.

``python -m bench.naive_worker`` runs it as a process in place of the rq worker.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gameplay.models import Outbox, OutboxChannel
from outbox.ids import outbox_random_id
from outbox.leases import Lease
from outbox.outcomes import Failure, Settlement
from vkbot.delivery.batch import Call, CallResult, Request, is_retryable
from vkbot.delivery.drain import SETTLE_MARGIN, Drainer
from vkbot.delivery.rows import LINK_MARKER, MAX_MESSAGE_LENGTH, split_text
from vkbot.keyboards import of_row

GUID_PREFIX = "naive-outbox-"


def naive_calls(row: Outbox, group_id: int) -> list[Call]:
    """One call per recipient (and per 9000-character piece) of the row."""
    peers = [int(p) for p in row.peer_ids or ()]
    if row.channel in (OutboxChannel.MESSAGE, OutboxChannel.CHAT, OutboxChannel.INVITE):
        text = row.text
        calls: list[Call] = []
        if row.channel == OutboxChannel.INVITE:
            link = (row.result or {}).get("link")
            if not link:
                chat = int((row.payload or {}).get("chat_peer_id") or 0)
                return [_call("group", "messages.getInviteLink", {"peer_id": chat}, row, "link")]
            text = text.replace(LINK_MARKER, str(link))
        pieces = split_text(text, MAX_MESSAGE_LENGTH)
        for peer in peers:
            for part, piece in enumerate(pieces):
                params: dict[str, Any] = {
                    "peer_id": peer,
                    "message": piece,
                    "random_id": _random_id(row, peer, part),
                }
                if row.keyboard and part == len(pieces) - 1:
                    params["keyboard"] = json.dumps(of_row(row.keyboard), ensure_ascii=False)
                calls.append(_call("group", "messages.send", params, row, "send", peer=peer))
        return calls
    if row.channel == OutboxChannel.BOARD:
        pieces = split_text(row.text, MAX_MESSAGE_LENGTH)
        return [
            _call(
                "user",
                "board.createComment",
                {
                    "group_id": group_id,
                    "topic_id": int(row.topic_id or 0),
                    "message": piece,
                    "from_group": 1,
                    "guid": f"{GUID_PREFIX}{row.pk}.{part}",
                },
                row,
                "board",
            )
            for part, piece in enumerate(pieces)
        ]
    payload = dict(row.payload or {})
    if row.channel == OutboxChannel.EVENT_ANSWER:
        params = {k: payload[k] for k in ("event_id", "user_id", "peer_id") if k in payload}
        if payload.get("event_data"):
            params["event_data"] = json.dumps(payload["event_data"], ensure_ascii=False)
        return [_call("group", "messages.sendMessageEventAnswer", params, row, "answer")]
    if row.channel == OutboxChannel.KICK:
        params = {"chat_id": payload.get("chat_id"), "member_id": payload.get("member_id")}
        return [_call("group", "messages.removeChatUser", params, row, "kick")]
    return []


def _call(
    token: str, method: str, params: dict[str, Any], row: Outbox, kind: str, peer: int = 0
) -> Call:
    return Call(
        token=token,  # type: ignore[arg-type]
        method=method,
        params=params,
        kind=kind,  # type: ignore[arg-type]
        row_ids=(row.pk,),
        targets=((row.pk, peer),) if peer else (),
    )


def _random_id(row: Outbox, peer: int, part: int) -> int:
    return (outbox_random_id(row.pk) * 131 + part) % 2_147_483_647 or 1


class NaiveDrainer(Drainer):
    """:class:`~vkbot.delivery.drain.Drainer` with the naive plan: one request per call, every
    channel in one round (as the project's delivery did before its community-token rows went
    out in rounds of their own), so the baseline's figures stay what they were."""

    def round(self) -> int:
        return self._round(self.channels) if self.channels else 0

    def _deliver(
        self, lease: Lease, rows: list[Outbox], lease_seconds: float
    ) -> list[Settlement] | None:
        group_id = int(self.group_id or 0)
        calls_of = {row.pk: naive_calls(row, group_id) for row in rows}
        requests = [Request(c.token, [c]) for row in rows for c in calls_of[row.pk]]
        margin = min(SETTLE_MARGIN, lease_seconds / 4)
        before = self.transport.requests_sent
        replies = self.transport.send(requests, timeout=lease.seconds_left() - margin)
        self.report.requests += self.transport.requests_sent - before
        answers: dict[int, list[CallResult]] = {}
        for request, results in zip(requests, replies, strict=True):
            answers.setdefault(request.calls[0].row_ids[0], []).extend(results)
        return [_settle(row, calls_of[row.pk], answers.get(row.pk, [])) for row in rows]


def _settle(row: Outbox, calls: Sequence[Call], results: Sequence[CallResult]) -> Settlement:
    if not calls:
        return Settlement(row.pk, "failed", failure=Failure(100, "nothing to send"), flag=False)
    failures = [r.failure for r in results if r.failure is not None]
    result = dict(row.result or {})
    if calls[0].kind == "link" and not failures:
        link = results[0].value.get("link") if isinstance(results[0].value, dict) else None
        result["link"] = link
        return Settlement(row.pk, "again", result=result)
    if not failures:
        result["naive"] = len(calls)
        return Settlement(row.pk, "sent", result=result)
    if any(is_retryable(f) for f in failures):
        return Settlement(row.pk, "retry", failure=failures[0])
    return Settlement(row.pk, "failed", failure=failures[0])
