"""The subset of VKScript the project generates for ``execute``.

A program is a sequence of statements separated by ``;``::

    API.messages.send({"peer_id": 1, "message": "x", "random_id": 5});
    var a = API.messages.send({...});
    var b = 0;
    if (a && a) { b = API.messages.send({...}); }
    return [a, b, API.users.get({"user_ids": "1,2"}), 42];

A statement is an expression, ``var name = expression``, ``name = expression`` (a declared
name), ``if (condition) { statements }`` or ``return expression``. An expression is an API
call with one JSON object argument (or none), an array of expressions, a JSON literal or a
declared name; a condition is names or literals joined by ``&&`` or ``||``, true as in
JavaScript (``false``, ``0``, ``""`` and ``null`` are false). ``//`` and ``/* */`` comments
are allowed. Anything else is error 12 "Unable to compile code". Calls run in order; as in
VK, a failing call yields ``false`` and adds an entry to ``execute_errors``; the 26th call
stops the program with error 13 (the calls before it have run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from .errors import VKError

MAX_API_CALLS = 25

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words that are not names: JSON's literals and the statements' keywords.
_RESERVED = frozenset({"true", "false", "null", "var", "if", "else", "return", "while"})
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


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Condition:
    """Operands joined by one operator, ``&&`` or ``||``."""

    operator: str
    operands: tuple[Name | Literal, ...]


Expr = Union[ApiCall, ArrayExpr, Literal, Name]  # noqa: UP007 (a runtime alias used recursively)


@dataclass(frozen=True)
class Statement:
    """``expr``; ``return expr``; ``var target = expr`` / ``target = expr``; or, with
    ``condition``, ``if (condition) { body }``."""

    expr: Expr | None
    is_return: bool = False
    target: str | None = None
    condition: Condition | None = None
    body: tuple[Statement, ...] = ()


class CompileError(VKError):
    def __init__(self, detail: str) -> None:
        super().__init__(12, detail)


class _Parser:
    def __init__(self, code: str) -> None:
        self.code = code
        self.pos = 0
        self.names: set[str] = set()

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
            statements.append(self.statement())
        return statements

    def statement(self) -> Statement:
        if self.keyword("if"):
            self.expect("(")
            condition = self.condition()
            self.expect(")")
            self.expect("{")
            body: list[Statement] = []
            while not self.accept("}"):
                if self.at_end():
                    raise self.fail("expected '}'")
                if self.accept(";"):
                    continue
                body.append(self.statement())
            return Statement(None, condition=condition, body=tuple(body))
        target: str | None
        if self.keyword("var"):
            target = self.ident()
            if target in _RESERVED:
                raise self.fail(f"{target!r} is reserved")
            self.expect("=")
            statement = Statement(self.expr(), target=target)
            self.names.add(target)
        elif self.keyword("return"):
            statement = Statement(self.expr(), is_return=True)
        else:
            start = self.pos
            target = self.ident() if self.peek_name() else None
            if target is not None and self.accept("="):
                self.known(target)
                statement = Statement(self.expr(), target=target)
            else:
                self.pos = start
                statement = Statement(self.expr())
        self.skip()
        if not self.accept(";") and not self.at_end() and not self.code.startswith("}", self.pos):
            raise self.fail("expected ';'")
        return statement

    def peek_name(self) -> bool:
        self.skip()
        match = _IDENT.match(self.code, self.pos)
        return match is not None and match.group() not in _RESERVED and match.group() != "API"

    def known(self, name: str) -> Name:
        if name not in self.names:
            raise self.fail(f"{name!r} is not defined")
        return Name(name)

    def condition(self) -> Condition:
        operands = [self.operand()]
        operator = ""
        while True:
            for candidate in ("&&", "||"):
                if self.accept(candidate):
                    if operator and operator != candidate:
                        raise self.fail("mixed '&&' and '||' without parentheses")
                    operator = candidate
                    operands.append(self.operand())
                    break
            else:
                return Condition(operator or "&&", tuple(operands))

    def operand(self) -> Name | Literal:
        if self.peek_name():
            return self.known(self.ident())
        return Literal(self.json_value())

    def expr(self) -> Expr:
        self.skip()
        match = _IDENT.match(self.code, self.pos)
        if match and match.group() == "API":
            return self.api_call()
        if self.peek_name():
            return self.known(self.ident())
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
    """Parse a program; raise :class:`CompileError` (VK's error 12) if it is not in the subset
    or nests arrays or ``if`` blocks deeper than the interpreter's stack allows."""
    try:
        return _Parser(code).program()
    except RecursionError:
        raise CompileError("nested too deeply") from None


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
    variables: dict[str, Any] = {}

    def evaluate(expr: Expr) -> Any:
        if isinstance(expr, Literal):
            return expr.value
        if isinstance(expr, Name):
            return variables.get(expr.name)
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

    def holds(condition: Condition) -> bool:
        values = (truthy(evaluate(operand)) for operand in condition.operands)
        return all(values) if condition.operator == "&&" else any(values)

    def run(block: Sequence[Statement]) -> bool:
        """Run ``block``; True once a ``return`` has run."""
        for statement in block:
            if statement.condition is not None:
                if holds(statement.condition) and run(statement.body):
                    return True
                continue
            assert statement.expr is not None
            value = evaluate(statement.expr)
            if statement.target is not None:
                variables[statement.target] = value
            if statement.is_return:
                result.response = value
                return True
        return False

    run(statements)
    return result


def truthy(value: Any) -> bool:
    """JavaScript's truth: ``false``, ``0``, ``""`` and ``null`` are false; arrays and objects,
    even empty, are true."""
    if isinstance(value, list | dict):
        return True
    return bool(value)
