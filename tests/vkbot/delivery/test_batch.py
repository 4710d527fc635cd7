"""Packing calls into ``execute`` (vkbot/delivery/batch.py) — pure. The generated VKScript is
checked with the local VK server's own parser and interpreter."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localvk.errors import VKError
from localvk.execute import compile_code, run_program
from outbox.outcomes import Failure
from tests.vkbot.delivery.plan_support import no_offset  # noqa: F401 (a fixture)
from vkbot.delivery.batch import Call, Request, execute_code, pack, split_execute

pytestmark = pytest.mark.usefixtures("no_offset")


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


def message(row: int, peers: list[int]) -> Call:
    return Call(
        "group",
        "messages.send",
        {"peer_ids": ",".join(map(str, peers)), "message": f"m{row}", "random_id": row},
        "send",
        (row,),
        targets=tuple((row, peer) for peer in peers),
    )


def test_a_message_after_one_vk_failed_inside_the_execute_is_held_not_sent() -> None:
    """VK fails the first message to player 1 on its own (error 10 inside the program): the
    second message to player 1 does not run, the message to player 2 does, and so does a
    later message to player 3 whose earlier message went."""
    calls = [message(1, [1]), message(2, [2, 3]), message(3, [1]), message(4, [3])]
    code = execute_code(calls)
    assert code.startswith("var a0=API.messages.send(") and code.endswith("return [a0,a1,a2,a3];")
    sent: list[str] = []

    def call(method: str, args: dict[str, Any]) -> Any:
        if args["message"] == "m1":
            raise VKError(10)
        sent.append(args["message"])
        return [{"peer_id": int(p), "message_id": 9} for p in args["peer_ids"].split(",")]

    run = run_program(compile_code(code), call)
    assert sent == ["m2", "m4"]
    results = Request("group", calls).results(
        {"response": run.response, "execute_errors": run.errors}
    )
    assert results[0].failure == Failure(10, "Internal server error")
    assert results[1].ok and not results[1].held
    assert results[2].held == (1,) and results[2].value is None and results[2].ok
    assert results[3].ok and results[3].value[0]["peer_id"] == 3


def test_calls_to_different_peers_keep_the_single_statement() -> None:
    calls = [message(1, [1]), message(2, [2])]
    assert execute_code(calls).startswith("return [API.messages.send(")


def test_an_execute_answer_that_does_not_fit_fails_every_call() -> None:
    calls = [Call("group", "messages.send", {}, "send", (n,)) for n in range(3)]
    results = split_execute(calls, {"response": [1, 2]})
    assert all(r.failure is not None and r.failure.code is None for r in results)
