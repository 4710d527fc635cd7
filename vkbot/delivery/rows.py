"""What planning a round shares (:mod:`vkbot.delivery.plan`): the :class:`Plan`, VK's limits,
an Outbox row's recipients and progress, texts cut into pieces within the limits. Pure."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from gameplay.models import Outbox, OutboxChannel
from outbox.outcomes import Failure, Settlement
from outbox.results import recipients

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

MESSAGE_CHANNELS = (OutboxChannel.MESSAGE, OutboxChannel.CHAT, OutboxChannel.INVITE)


@dataclass
class Plan:
    """``results``: rows whose ``result`` must be recorded before any call; ``calls``: in the
    order to make them; ``settled``: rows decided without calling VK; ``held``: recipients of
    rows not sent in this round, so that each peer reads its rows in order
    (:mod:`vkbot.delivery.order`)."""

    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    settled: list[Settlement] = field(default_factory=list)
    held: dict[int, set[int]] = field(default_factory=dict)

    def row_ids(self) -> set[int]:
        ids = {s.outbox_id for s in self.settled} | set(self.held)
        for call in self.calls:
            ids.update(call.row_ids)
        return ids


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


def message_text(row: Outbox) -> str:
    if row.channel == OutboxChannel.INVITE:
        return row.text.replace(LINK_MARKER, str((row.result or {}).get("link", "")))
    return row.text


def remaining(row: Outbox, result: dict[str, Any]) -> list[int]:
    """Recipients with neither a delivery nor a final refusal recorded."""
    sent = result.get("sent") or {}
    failed = result.get("failed") or {}
    return [p for p in recipients(row) if str(p) not in sent and str(p) not in failed]


def invalid(row: Outbox, why: str) -> Settlement:
    """A row no VK call could deliver (a bug of its writer): failed, told to the GM."""
    return Settlement(row.pk, "failed", failure=Failure(100, f"invalid Outbox row: {why}"))


# --- outcomes of rows ----------------------------------------------------------------------------


def fresh_result(row: Outbox, plan: Plan) -> dict[str, Any]:
    """The row's ``result`` to work from. A row re-queued from scratch (a retry sets
    ``attempts`` to 0; this claim made it 1) tries the recipients VK refused before again."""
    result = dict(row.result or {})
    if row.attempts <= 1 and result.get("failed"):
        del result["failed"]
        plan.results[row.pk] = result
    return result


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
    return invalid(row, "no recipients")
