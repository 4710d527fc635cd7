"""Planning a round (grouping, random_id/guid pins, splitting) and packing calls into
``execute`` — pure, no database or network. The generated VKScript is checked with the local
VK server's own parser and interpreter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameplay.models import Outbox, OutboxChannel
from localvk.errors import VKError
from localvk.execute import compile_code, run_program
from outbox.outcomes import Failure
from vkbot.delivery.batch import Call, CallResult, Request, execute_code, pack, split_execute
from vkbot.delivery.outcome import settle_round
from vkbot.delivery.plan import (
    MAX_COMMENT_LENGTH,
    board_guid,
    part_random_id,
    plan_round,
    split_text,
)


@pytest.fixture(autouse=True, scope="module")
def no_offset() -> Any:
    """Pure planning, no database: the deployment's id offset is 0 here, so a row's
    ``random_id`` is its id (``outbox.ids``)."""
    from outbox import ids as deployment

    saved, deployment._offset = deployment._offset, 0
    yield
    deployment._offset = saved


def row(pk: int, peers: list[int], text: str, **fields: Any) -> Outbox:
    fields.setdefault("channel", OutboxChannel.MESSAGE)
    return Outbox(pk=pk, peer_ids=peers, text=text, **fields)


def post(pk: int, text: str, topic: int = 5, **fields: Any) -> Outbox:
    return Outbox(pk=pk, channel=OutboxChannel.BOARD, topic_id=topic, text=text, **fields)


def sends(calls: list[Call]) -> list[tuple[str, str, int]]:
    return [(c.params["message"], c.params["peer_ids"], c.params["random_id"]) for c in calls]


# --- grouping -------------------------------------------------------------------------------------


def test_same_text_to_different_players_is_one_send_under_the_lowest_row_id() -> None:
    rows = [row(10, [1, 2], "Ночь"), row(11, [3], "Ночь"), row(12, [4], "День")]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Ночь", "1,2,3", 10), ("День", "4", 12)]
    assert {pk: r["random_id"] for pk, r in plan.results.items()} == {10: 10, 11: 10, 12: 12}
    assert plan.calls[0].targets == ((10, 1), (10, 2), (11, 3))


def test_rows_sharing_a_player_are_never_merged() -> None:
    rows = [row(10, [1, 2], "Напоминание"), row(11, [2, 3], "Напоминание")]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Напоминание", "1,2", 10), ("Напоминание", "2,3", 11)]


def test_different_keyboards_or_channels_are_not_merged() -> None:
    keyboard = {"one_time": True, "buttons": []}
    rows = [
        row(1, [1], "Ваш ход", keyboard=keyboard),
        row(2, [2], "Ваш ход"),
        row(3, [2_000_000_001], "Ваш ход", channel=OutboxChannel.CHAT),
    ]
    plan = plan_round(rows, group_id=1)
    assert [c.params["random_id"] for c in plan.calls] == [1, 2, 3]
    assert json.loads(plan.calls[0].params["keyboard"]) == keyboard
    assert "keyboard" not in plan.calls[1].params
    assert plan.calls[2].params["peer_id"] == 2_000_000_001  # a chat: peer_id, not peer_ids
    assert "peer_ids" not in plan.calls[2].params


def test_a_recorded_random_id_is_kept_and_only_new_rows_are_grouped() -> None:
    rows = [
        row(5, [1], "Текст", result={"random_id": 3, "sent": {}}),  # grouped with row 3 before
        row(6, [2], "Текст"),
        row(7, [9], "Текст"),
    ]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Текст", "1", 3), ("Текст", "2,9", 6)]
    assert set(plan.results) == {6, 7}  # row 5 has nothing new to record


def test_delivered_and_refused_recipients_are_not_sent_again() -> None:
    done = row(
        1,
        [1, 2, 3],
        "Итоги",
        result={"random_id": 1, "sent": {"1": 4}, "failed": {"2": "VK error 901: x"}},
        attempts=2,  # its second claim
    )
    finished = row(2, [1], "Старое", result={"random_id": 2, "sent": {"1": 5}}, attempts=2)
    plan = plan_round([done, finished], group_id=1)
    assert sends(plan.calls) == [("Итоги", "3", 1)]
    assert [(s.outbox_id, s.outcome) for s in plan.settled] == [(2, "sent")]


def test_a_row_requeued_from_scratch_tries_its_refused_recipients_again() -> None:
    refused = {"random_id": 1, "sent": {"1": 4}, "failed": {"2": "VK error 901: x"}}
    retried = row(1, [1, 2], "Итоги", result=refused, attempts=1)  # attempts reset, claimed
    plan = plan_round([retried], group_id=1)
    assert sends(plan.calls) == [("Итоги", "2", 1)]
    assert plan.results[1] == {"random_id": 1, "sent": {"1": 4}}  # recorded before the send
    again = plan_round([row(1, [1, 2], "Итоги", result=refused, attempts=3)], group_id=1)
    assert again.calls == [] and again.settled[0].outcome == "sent"


def test_more_than_100_recipients_are_chunked_under_one_random_id() -> None:
    plan = plan_round([row(1, list(range(1, 251)), "Всем")], group_id=1)
    assert [len(c.params["peer_ids"].split(",")) for c in plan.calls] == [100, 100, 50]
    assert {c.params["random_id"] for c in plan.calls} == {1}


def test_a_long_message_goes_in_pieces_with_their_own_random_ids() -> None:
    text = "\n".join(f"строка {n:04d}" for n in range(1500))  # ~18 000 characters
    plan = plan_round([row(1, [1, 2], text, keyboard={"buttons": []})], group_id=1)
    (call,) = plan.calls
    assert call.part == 0 and call.parts == 2 and call.params["random_id"] == 1
    assert "keyboard" not in call.params  # the keyboard rides on the last piece
    later = plan_round(
        [
            row(
                1,
                [1, 2],
                text,
                keyboard={"buttons": []},
                result={"random_id": 1, "progress": {"1": 1}},
            )
        ],
        group_id=1,
    )
    assert sorted((c.part, c.params["random_id"]) for c in later.calls) == [
        (0, 1),
        (1, part_random_id(1, 1)),
    ]
    assert "keyboard" in next(c for c in later.calls if c.part == 1).params


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=400))
def test_split_text_keeps_everything_within_the_limit(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert all(len(p) <= limit for p in pieces)
    assert len(pieces) == 1 or all(p.strip() for p in pieces)  # never a blank piece
    assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )


def test_board_posts_of_a_topic_merge_up_to_the_limit() -> None:
    rows = [post(1, "а" * 5000), post(2, "б" * 3000), post(3, "в" * 2000), post(4, "г", topic=6)]
    plan = plan_round(rows, group_id=42)
    comments = [
        (c.params["topic_id"], c.params["guid"], len(c.params["message"])) for c in plan.calls
    ]
    assert comments == [
        (5, board_guid(1), 8002),
        (5, board_guid(3), 2000),
        (6, board_guid(4), 1),
    ]
    assert plan.results[2]["board"] == {
        "guid": board_guid(1),
        "group": [1, 2],
        "parts": 1,
        "comments": {},
    }
    assert all(c.token == "user" and c.params["from_group"] == 1 for c in plan.calls)


def test_a_recorded_board_group_is_resent_as_recorded() -> None:
    record = {"guid": board_guid(1), "group": [1, 2], "parts": 1, "comments": {}}
    rows = [
        post(1, "Первый", result={"board": record}),
        post(2, "Второй", result={"board": record}),
        post(3, "Третий"),
    ]
    plan = plan_round(rows, group_id=42)
    assert [(c.params["guid"], c.params["message"]) for c in plan.calls] == [
        (board_guid(1), "Первый\n\nВторой"),
        (board_guid(3), "Третий"),
    ]
    incomplete = plan_round([post(1, "Первый", result={"board": record})], group_id=42)
    assert incomplete.calls == []  # never another text under a recorded comment's guid
    # The other member was sent or failed meanwhile: the comment is re-sent whole, for row 1.
    alone = plan_round(
        [post(1, "Первый", result={"board": record})], group_id=42, texts={2: "Второй"}
    )
    assert [(c.params["message"], c.row_ids) for c in alone.calls] == [("Первый\n\nВторой", (1,))]
    deleted = plan_round([post(1, "Первый", result={"board": record})], group_id=42, texts={2: ""})
    assert deleted.calls[0].params["message"] == "Первый"


def test_a_long_post_is_split_and_sent_piece_by_piece() -> None:
    text = "\n\n".join("абзац " * 300 for _ in range(8))
    plan = plan_round([post(1, text)], group_id=42)
    (call,) = plan.calls
    assert call.part == 0 and call.parts > 1 and call.params["guid"] == board_guid(1)
    assert len(call.params["message"]) <= MAX_COMMENT_LENGTH
    record = dict(plan.results[1]["board"], comments={"0": 77})
    nxt = plan_round([post(1, text, result={"board": record})], group_id=42)
    assert nxt.calls[0].part == 1 and nxt.calls[0].params["guid"] == f"{board_guid(1)}.1"


def test_board_posts_need_the_community_id() -> None:
    with pytest.raises(ValueError, match="VK_GROUP_ID"):
        plan_round([post(1, "x")], group_id=None)


# --- execute --------------------------------------------------------------------------------------


def test_calls_are_packed_25_to_an_execute_per_token() -> None:
    calls = [
        Call(
            "group",
            "messages.send",
            {"peer_ids": str(n), "message": "x", "random_id": n},
            "send",
            (n,),
        )
        for n in range(1, 53)
    ] + [Call("user", "board.createComment", {"topic_id": 1, "message": "y"}, "board", (99,))]
    requests = pack(calls)
    assert [(r.token, len(r.calls), r.method) for r in requests] == [
        ("group", 25, "execute"),
        ("group", 25, "execute"),
        ("group", 2, "execute"),
        ("user", 1, "board.createComment"),
    ]
    assert requests[3].form() == {"topic_id": "1", "message": "y"}


def test_big_texts_keep_an_execute_under_its_size_bound() -> None:
    calls = [
        Call(
            "group",
            "messages.send",
            {"peer_ids": "1", "message": "ж" * 9000, "random_id": n},
            "send",
            (n,),
        )
        for n in range(10)
    ]
    requests = pack(calls, max_code=40_000)
    assert [len(r.calls) for r in requests] == [4, 4, 2]
    assert all(len(r.form()["code"]) <= 40_000 for r in requests)


def test_the_generated_program_runs_on_the_local_servers_interpreter() -> None:
    tricky = 'кавычки " и \\ обратная черта\nперевод строки \u2028 разделитель </script>'
    calls = [
        Call(
            "group",
            "messages.send",
            {
                "peer_ids": "1,2",
                "message": tricky,
                "random_id": 7,
                "keyboard": json.dumps({"buttons": []}),
            },
            "send",
            (1,),
        ),
        Call("group", "messages.removeChatUser", {"chat_id": 3, "member_id": 4}, "kick", (2,)),
    ]
    code = execute_code(calls)
    assert code.startswith("return [API.messages.send({") and code.endswith("})];")
    seen: list[tuple[str, dict[str, Any]]] = []

    def call(method: str, args: dict[str, Any]) -> Any:
        seen.append((method, args))
        if method == "messages.removeChatUser":
            raise VKError(935)
        return [{"peer_id": 1, "message_id": 5}, {"peer_id": 2, "message_id": 6}]

    result = run_program(compile_code(code), call)
    assert seen == [
        ("messages.send", calls[0].params),
        ("messages.removeChatUser", calls[1].params),
    ]
    answer = {"response": result.response, "execute_errors": result.errors}
    first, second = Request("group", calls).results(answer)
    assert first.ok and first.value[1]["message_id"] == 6
    assert second.failure == Failure(935, "User not found in chat")


def test_an_execute_answer_that_does_not_fit_fails_every_call() -> None:
    calls = [Call("group", "messages.send", {}, "send", (n,)) for n in range(3)]
    results = split_execute(calls, {"response": [1, 2]})
    assert all(r.failure is not None and r.failure.code is None for r in results)


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
    assert first.result["sent"] == {"11": 100}
    assert first.result["failed"] == {"12": "VK error 901: no permission"}
    assert list(first.undelivered) == [12]  # told to the GM now; 13 is retried
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
