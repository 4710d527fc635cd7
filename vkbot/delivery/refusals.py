"""When VK refuses a community's admin token in a round: renewed and sent once more, or the
community's board posts held for the admin to sign in again. Never a failed row for a key.

- Error 5 on a board request (the key expired, or VK revoked it): the token is renewed —
  or found renewed by another process meanwhile — and the refused requests go once more with
  the new one. When VK ID says no, or the key cannot renew itself (pasted), the community
  turns to «Войдите заново через VK ID» (``gameplay.services.admin_tokens``) and the rows go
  back unsent (no attempt counted): they wait, in order, for the admin to sign in again.
  When VK ID does not answer, they go back too and are tried again shortly.
- Error 15 on a board request (access denied): VK says so both to a closed topic and to a
  key whose owner is no longer an administrator of the community; ``groups.getById`` with
  ``is_admin`` on the same key tells them apart. No longer an administrator: the rows are held
  as above; otherwise the rows' outcome stands (the topic's refusal, flagged to the GM).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from gameplay.services.admin_tokens import admin_token_refuse

from .batch import Call, CallResult, Request
from .senders import Senders
from .transport import Transport

log = logging.getLogger(__name__)

#: VK's error for a key it no longer takes (expired, revoked, unknown).
KEY_REFUSED = 5
#: VK's «access denied»: a closed topic, or a key that may no longer post as the community.
ACCESS_DENIED = 15


@dataclass
class Refusals:
    """What :func:`answer_refusals` did: the replies (with the retried requests' new ones) and
    the rows to give back unsent."""

    replies: list[list[CallResult]]
    held: set[int] = field(default_factory=set)
    renewed: int = 0


def answer_refusals(
    transport: Transport,
    senders: Senders,
    requests: Sequence[Request],
    replies: Sequence[list[CallResult]],
    *,
    timeout: float,
) -> Refusals:
    """The round's replies after the admin tokens VK refused were renewed (and their requests
    sent once more) or their communities' board posts held."""
    outcome = Refusals(replies=list(replies))
    refused = _failed_with(requests, outcome.replies, KEY_REFUSED)
    for community, indexes in refused.items():
        token = transport.token("user", community)
        renewal = senders.renew(community, refused_token=token)
        if renewal.token and not (renewal.refused or renewal.unavailable):
            outcome.renewed += 1
            again = [requests[i] for i in indexes]
            for index, reply in zip(indexes, transport.send(again, timeout=timeout), strict=True):
                outcome.replies[index] = reply
            continue
        outcome.held |= _rows_of(requests, indexes)
    denied = _failed_with(requests, outcome.replies, ACCESS_DENIED)
    for community, indexes in denied.items():
        token = transport.token("user", community)
        if token and _not_an_admin(transport, community, timeout=timeout):
            why = "VK refused the board post: the key's owner no longer administers the community"
            admin_token_refuse(vk_id=community, token=token, why=why)
            senders.hold_board(community)
            outcome.held |= _rows_of(requests, indexes)
    return outcome


def _failed_with(
    requests: Sequence[Request], replies: Sequence[list[CallResult]], code: int
) -> dict[int, list[int]]:
    """The board requests (user token) of each community that VK answered with ``code``."""
    found: dict[int, list[int]] = {}
    for index, (request, results) in enumerate(zip(requests, replies, strict=True)):
        if request.token != "user" or request.community is None:
            continue
        if any(r.failure is not None and r.failure.code == code for r in results):
            found.setdefault(request.community, []).append(index)
    return found


def _rows_of(requests: Sequence[Request], indexes: Sequence[int]) -> set[int]:
    return {pk for i in indexes for call in requests[i].calls for pk in call.row_ids}


def _not_an_admin(transport: Transport, community: int, *, timeout: float) -> bool:
    """Whether VK says the admin token's owner is not an administrator of ``community``
    (False when VK does not say: the rows' own outcome then stands)."""
    ask = Call(
        token="user",
        method="groups.getById",
        params={"group_id": community, "fields": "is_admin"},
        kind="answer",
        row_ids=(),
    )
    [[result]] = transport.send([Request("user", [ask], community)], timeout=timeout)
    if result.failure is not None:
        return False
    value = result.value
    rows = value.get("groups") if isinstance(value, dict) else value
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return False
    return "is_admin" in rows[0] and not rows[0]["is_admin"]
