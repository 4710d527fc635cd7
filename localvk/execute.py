"""The subset of VKScript the project generates for ``execute``.

A program is a sequence of statements separated by ``;``::

    API.messages.send({"peer_id": 1, "message": "x", "random_id": 5});
    return [API.messages.send({...}), API.users.get({"user_ids": "1,2"}), 42];

An expression is an API call with one JSON object argument (or none), an array of
expressions, or a JSON literal. ``//`` and ``/* */`` comments are allowed. Anything else is
error 12 "Unable to compile code". Calls run in order; as in VK, a failing call yields
``false`` and adds an entry to ``execute_errors``; the 26th call stops the program with
error 13 (the calls before it have run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

from .errors import VKError

MAX_API_CALLS = 25

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ApiCall:
    method: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ArrayExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Literal:
    value: Any


Expr = Union[ApiCall, ArrayExpr, Literal]  # noqa: UP007 (a runtime alias used recursively)


@dataclass(frozen=True)
class Statement:
    expr: Expr
    is_return: bool


class CompileError(VKError):
    def __init__(self, detail: str) -> None:
        super().__init__(12, detail)


class _Parser:
    def __init__(self, code: str) -> None:
        self.code = code
        self.pos = 0

    def fail(self, what: str) -> CompileError:
        line = self.code.count("\n", 0, self.pos) + 1
        return CompileError(f"{what} at line {line}")

    def skip(self) -> None:
        code = self.code
        while self.pos < len(code):
            if code[self.pos].isspace():
                self.pos += 1
            elif code.startswith("//", self.pos):
                end = code.find("\n", self.pos)
                self.pos = len(code) if end < 0 else end + 1
            elif code.startswith("/*", self.pos):
                end = code.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                break

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.code)

    def accept(self, token: str) -> bool:
        self.skip()
        if self.code.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            raise self.fail(f"expected {token!r}")

    def keyword(self, word: str) -> bool:
        self.skip()
        match = _IDENT.match(self.code, self.pos)
        if match and match.group() == word:
            self.pos = match.end()
            return True
        return False

    def ident(self) -> str:
        self.skip()
        match = _IDENT.match(self.code, self.pos)
        if not match:
            raise self.fail("expected a name")
        self.pos = match.end()
        return match.group()

    def program(self) -> list[Statement]:
        statements: list[Statement] = []
        while not self.at_end():
            if self.accept(";"):
                continue
            is_return = self.keyword("return")
            expr = self.expr()
            statements.append(Statement(expr, is_return))
            if not self.accept(";") and not self.at_end():
                raise self.fail("expected ';'")
        return statements

    def expr(self) -> Expr:
        self.skip()
        match = _IDENT.match(self.code, self.pos)
        if match and match.group() == "API":
            return self.api_call()
        if self.accept("["):
            items: list[Expr] = []
            if not self.accept("]"):
                while True:
                    items.append(self.expr())
                    if self.accept("]"):
                        break
                    self.expect(",")
            return ArrayExpr(tuple(items))
        return Literal(self.json_value())

    def api_call(self) -> ApiCall:
        self.ident()  # "API"
        parts: list[str] = []
        while self.accept("."):
            parts.append(self.ident())
        if len(parts) != 2:
            raise self.fail("expected API.section.method")
        self.expect("(")
        args: dict[str, Any] = {}
        if not self.accept(")"):
            value = self.json_value()
            if not isinstance(value, dict):
                raise self.fail("API method argument should be an object")
            args = value
            self.expect(")")
        return ApiCall(".".join(parts), args)

    def json_value(self) -> Any:
        self.skip()
        try:
            value, end = _DECODER.raw_decode(self.code, self.pos)
        except ValueError:
            raise self.fail("expected a JSON value") from None
        self.pos = end
        return value


def compile_code(code: str) -> list[Statement]:
    """Parse a program; raise :class:`CompileError` (VK's error 12) if it is not in the subset."""
    return _Parser(code).program()


# call(method, args) -> the call's response; raises VKError when the call fails.
CallFn = Callable[[str, dict[str, Any]], Any]


@dataclass
class ExecuteResult:
    response: Any
    errors: list[dict[str, Any]]
    calls: int


def run_program(statements: list[Statement], call: CallFn) -> ExecuteResult:
    """Evaluate the statements; stop at the first ``return``."""
    result = ExecuteResult(response=None, errors=[], calls=0)

    def evaluate(expr: Expr) -> Any:
        if isinstance(expr, Literal):
            return expr.value
        if isinstance(expr, ArrayExpr):
            return [evaluate(item) for item in expr.items]
        result.calls += 1
        if result.calls > MAX_API_CALLS:
            raise VKError(13, "Too many API calls")
        try:
            return call(expr.method, expr.args)
        except VKError as exc:
            result.errors.append(
                {"method": expr.method, "error_code": exc.code, "error_msg": exc.message}
            )
            return False

    for statement in statements:
        value = evaluate(statement.expr)
        if statement.is_return:
            result.response = value
            break
    return result
