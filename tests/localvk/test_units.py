"""Pieces of the local VK without a server: the VKScript subset, keyboards, parameters and
generated names."""

from __future__ import annotations

import re
from typing import Any

import pytest

from localvk.errors import VKError
from localvk.execute import ApiCall, ArrayExpr, Literal, compile_code, run_program
from localvk.keyboard import validate_keyboard
from localvk.names import generated_name
from localvk.params import Params


def test_compile_the_generated_subset() -> None:
    code = """
        // deliver a batch
        API.messages.send({"peer_id": 1, "message": "a;b", "random_id": 1});
        /* and answer */
        return [API.messages.send({"peer_id": 2, "message": "]", "random_id": 2}),
                [1, {"k": null}], true]
    """
    first, second = compile_code(code)
    assert first.expr == ApiCall("messages.send", {"peer_id": 1, "message": "a;b", "random_id": 1})
    assert not first.is_return and second.is_return
    assert isinstance(second.expr, ArrayExpr)
    assert second.expr.items[1] == ArrayExpr((Literal(1), Literal({"k": None})))


@pytest.mark.parametrize(
    "code",
    ["return", "API.messages.send({}", "API.messages({});", "return [1 2];", "x;", "/* open"],
)
def test_compile_errors_are_error_12(code: str) -> None:
    with pytest.raises(VKError) as caught:
        compile_code(code)
    assert caught.value.code == 12


def test_run_program_stops_at_return_and_counts_calls() -> None:
    calls: list[str] = []

    def call(method: str, args: dict[str, Any]) -> Any:
        calls.append(method)
        if method == "bad.call":
            raise VKError(15)
        return len(calls)

    program = compile_code("API.a.b(); return [API.bad.call(), API.c.d()]; API.never.runs();")
    result = run_program(program, call)
    assert result.response == [False, 3] and calls == ["a.b", "bad.call", "c.d"]
    assert result.errors == [{"method": "bad.call", "error_code": 15, "error_msg": "Access denied"}]


def test_variables_and_if_run_a_call_only_when_the_earlier_ones_succeeded() -> None:
    calls: list[str] = []

    def call(method: str, args: dict[str, Any]) -> Any:
        calls.append(method)
        if method == "bad.call":
            raise VKError(10)
        return 7

    program = compile_code(
        "var a0 = API.bad.call(); var a1 = API.a.b();"
        " var a2 = 0; if (a0 && a1) { a2 = API.never.runs(); }"
        ' var a3 = 0; if (a1) { a3 = API.c.d({"x": [1]}); }'
        " var a4 = 0; if (a1 || a0) { a4 = API.e.f(); } return [a0, a1, a2, a3, a4];"
    )
    result = run_program(program, call)
    assert calls == ["bad.call", "a.b", "c.d", "e.f"]
    assert result.response == [False, 7, 0, 7, 7] and result.calls == 4
    assert [error["error_code"] for error in result.errors] == [10]


@pytest.mark.parametrize(
    "code",
    [
        "return a;",  # not declared
        "a = 1; return a;",
        "var true = 1;",
        "if (a) { return 1; }",
        "var a = 1; if (a && a || a) { return 1; }",
        "var a = 1; if (a) { return 1;",
        "var a = 1; if a { return 1; }",
        pytest.param("var a = 1; " + "if (a) { " * 5000 + "return 1;" + " }" * 5000, id="deep-if"),
        pytest.param("return " + "[" * 5000 + "]" * 5000 + ";", id="deep-array"),
    ],
)
def test_names_and_conditions_outside_the_subset_are_error_12(code: str) -> None:
    with pytest.raises(VKError) as caught:
        compile_code(code)
    assert caught.value.code == 12


def test_keyboard_accepts_object_payloads_and_checks_buttons() -> None:
    keyboard = validate_keyboard(
        '{"inline": true, "buttons": [[{"action": {"type": "callback", "label": "Да",'
        ' "payload": {"cmd": "yes"}}, "color": "positive"}]]}'
    )
    assert keyboard["inline"] is True
    bad = [
        '{"buttons": [[{"action": {"type": "text"}}]]}',  # no label
        '{"buttons": [[{"action": {"type": "teleport", "label": "x"}}]]}',
        '{"buttons": [[{"action": {"type": "text", "label": "x"}, "color": "pink"}]]}',
        '{"buttons": [[{"action": {"type": "text", "label": "' + "x" * 41 + '"}}]]}',
        '{"buttons": [[]]}',
        '{"inline": true, "one_time": true, "buttons": []}',
        '{"buttons": [[{"action": {"type": "text", "label": "x", "payload": "{oops"}}]]}',
    ]
    for raw in bad:
        with pytest.raises(VKError) as caught:
            validate_keyboard(raw)
        assert caught.value.code == 911, raw


def test_params_validation() -> None:
    params = Params({"a": "12", "b": "x", "c": "1,2,3", "d": "true"})
    assert params.get_int("a") == 12 and params.get_int_list("c") == [1, 2, 3]
    assert params.get_bool("d") is True and params.get_int("missing", default=4) == 4
    for read in (
        lambda: params.get_int("b"),
        lambda: params.req_int("missing"),
        lambda: params.get_int("a", maximum=10),
        lambda: params.get_int_list("c", max_items=2),
    ):
        with pytest.raises(VKError) as caught:
            read()
        assert caught.value.code == 100


def test_generated_names_are_stable_russian_and_agree_in_gender() -> None:
    assert generated_name(12345) == generated_name(12345)
    names = {generated_name(uid)[:2] for uid in range(1, 200)}
    assert len(names) > 150
    for uid in range(1, 200):
        first, last, sex = generated_name(uid)
        assert re.fullmatch(r"[А-ЯЁ][а-яё]+", first) and re.fullmatch(r"[А-ЯЁ][а-яё]+", last)
        assert last.endswith(("а", "ая")) == (sex == 1)
