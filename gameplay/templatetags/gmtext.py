"""The GM language's tags and filters (``gameplay.gmtext``): the only ones its engine has.

``if``; ``for`` over the game's own lists, each iteration paid for; the grammar of
``gameplay.templatetags.grammar`` with every call charged to the render's budget; and Django's
filters that never allocate by their argument. Everything else — ``include``, ``extends``,
``load``, ``debug``, ``with``, ``lorem``, ``center``, ``stringformat``… — is not here, so a
text using it does not compile.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, cast

from django import template
from django.template import defaultfilters, defaulttags
from django.template.base import FilterExpression, NodeList, Parser, Token, Variable
from django.template.defaulttags import ForNode

from gameplay import gmtext, gmtext_data, grammar
from gameplay.messages import Person
from gameplay.rules import Item, Role

from . import grammar as grammar_tags

register = template.Library()

register.tag("if", defaulttags.do_if)
register.tag("comment", defaulttags.comment)

#: Django's filters a GM's text may use: none of them grows by its argument.
for _name in (
    "capfirst",
    "default",
    "default_if_none",
    "divisibleby",
    "first",
    "last",
    "length",
    "lower",
    "title",
    "upper",
    "yesno",
):
    register.filter(_name, getattr(defaultfilters, _name))

# Shared across renders (the budget still charges every first use within a render).
_decline = lru_cache(maxsize=4096)(grammar.decline_name)
_inflect = lru_cache(maxsize=1024)(grammar.inflect)
_plural = lru_cache(maxsize=1024)(grammar.plural)
_agree = lru_cache(maxsize=256)(grammar.agree)


def _words(*texts: Any) -> int:
    return max(1, sum(len(str(t).split()) for t in texts))


def _morph(kind: str, per_word: int, compute: Any, *args: Any) -> Any:
    """A pymorphy3 call, charged ``per_word`` for each word it parses."""
    steps = per_word * _words(*(a for a in args if isinstance(a, str)))
    return gmtext.budget().cached((kind, *args), steps, lambda: compute(*args))


def _plural_of(n: Any, phrase: str) -> str:
    per_word = gmtext.PLURAL_WORD_STEPS
    return str(_morph("plural", per_word, _plural, grammar.agreement(int(n)), str(phrase)))


def _person_case(value: Any, case_name: str, *, number: bool) -> str:
    name = value.name if isinstance(value, Person) else str(value)
    sex = value.sex if isinstance(value, Person) else grammar.UNKNOWN
    steps = gmtext.NAME_WORD_STEPS * _words(name)
    declined = gmtext.budget().cached(
        ("name", name, case_name, sex), steps, lambda: _decline(name, str(case_name), sex)
    )
    if number and isinstance(value, Person) and value.number:
        return f"№{value.number} {declined}"
    return declined


@register.filter
def case(value: Any, case_name: str) -> Any:
    """A Person («№22 Сергея Воробьёва»), a name or a list of them in ``case_name``."""
    if isinstance(value, list | tuple):
        return [_person_case(v, case_name, number=True) for v in value]
    return _person_case(value, case_name, number=True)


@register.filter
def name_case(value: Any, case_name: str) -> str:
    """The name alone, without the seat number."""
    return _person_case(value, case_name, number=False)


@register.filter
def count(n: Any, phrase: str) -> str:
    """«3 голоса»."""
    return f"{int(n)} {_plural_of(n, phrase)}"


@register.filter
def plural(n: Any, phrase: str) -> str:
    """«голоса» (for 3): the phrase agreed, without the number."""
    return _plural_of(n, phrase)


@register.filter
def join_ru(items: Any) -> str:
    """«а, б и в»."""
    items = list(items) if isinstance(items, list | tuple) else [items]
    gmtext.budget().charge(gmtext.NODE_STEPS * len(items))
    return grammar.join([str(i) for i in items])


register.filter("lower_first", grammar_tags.lower_first)
register.filter("upper_first", grammar_tags.upper_first)
register.filter("sep", grammar_tags.sep)
register.simple_tag(grammar_tags.g, name="g")
register.simple_tag(grammar_tags.g_plural, name="g_plural")


def _theme_word(context: template.Context, kind: str, key: str, default: str) -> str:
    words = context.get(kind) or {}
    return str(words.get(key) or default) if isinstance(words, Mapping) else default


@register.simple_tag(takes_context=True)
def role(context: template.Context, value: Any, case_name: str = "nomn") -> str:
    """A role's name, lower case, in ``case_name`` («комиссаром»)."""
    r = Role(str(value))
    word = _theme_word(context, "role_names", r.value, r.title.lower())
    return str(_morph("inflect", gmtext.INFLECT_WORD_STEPS, _inflect, word, str(case_name)))


@register.simple_tag(takes_context=True)
def item(context: template.Context, value: Any) -> str:
    """An item's name in quotes («Старинные часы»)."""
    i = Item(str(value))
    return "«" + _theme_word(context, "item_names", i.value, i.title) + "»"


@register.simple_tag(takes_context=True)
def item_agree(context: template.Context, value: Any, word: str) -> str:
    """``word`` agreed with the item's name: «использованы» for «Старинные часы»."""
    i = Item(str(value))
    name = _theme_word(context, "item_names", i.value, i.title)
    return str(_morph("agree", gmtext.AGREE_WORD_STEPS, _agree, str(word), name))


# --- for: over the game's own lists, each iteration paid for ---------------------------------


class BudgetedForNode(ForNode):
    """``{% for %}`` over a tuple of the context (the game's lists, :func:`gmtext_data.data_of`):
    each iteration is charged its body's steps before it runs, and the output so far is
    checked against the slot's length after it."""

    # What Django's parser gives a for node (the stubs also allow strings and lists).
    sequence: FilterExpression
    nodelist_loop: NodeList
    nodelist_empty: NodeList

    def __init__(self, node: ForNode) -> None:
        super().__init__(
            node.loopvars, node.sequence, node.is_reversed, node.nodelist_loop, node.nodelist_empty
        )
        self.steps = gmtext.NODE_STEPS + gmtext.weight(cast(NodeList, node.nodelist_loop))

    def render(self, context: template.Context) -> str:
        spent = gmtext.budget()
        where = self.token.position[0] if self.token is not None and self.token.position else None
        parent = context["forloop"] if "forloop" in context else {}
        with context.push():
            values = self.sequence.resolve(context, ignore_failures=True)
            if values is None:
                values = ()
            if not isinstance(values, tuple):
                raise gmtext.refusal("loop_not_list", what=str(self.sequence))
            if not values:
                return self.nodelist_empty.render(context)
            if self.is_reversed:
                values = values[::-1]
            total = len(values)
            out: list[str] = []
            size = 0
            for i, value in enumerate(values):
                spent.charge(self.steps, where)
                context["forloop"] = gmtext_data.GmMap(
                    {
                        "parentloop": parent,
                        "counter0": i,
                        "counter": i + 1,
                        "revcounter": total - i,
                        "revcounter0": total - i - 1,
                        "first": i == 0,
                        "last": i == total - 1,
                    }
                )
                unpack = len(self.loopvars) > 1
                if unpack:
                    if not isinstance(value, tuple) or len(value) != len(self.loopvars):
                        raise gmtext.refusal("render_failed")
                    context.update(dict(zip(self.loopvars, value, strict=True)))
                else:
                    context[self.loopvars[0]] = value
                for node in self.nodelist_loop:
                    piece = cast(str, node.render_annotated(context))  # stubs: int | str
                    out.append(piece)
                    size += len(piece)
                if unpack:
                    context.pop()
                if size > spent.output:
                    spent.fail("output", where)
        return "".join(out)


@register.tag("for")
def do_for(parser: Parser, token: Token) -> BudgetedForNode:
    """Django's ``{% for %}``, over a variable of the context only (no literal), budgeted."""
    node = defaulttags.do_for(parser, token)
    sequence = cast(FilterExpression, node.sequence)  # the parser's, never a string
    var = sequence.var
    if not isinstance(var, Variable) or var.literal is not None:
        raise gmtext.Refused("loop_not_list", what=str(sequence.token))
    return BudgetedForNode(node)
