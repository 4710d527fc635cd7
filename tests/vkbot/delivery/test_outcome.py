"""Settling a round from VK's answers (vkbot/delivery/outcome.py) — pure."""

from __future__ import annotations

import pytest

from outbox.outcomes import Failure
from tests.vkbot.delivery.plan_support import (
    no_offset,  # noqa: F401 (a fixture)
    row,
)
from vkbot.delivery.batch import CallResult, pack
from vkbot.delivery.outcome import settle_round
from vkbot.delivery.plan import plan_round

pytestmark = pytest.mark.usefixtures("no_offset")


# --- outcomes ------------------------------------------------------------------------------------


def test_per_recipient_errors_in_a_peer_ids_answer() -> None:
    rows = [row(1, [11, 12, 13], "Текст"), row(2, [14], "Текст")]
    plan = plan_round(rows, group_id=1)
    (call,) = plan.calls
    answer = CallResult(
        value=[
            {"peer_id": 11, "message_id": 100, "conversation_message_id": 1},
            {
                "peer_id": 12,
                "message_id": 0,
                "error": {"code": 901, "description": "no permission"},
            },
            {"peer_id": 13, "message_id": 0, "error": {"code": 10, "description": "internal"}},
            {"peer_id": 14, "message_id": 101, "conversation_message_id": 1},
        ]
    )
    first, second = sorted(settle_round(rows, plan, [(call, answer)]), key=lambda s: s.outbox_id)
    assert first.outcome == "retry" and list(first.waiting) == [13]
    assert first.result is not None
    assert first.result["sent"] == {"11": 100}
    assert first.result["failed"] == {"12": "VK error 901: no permission"}
    assert list(first.undelivered) == [12]  # told to the GM now; 13 is retried
    assert second.result is not None
    assert second.outcome == "sent" and second.result["sent"] == {"14": 101}


def test_a_failed_request_retries_or_fails_every_row_it_carried() -> None:
    rows = [row(1, [11], "a"), row(2, [12], "b")]
    plan = plan_round(rows, group_id=1)
    (request,) = pack(plan.calls)
    answered = list(
        zip(request.calls, request.failed(Failure(6, "Too many requests")), strict=True)
    )
    assert {s.outcome for s in settle_round(rows, plan, answered)} == {"retry"}
    answered = list(
        zip(request.calls, request.failed(Failure(914, "Message is too long")), strict=True)
    )
    failed = settle_round(rows, plan, answered)
    assert {s.outcome for s in failed} == {"failed"}
    assert failed[0].undelivered == {11: Failure(914, "Message is too long")}
