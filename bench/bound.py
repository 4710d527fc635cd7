"""The lower bound of VK requests for a set of Outbox rows, from VK's own limits alone.

A request is one HTTP call to the API. What VK allows (VK.md):

- one ``messages.send`` takes one text (≤ 9000 characters; a longer one needs a call per
  piece) to up to 100 users at once (``peer_ids``), each user once; so a text that ``k`` rows
  send to users in all, the same user at most ``m`` times, needs at least
  ``max(ceil(k / 100), m)`` calls per piece. A chat is written to with its own ``peer_id``: one
  call per chat message. A callback-button answer, a chat invite link and a removal are one
  call each (an invite's text is then an ordinary message);
- one ``board.createComment`` posts at most 9000 characters in one topic, so the posts of a
  topic need at least ``ceil(characters / 9000)`` calls (posts joined by a blank line, the
  project's separator; nothing shorter would keep them apart);
- ``execute`` runs up to 25 calls in one request, on either token; so a token with ``c`` calls
  needs at least ``ceil(c / 25)`` requests.

The bound is the sum over the two tokens. Nothing here knows how the project plans its calls:
it is computed from the rows only.

:func:`timely_bound` adds what a reply-latency target demands on top of VK's limits: a private
message must go out within ``within`` seconds of its row's commit, so replies committed further
apart than that cannot share a request, however the calls are packed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from gameplay.models import Outbox, OutboxChannel

EXECUTE_CALLS = 25
PEERS_PER_SEND = 100
TEXT_LIMIT = 9000
SEPARATOR = "\n\n"


def _pieces(text: str) -> int:
    return max(1, math.ceil(len(text) / TEXT_LIMIT))


def calls_needed(rows: Iterable[Outbox]) -> dict[str, int]:
    """The fewest API calls per token ("group", "user") that deliver ``rows``."""
    sends: dict[tuple[str, Any], Counter[int]] = {}
    group = 0
    topics: dict[int, list[str]] = {}
    for row in rows:
        keyboard = repr(sorted((row.keyboard or {}).items())) if row.keyboard else ""
        if row.channel == OutboxChannel.MESSAGE:
            peers = sends.setdefault((row.text, keyboard), Counter())
            peers.update(int(p) for p in row.peer_ids or ())
        elif row.channel == OutboxChannel.CHAT:
            group += _pieces(row.text) * len(row.peer_ids or ())
        elif row.channel == OutboxChannel.INVITE:
            group += 1  # messages.getInviteLink
            peers = sends.setdefault((row.text, "invite"), Counter())
            peers.update(int(p) for p in row.peer_ids or ())
        elif row.channel == OutboxChannel.BOARD:
            topics.setdefault(int(row.topic_id or 0), []).append(row.text)
        else:  # a callback answer, a removal from a chat
            group += 1
    for (text, _), peers in sends.items():
        if peers:
            per_piece = max(math.ceil(sum(peers.values()) / PEERS_PER_SEND), max(peers.values()))
            group += _pieces(text) * per_piece
    user = sum(
        max(1, math.ceil(len(SEPARATOR.join(texts)) / TEXT_LIMIT)) for texts in topics.values()
    )
    return {"group": group, "user": user}


def requests_bound(calls: dict[str, int]) -> dict[str, int]:
    """Requests per token: every call in an ``execute`` of up to 25."""
    return {token: math.ceil(count / EXECUTE_CALLS) for token, count in calls.items()}


def lower_bound(rows: Iterable[Outbox]) -> int:
    return sum(requests_bound(calls_needed(rows)).values())


def send_instants(committed: Iterable[float], within: float) -> int:
    """The fewest moments at which to send so that each of these commits (seconds) is sent
    within ``within`` of it: each moment as late as the earliest commit not yet covered
    allows (interval stabbing, greedy by deadline, which is optimal)."""
    instants = 0
    covered_until = -math.inf
    for at in sorted(committed):
        if at > covered_until:
            instants += 1
            covered_until = at + within
    return instants


def timely_bound(rows: Iterable[Outbox], within: float) -> int:
    """The lower bound when each private message (a reply: the community token's
    ``messages.send``) must be sent within ``within`` seconds of its row's commit: per token,
    the larger of VK's limits' bound and the moments that forces. Board comments and other
    rows keep VK's limits alone (no latency target holds them)."""
    rows = list(rows)
    limits = requests_bound(calls_needed(rows))
    replies = [row.created_at.timestamp() for row in rows if row.channel == OutboxChannel.MESSAGE]
    group = max(limits.get("group", 0), send_instants(replies, within))
    return group + limits.get("user", 0)
