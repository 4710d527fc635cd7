"""The language of the texts a GM writes (a theme's slots, rewritten per game in the panel): a
sandboxed subset of the message templates, rendered within a budget.

A GM's text is untrusted input that runs on the server whenever a message needs its slot — in a
web worker for the panel's preview, in the deadline tick for every community's phases. So it
gets a language of its own rather than the message templates' full engine:

- **What it may say** (``gameplay.templatetags.gmtext``): variables (``{{ number }}``,
  ``{{ executed.name }}``), the grammar filters and tags (``case``, ``count``, ``g``, ``role``,
  ``item``…), a few filters that never allocate by their argument (``length``, ``first``,
  ``default``…), ``{% if %}`` and ``{% for %}`` — a loop over the game's own lists only (the
  seats, the tally, the deaths…; never a literal, a string or a mapping). Nothing reads a file
  or the server (no ``include``, ``extends``, ``load``, ``debug``), nothing grows by an
  argument (no ``center``, ``ljust``, ``stringformat``, ``floatformat``, ``lorem``, ``add``).
- **What it sees** (:mod:`gameplay.gmtext_data`): a copy of the message's context made of
  plain data (strings, numbers, :class:`~gameplay.messages.Person`, read-only tuples and
  mappings of them, :func:`~gameplay.gmtext_data.data_of`); no model, no theme object, no list
  whose methods could change the message around it.
- **What it may cost** (:class:`Budget`): every loop iteration charges the steps its body
  takes, every grammar call charges for the words it sends through pymorphy3 or Petrovich (a
  repeat within the render is nearly free); a render that runs out of steps, or whose output
  passes the slot's length, stops at once. Loops nest at most :data:`MAX_LOOP_DEPTH` deep and
  tags at most :data:`MAX_BLOCK_DEPTH`, and a stored text is at most :data:`SOURCE_MAX`
  characters.

Why this bounds the time without a timer (no thread, no signal, safe in a web worker and in
the tick): the work of a render is the number of nodes it renders plus the grammar calls it
makes. Outside loops that is bounded by the source's length; inside, every iteration is paid
for before it runs, at its body's static size; each filter's work is bounded by its input,
which is a context value or a literal of the text (no filter multiplies its input by an
argument); and the grammar calls, the only expensive steps, are paid by the word. So a render
does at most :data:`STEPS` steps' worth of work whatever the text, and a step is a few
microseconds. The output is checked after every loop iteration, so memory stays within the
slot's limit plus one iteration.

Errors are :class:`~gameplay.messages.MessageError`: the line of the GM's text (1-based, as
the GM typed it) and the reason, worded in ``templates/messages/gm/text_*.txt``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Hashable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, cast

from django.template import Context, Engine, Template, TemplateSyntaxError
from django.template.base import DebugLexer, Lexer, NodeList, TextNode, TokenType, VariableNode
from django.template.defaulttags import ForNode, IfNode

from gameplay import messages
from gameplay.messages import MessageError

#: VK's limit on a private message's text (docs/vk.md).
PRIVATE_MESSAGE_MAX = 4096
#: The board's cap on one post (``MAX_COMMENT_LENGTH`` of ``vkbot/delivery/rows.py``; a test
#: keeps the two equal, as gameplay does not import the bot).
BOARD_POST_MAX = 9000
#: Characters of a GM's text as typed (and as stored).
SOURCE_MAX = 4000
#: The steps one render may take (about a microsecond of work each).
STEPS = 10_000
#: ``{% for %}`` inside ``{% for %}``, at most this deep.
MAX_LOOP_DEPTH = 3
#: ``{% if %}`` and ``{% for %}`` inside each other, at most this deep.
MAX_BLOCK_DEPTH = 8

#: Tags, variables and filters (``{% … %}``, ``{{ … }}``, ``|…``) in one text, at most:
#: parsing them is the one cost outside the budget (25–50 µs each, once per process: compiled
#: texts are kept).
MAX_TAGS = 120

#: What a step costs, measured on the project's 2-core machine (a step is about a
#: microsecond): a node rendered; a word of a name through Petrovich and pymorphy3; a word
#: through pymorphy3's numeral agreement, its inflection, its agreement with an item's name.
#: A value already worked out within the same render costs :data:`REPEAT_STEPS`.
NODE_STEPS = 4
NAME_WORD_STEPS = 150
PLURAL_WORD_STEPS = 800
INFLECT_WORD_STEPS = 100
AGREE_WORD_STEPS = 800
REPEAT_STEPS = 1

_OPENERS = {"{{": "var", "{%": "tag", "{#": "comment"}
_OPENER_RE = re.compile(r"\{\{|\{%|\{#")
_BLOCKS = {"if": "endif", "for": "endfor", "comment": "endcomment"}


class TextRefusal(MessageError):
    """Why a GM's text does not compile or render: ``code`` names its wording,
    ``templates/messages/gm/text_<code>.txt``."""

    def __init__(self, code: str, reason: str, line: int = 0) -> None:
        super().__init__(reason, line)
        self.code = code


#: The refusals that depend on the size of the game (a text may pass for 7 seats, not 26).
BUDGET_CODES = frozenset({"too_costly", "too_long_output"})


def refusal(code: str, line: int = 0, **context: Any) -> TextRefusal:
    """The refusal ``code`` at ``line``, worded with ``context``."""
    return TextRefusal(code, messages.render(f"gm/text_{code}", **context), line)


class Refused(TemplateSyntaxError):
    """Raised while parsing (by the GM language's own tags): worded by ``gm/text_<code>``."""

    def __init__(self, code: str, **context: Any) -> None:
        super().__init__(code)
        self.code = code
        self.context = context


class _Overrun(Exception):  # noqa: N818 - internal: the budget stops the render
    """The render ran out of steps or of output: it stops where it is."""


@dataclass
class Budget:
    """What one render may still spend: ``steps`` of work, ``output`` characters. The first
    overrun is kept (``overrun``, and where: ``position`` in the prepared source)."""

    steps: int
    output: int
    overrun: str = ""
    position: int | None = None
    memo: dict[Hashable, Any] = field(default_factory=dict)

    def charge(self, steps: int, position: int | None = None) -> None:
        self.steps -= steps
        if self.steps < 0:
            self.fail("steps", position)

    def fail(self, kind: str, position: int | None = None) -> None:
        self.overrun = self.overrun or kind
        if self.position is None:
            self.position = position
        raise _Overrun(kind)

    def cached(self, key: Hashable, steps: int, compute: Callable[[], Any]) -> Any:
        """``compute()``, charged ``steps`` the first time in this render and
        :data:`REPEAT_STEPS` after."""
        if key in self.memo:
            self.charge(REPEAT_STEPS)
            return self.memo[key]
        self.charge(steps)
        value = self.memo[key] = compute()
        return value


_budget: ContextVar[Budget | None] = ContextVar("gmtext_budget", default=None)


def budget() -> Budget:
    """The budget of the render under way (the GM language's tags and filters charge it)."""
    current = current_budget()
    if current is None:
        raise RuntimeError("a GM's text renders through gameplay.gmtext.render only")
    return current


def current_budget() -> Budget | None:
    """The budget of the render under way, None outside a render."""
    return _budget.get()


class _Engine(Engine):
    """Django's engine with none of Django's tags and filters: only the GM language's."""

    default_builtins: ClassVar[list[str]] = []


@lru_cache(maxsize=1)
def engine() -> Engine:
    return _Engine(
        dirs=[],
        loaders=[],
        autoescape=False,
        debug=True,  # tokens keep their position: errors name the line
        string_if_invalid=messages.MISSING,
        builtins=["gameplay.templatetags.gmtext"],
        libraries={},
    )


@dataclass(frozen=True)
class GmText:
    """A compiled GM's text: the template, its steps outside any loop, and where each of its
    tags starts in the prepared source → its line in the source as typed."""

    source: str
    template: Template
    weight: int
    lines: tuple[tuple[int, int], ...]

    def line_at(self, position: int | None) -> int:
        return _line_at(self.lines, position)

    def line_of_variable(self, name: str) -> int:
        """The line of the first ``{{ name… }}`` of the text (0 if none)."""
        for token in Lexer(self.source).tokenize():
            if token.token_type == TokenType.VAR and token.contents.startswith(name):
                assert token.lineno is not None  # the lexer numbers every token
                return token.lineno
        return 0


def _line_at(lines: tuple[tuple[int, int], ...], position: int | None) -> int:
    """The typed line of the tag starting at (or last before) ``position`` of the prepared
    source."""
    if position is None or not lines:
        return 0
    i = bisect.bisect_right([start for start, _ in lines], position) - 1
    return lines[max(i, 0)][1]


@lru_cache(maxsize=512)
def compile_text(source: str) -> GmText:
    """A GM's text compiled in the GM language; :class:`MessageError` (with the line) if it
    is too long, leaves a brace open, nests too deep, or uses what the language has not."""
    if len(source) > SOURCE_MAX:
        raise refusal("source_too_long", limit=SOURCE_MAX)
    typed = _scan(source)
    prepared = messages.prepare(source)
    starts = [
        # The debug lexer gives every token its position.
        cast("tuple[int, int]", t.position)[0]
        for t in DebugLexer(prepared).tokenize()
        if t.token_type != TokenType.TEXT
    ]
    lines = tuple(zip(starts, typed, strict=False))
    try:
        template = Template(prepared, engine=engine())
    except TemplateSyntaxError as e:
        info = getattr(e, "template_debug", None) or {}
        line = _line_at(lines, info.get("start"))
        raise _syntax_refusal(e, info, line) from None
    except RecursionError:
        raise refusal("too_deep", limit=MAX_BLOCK_DEPTH) from None
    return GmText(source, template, weight(template.nodelist), lines)


def _scan(source: str) -> list[int]:
    """Before parsing: an opened ``{{``/``{%``/``{#`` left unclosed (Django would print it as
    text), too many tags, blocks nested deeper than allowed — refused with the line. Returns
    the line of each tag, in order."""
    stack: list[str] = []
    lines: list[int] = []
    tags = 0
    for token in Lexer(source).tokenize():
        assert token.lineno is not None  # the lexer numbers every token
        if token.token_type == TokenType.TEXT:
            found = _OPENER_RE.search(token.contents)
            if found:
                line = token.lineno + token.contents.count("\n", 0, found.start())
                raise refusal("unclosed_brace", line, kind=_OPENERS[found.group(0)])
            continue
        lines.append(token.lineno)
        tags += 1 + token.contents.count("|")
        if tags > MAX_TAGS:
            raise refusal("too_many_tags", token.lineno, limit=MAX_TAGS)
        if token.token_type != TokenType.BLOCK or not token.contents.split():
            continue
        name = token.contents.split()[0]
        if name in _BLOCKS:
            stack.append(name)
            if len(stack) > MAX_BLOCK_DEPTH:
                raise refusal("too_deep", token.lineno, limit=MAX_BLOCK_DEPTH)
            if stack.count("for") > MAX_LOOP_DEPTH:
                raise refusal("loop_too_deep", token.lineno, limit=MAX_LOOP_DEPTH)
        elif stack and name == _BLOCKS[stack[-1]]:
            stack.pop()
    return lines


def _syntax_refusal(e: TemplateSyntaxError, info: dict[str, Any], line: int) -> TextRefusal:
    if isinstance(e, Refused):
        return refusal(e.code, line, **e.context)
    msg = str(e)
    quoted = re.search(r"'([^']+)'", msg)
    name = quoted.group(1) if quoted else ""
    if "Invalid block tag" in msg:
        return refusal("unknown_tag", line, tag=name)
    if "Unclosed tag" in msg:
        return refusal("unclosed_tag", line, tag=name)
    if "Invalid filter" in msg:
        return refusal("unknown_filter", line, what=name)
    return refusal("unparsed", line, what=str(info.get("during") or "").strip())


def weight(nodelist: NodeList) -> int:
    """The steps rendering ``nodelist`` once takes, a nested loop's iterations aside (they
    are charged as they run): every node, every filter, every branch of an ``if``."""
    total = 0
    for node in nodelist:
        total += NODE_STEPS
        if isinstance(node, ForNode):
            continue
        if isinstance(node, VariableNode):
            total += NODE_STEPS * len(node.filter_expression.filters)
        elif isinstance(node, IfNode):
            assert node.token is not None  # the parser gives every tag its token
            total += NODE_STEPS * len(node.token.split_contents())
            total += sum(weight(branch) for _, branch in node.conditions_nodelists)
        elif not isinstance(node, TextNode) and node.token is not None:
            total += NODE_STEPS * len(node.token.split_contents())  # a tag and its arguments
    return total


# --- rendering -------------------------------------------------------------------------------


def render(text: GmText, data: Mapping[str, Any], *, output: int, steps: int = STEPS) -> str:
    """``text`` rendered with ``data`` (:func:`gameplay.gmtext_data.data_of`), stripped;
    :class:`MessageError` with the line when it runs out of ``steps``, passes ``output``
    characters, names a variable the message does not have, or a filter fails on its value."""
    spent = Budget(steps=steps, output=output)
    token = _budget.set(spent)
    rendered = ""
    try:
        spent.charge(text.weight)
        rendered = text.template.render(Context(dict(data), autoescape=False))
    except _Overrun:
        pass
    except Exception as e:  # a loop over a non-list, a filter on a value of the wrong kind
        info = getattr(e, "template_debug", None) or {}
        line = text.line_at(info.get("start"))
        if isinstance(e, TextRefusal):
            raise TextRefusal(e.code, e.reason, e.line or line) from None
        if not spent.overrun:
            raise refusal("render_failed", line) from None
    finally:
        _budget.reset(token)
    if spent.overrun == "steps":
        raise refusal("too_costly", text.line_at(spent.position), limit=steps)
    if spent.overrun == "output":
        raise refusal("too_long_output", text.line_at(spent.position), limit=output)
    missing = re.search("\x00missing:(.*?)\x00", rendered)
    if missing:
        name = missing.group(1)
        raise refusal("unknown_variable", text.line_of_variable(name), what=name)
    rendered = rendered.strip()
    if len(rendered) > output:
        raise refusal("too_long_output", limit=output)
    return rendered
