"""Each peer reads its messages in the order of their rows (vkbot/delivery/order.py): the
round's rows in turns, the held recipients, requests that share a recipient sent one after
another — pure, no database or network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from gameplay.models import OutboxChannel
from outbox.outcomes import Failure
from outbox.results import EDIT
from tests.vkbot.delivery.plan_support import (
    no_offset,  # noqa: F401 (a fixture)
    row,
)
from vkbot.delivery.batch import Call, CallResult, Request, pack
from vkbot.delivery.order import request_layers, send_in_order, undelivered
from vkbot.delivery.outcome import settle_round
from vkbot.delivery.plan import plan_round
from vkbot.delivery.rows import Plan

pytestmark = pytest.mark.usefixtures("no_offset")

E10 = Failure(10, "Internal server error")
E901 = Failure(901, "Can't send messages for users without permission")


def peer_sequence(calls: Sequence[Call], peer: int) -> list[int]:
    """The rows ``peer`` gets, in the order of the calls."""
    return [pk for call in calls for pk, p in call.targets if p == peer]


def every_peer_in_order(plan: Plan) -> bool:
    peers = {p for call in plan.calls for _, p in call.targets}
    return all(peer_sequence(plan.calls, p) == sorted(peer_sequence(plan.calls, p)) for p in peers)


# --- the plan: turns ------------------------------------------------------------------------------


def test_a_start_goes_in_two_turns_and_the_second_request_waits_for_the_first() -> None:
    """26 role cards of their own, then Day 1 to everyone: the cards fill one execute and a
    second; the day's call comes after every card, in the second, which goes only once the
    first is answered."""
    players = list(range(1001, 1027))
    cards = [row(n, [p], f"Ваша роль, игрок {p}") for n, p in enumerate(players, start=1)]
    day = row(40, players, "День 1. Голосуйте в обсуждении")
    plan = plan_round([day, *cards], group_id=1)
    assert every_peer_in_order(plan)
    assert plan.calls[-1].row_ids == (40,)
    requests = pack(plan.calls)
    assert [len(r.calls) for r in requests] == [25, 2]
    assert request_layers(requests) == [0, 1]


def test_rows_of_different_turns_never_share_a_send() -> None:
    """Rows 12 and 14 have the same text but go in different turns (row 14 comes after
    rows 10 and 11 to player 1): merged, player 2 would get row 13 before row 12."""
    rows = [
        row(10, [1], "Утро"),
        row(11, [1], "День"),
        row(12, [2], "Вечер"),
        row(13, [2], "Ночь"),
        row(14, [1], "Вечер"),
    ]
    plan = plan_round(rows, group_id=1)
    assert every_peer_in_order(plan)
    assert plan.results[14]["random_id"] != plan.results[12]["random_id"]


def test_one_text_to_players_in_the_same_turn_is_still_one_send() -> None:
    rows = [row(1, [1], "Голос принят"), row(2, [2], "Голос принят"), row(3, [1, 2], "Итоги")]
    plan = plan_round(rows, group_id=1)
    assert [(c.params["message"], c.params["peer_ids"]) for c in plan.calls] == [
        ("Голос принят", "1,2"),
        ("Итоги", "1,2"),
    ]


def test_an_edit_takes_its_turn_among_the_messages() -> None:
    page = {EDIT: {"peer_id": 1, "conversation_message_id": 7}}
    rows = [row(1, [1], "Ответ"), row(2, [1], "Страница 2", payload=page), row(3, [1], "Ещё")]
    plan = plan_round(rows, group_id=1)
    assert [(c.method, c.row_ids) for c in plan.calls] == [
        ("messages.send", (1,)),
        ("messages.edit", (2,)),
        ("messages.send", (3,)),
    ]


# --- the plan: held recipients --------------------------------------------------------------------


def test_a_recipient_the_claim_holds_waits_and_only_that_one() -> None:
    rows = [row(5, [1, 2, 3], "День 2"), row(6, [1], "Ваш голос принят"), row(7, [2], "Статус")]
    plan = plan_round(rows, group_id=1, held={5: {1}})
    assert plan.held == {5: {1}, 6: {1}}  # player 1 waits for an earlier row; so does row 6
    assert [(c.params["peer_ids"], c.row_ids) for c in plan.calls] == [("2,3", (5,)), ("2", (7,))]
    assert plan.row_ids() == {5, 6, 7}


def test_an_invite_without_its_link_and_a_long_text_hold_later_rows_of_their_peers() -> None:
    invite = row(1, [1], "Беседа: {link}", channel=OutboxChannel.INVITE,
                 payload={"chat_peer_id": 2_000_000_001})  # fmt: skip
    long = row(2, [2], "абзац\n\n" * 2000)  # two pieces
    later = row(3, [1, 2, 3], "Ночь")
    plan = plan_round([invite, long, later], group_id=1)
    assert plan.held == {3: {1, 2}}
    assert [c.method for c in plan.calls] == [
        "messages.getInviteLink",
        "messages.send",  # the first piece to 2
        "messages.send",  # «Ночь» to 3 only
    ]
    assert plan.calls[2].params["peer_ids"] == "3"


def test_a_held_row_is_settled_held_and_a_partly_held_one_too() -> None:
    rows = [row(5, [1, 2], "День 2"), row(6, [1], "Ответ")]
    plan = plan_round(rows, group_id=1, held={5: {1}})
    (call,) = plan.calls
    answer = CallResult(value=[{"peer_id": 2, "message_id": 50, "conversation_message_id": 3}])
    settled = {s.outbox_id: s for s in settle_round(rows, plan, [(call, answer)])}
    held = settled[5].result
    assert settled[5].outcome == "held" and held is not None and held["sent"] == {"2": 50}
    assert settled[6].outcome == "held"


# --- sending in order -----------------------------------------------------------------------------


class FakeTransport:
    """Answers each request at once: ``refuse`` peers get error 10 (the whole request fails
    when it carries one), the others are delivered; records what was sent, batch by batch."""

    def __init__(self, refuse: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.refuse = refuse
        self.batches: list[list[Request]] = []

    def send(self, requests: Sequence[Request], *, timeout: float) -> list[list[CallResult]]:
        self.batches.append(list(requests))
        return [self._answer(r) for r in requests]

    def _answer(self, request: Request) -> list[CallResult]:
        peers = {p for call in request.calls for _, p in call.targets}
        if peers & self.refuse:
            return request.failed(E10)
        results: list[CallResult] = []
        for call in request.calls:
            value: Any = [{"peer_id": p, "message_id": 1} for _, p in call.targets]
            results.append(CallResult(value=value))
        return results


def send_call(row_id: int, peers: list[int]) -> Call:
    return Call(
        token="group",
        method="messages.send",
        params={"peer_ids": ",".join(map(str, peers)), "message": "x", "random_id": row_id},
        kind="send",
        row_ids=(row_id,),
        targets=tuple((row_id, p) for p in peers),
    )


def test_requests_without_shared_peers_go_at_once() -> None:
    requests = [Request("group", [send_call(1, [1])]), Request("group", [send_call(2, [2])])]
    transport = FakeTransport()
    send_in_order(transport, requests, timeout=5)
    assert [len(batch) for batch in transport.batches] == [2]


def test_a_request_failed_for_a_peer_holds_that_peer_in_the_later_requests() -> None:
    first = Request("group", [send_call(1, [1])])
    other = Request("group", [send_call(2, [2])])
    second = Request("group", [send_call(3, [1, 2, 3]), send_call(4, [1])])
    transport = FakeTransport(refuse={1})
    replies = send_in_order(transport, [first, other, second], timeout=5)
    assert [len(batch) for batch in transport.batches] == [2, 1]  # the third waits
    (sent,) = transport.batches[1]
    assert [c.params["peer_ids"] for c in sent.calls] == ["2,3"]  # row 4 (to 1 only) stays
    assert replies[0][0].failure == E10 and replies[1][0].ok
    assert replies[2][0].held == (1,) and replies[2][0].value is not None
    assert replies[2][1].held == (1,) and replies[2][1].value is None


def test_what_holds_a_peer_back() -> None:
    call = send_call(1, [1, 2, 3])
    answer = CallResult(
        value=[
            {"peer_id": 1, "message_id": 9},
            {"peer_id": 2, "message_id": 0, "error": {"code": 901, "description": "no"}},
            {"peer_id": 3, "message_id": 0, "error": {"code": 10, "description": "internal"}},
        ]
    )
    assert undelivered(call, answer) == {3}  # 901 is given up: later rows may go to 2
    assert undelivered(call, CallResult(failure=E901)) == set()
    assert undelivered(call, CallResult(failure=E10)) == {1, 2, 3}
    edit = Call("group", "messages.edit", {}, "edit", (5,), ((5, 1),))
    assert undelivered(edit, CallResult(failure=Failure(909, "too old"))) == {1}
    piece = Call("group", "messages.send", {}, "send", (6,), ((6, 1),), part=0, parts=2)
    assert undelivered(piece, CallResult(value=[{"peer_id": 1, "message_id": 3}])) == {1}
