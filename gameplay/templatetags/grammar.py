"""Grammar for the message templates (``gameplay.messages``): built into their engine."""

from __future__ import annotations

from typing import Any

from django import template

from gameplay import grammar
from gameplay.rules import Item, Role

register = template.Library()


def _person_case(value: Any, case: str, *, number: bool) -> str:
    from gameplay.messages import Person

    if isinstance(value, Person):
        name = grammar.decline_name(value.name, case, value.sex)
        return f"№{value.number} {name}" if number and value.number else name
    return grammar.decline_name(str(value), case)


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
    n = int(n)
    return f"{n} {grammar.plural(grammar.agreement(n), str(phrase))}"


@register.filter
def plural(n: Any, phrase: str) -> str:
    """«голоса» (for 3): the phrase agreed, without the number."""
    return grammar.plural(grammar.agreement(int(n)), str(phrase))


@register.filter
def join_ru(items: Any) -> str:
    return grammar.join([str(i) for i in items])


@register.filter
def lower_first(text: Any) -> str:
    text = str(text)
    return text[:1].lower() + text[1:]


@register.filter
def upper_first(text: Any) -> str:
    text = str(text)
    return text[:1].upper() + text[1:]


@register.simple_tag
def g(person: Any, male: str, female: str, neutral: str) -> str:
    """The word for the person's gender (VK's ``sex``); ``neutral`` when unknown."""
    sex = getattr(person, "sex", grammar.UNKNOWN)
    return grammar.gendered(int(sex or 0), male, female, neutral)


def _theme_word(context: template.Context, kind: str, key: str, default: str) -> str:
    words = context.get(kind) or {}
    return str(words.get(key) or default) if isinstance(words, dict) else default


@register.simple_tag(takes_context=True)
def role(context: template.Context, value: Any, case_name: str = "nomn") -> str:
    """A role's name, lower case, in ``case_name`` («комиссаром»); the theme's name if it has
    one (``role_names`` in the context)."""
    r = Role(str(value))
    word = _theme_word(context, "role_names", r.value, r.title.lower())
    return grammar.inflect(word, case_name)


@register.simple_tag(takes_context=True)
def item(context: template.Context, value: Any) -> str:
    """An item's name in quotes («Старинные часы»); the theme's if it has one."""
    i = Item(str(value))
    return "«" + _theme_word(context, "item_names", i.value, i.title) + "»"


@register.simple_tag(takes_context=True)
def item_agree(context: template.Context, value: Any, word: str) -> str:
    """``word`` agreed with the item's name (the theme's): «использованы» for «Старинные
    часы», «использована» for «Книга из будущего»."""
    i = Item(str(value))
    return grammar.agree(word, _theme_word(context, "item_names", i.value, i.title))


@register.simple_tag
def g_plural(n: Any, singular: str, plural_form: str) -> str:
    """The verb agreeing with a count: «проголосовал 21», «проголосовали 5»."""
    n = abs(int(n))
    return singular if n % 10 == 1 and n % 100 != 11 else plural_form


@register.filter
def sep(forloop: Any) -> str:
    """Inside ``{% for %}``: «, » between items, « и » before the last, nothing after it."""
    if forloop["last"]:
        return ""
    return " и " if forloop["revcounter"] == 2 else ", "


@register.simple_tag(takes_context=True)
def theme_slot(context: template.Context, slot: str) -> str:
    """The game's theme's text for ``slot``, rendered in this message's context (an empty
    string when the theme has none): the story around the message's facts."""
    from gameplay import themes

    theme = context.get("theme")
    if not isinstance(theme, themes.Theme):
        theme = themes.Theme()
    return theme.render_slot(str(slot), context)
