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


def test_an_execute_answer_that_does_not_fit_fails_every_call() -> None:
    calls = [Call("group", "messages.send", {}, "send", (n,)) for n in range(3)]
    results = split_execute(calls, {"response": [1, 2]})
    assert all(r.failure is not None and r.failure.code is None for r in results)
