"""The GM language (``gameplay.gmtext``): what a GM's text may say and see, what it may cost,
and that every refusal names the line as the GM typed it."""

from __future__ import annotations

from typing import Any

import pytest
from django.template import Context

from gameplay import gmtext, gmtext_data, themes
from gameplay.messages import MessageError, Person, render

NAMES = (("Сергей Воробьёв", 2), ("Мария Ефремова", 1), ("Лев Толстой", 2), ("Анна Ахматова", 1))
PEOPLE = [Person(n, *NAMES[(n - 1) % len(NAMES)]) for n in range(1, 27)]


def data(**extra: Any) -> dict[str, Any]:
    return gmtext_data.data_of({"seats": PEOPLE, "number": 3, "game": "Игра", **extra})


def refused(source: str, **extra: Any) -> MessageError:
    with pytest.raises(MessageError) as caught:
        gmtext.render(gmtext.compile_text(source), data(**extra), output=4000)
    return caught.value


def test_variables_grammar_conditions_and_loops_render() -> None:
    text = (
        "День {{ number }}.{% if number > 2 %} Поздно.{% endif %}\n"
        "{% for s in seats %}{% if forloop.counter <= 2 %}{{ s|case:'datv' }}"
        "{% if forloop.first %} и {% endif %}{% endif %}{% endfor %}\n"
        "{{ seats|length|count:'живой игрок' }}, {% g seats.0 'пришёл' 'пришла' 'пришло' %}, "
        "{% role 'doctor' 'ablt' %}, {% item 'book' %}"
    )
    out = gmtext.render(gmtext.compile_text(text), data(), output=4000)
    assert out.splitlines()[0] == "День 3. Поздно."
    assert out.splitlines()[1] == "№1 Сергею Воробьёву и №2 Марии Ефремовой"
    assert out.splitlines()[2] == "26 живых игроков, пришёл, доктором, «Книга из будущего»"


@pytest.mark.parametrize(
    ("source", "line", "reason"),
    [
        ("Раз.\n{% debug %}", 2, "тег «debug»"),
        ("{% include 'board/roster.txt' %}", 1, "тег «include»"),
        ("Раз.\nДва.\n{% load i18n %}", 3, "тег «load»"),
        ("{% extends 'board/roster.txt' %}", 1, "тег «extends»"),
        ("{% lorem 999999 w %}", 1, "тег «lorem»"),
        ("{% with x=number %}{{ x }}{% endwith %}", 1, "тег «with»"),
        ("{% theme_slot 'welcome' %}", 1, "тег «theme_slot»"),
        ("Раз.\n{{ number|center:'999999999' }}", 2, "фильтр «center»"),
        ("{{ game|ljust:'999999' }}", 1, "фильтр «ljust»"),
        ("{{ number|stringformat:'0999999d' }}", 1, "фильтр «stringformat»"),
        ("{{ number|floatformat:'99999' }}", 1, "фильтр «floatformat»"),
        ("{{ seats|add:seats }}", 1, "фильтр «add»"),
        ("Раз.\nДень {{ number", 2, "переменная открыта"),
        ("Да {% if number да", 1, "тег открыт"),
        ("Раз.\n\nТри {# не закрыт", 3, "комментарий открыт"),
        ("Раз.\n{% if number %}\nНочь.", 2, "незакрытый тег «if»"),
        ("{% for c in 'abcdef' %}{{ c }}{% endfor %}", 1, "цикл идёт только по спискам"),
    ],
)
def test_what_the_language_has_not_is_refused_with_its_line(
    source: str, line: int, reason: str
) -> None:
    with pytest.raises(MessageError) as caught:
        gmtext.compile_text(source)
    assert caught.value.line == line and reason in caught.value.reason


def test_the_line_is_the_one_the_gm_typed_though_tag_lines_leave_no_line() -> None:
    # Lines of tags only leave nothing in the output: the line numbers still count them.
    source = (
        "{% if number %}\n{% for s in seats %}\n{{ s }}\n{% endfor %}\n{% endif %}\n{{ x|nope }}"
    )
    with pytest.raises(MessageError) as caught:
        gmtext.compile_text(source)
    assert caught.value.line == 6
    err = refused("{% if number %}\nРаз.\n{% endif %}\n{{ nobody }}")
    assert (err.line, err.reason) == (4, "неизвестная переменная «nobody»")


def test_nesting_is_bounded_before_anything_renders() -> None:
    four = "{% for a in seats %}" * 4 + "." + "{% endfor %}" * 4
    with pytest.raises(MessageError, match="циклов друг в друге") as caught:
        gmtext.compile_text("Раз.\n" + four)
    assert caught.value.line == 2
    deep = "{% if number %}" * 9 + "." + "{% endif %}" * 9
    with pytest.raises(MessageError, match="вложенность"):
        gmtext.compile_text(deep)
    with pytest.raises(MessageError, match="тегов, переменных и фильтров"):
        gmtext.compile_text("{{ number }}" * (gmtext.MAX_TAGS + 1))
    with pytest.raises(MessageError, match="длиннее 4000 знаков"):
        gmtext.compile_text("Ж" * (gmtext.SOURCE_MAX + 1))


def test_a_loop_that_would_cost_too_much_stops_at_its_line() -> None:
    source = "Раз.\n{% for a in seats %}{% for b in seats %}{% for c in seats %}.{% endfor %}"
    source += "{% endfor %}{% endfor %}"
    err = refused(source)
    assert err.line == 2 and "слишком сложный" in err.reason
    assert isinstance(err, gmtext.TextRefusal) and err.code == "too_costly"


def test_walking_a_whole_list_in_a_condition_is_paid_for_each_item() -> None:
    # An ``if`` is charged as one node; comparing or searching a list walks all of it.
    walks = "{% if seats == seats %}{% endif %}{% if seats.0 in seats %}{% endif %}" * 3
    err = refused("{% for a in seats %}" + walks + "{% endfor %}")
    assert "слишком сложный" in err.reason and err.line == 1
    cheap = "{% if seats.0 == seats.1 %}{% endif %}{% if seats %}{% endif %}" * 3
    gmtext.render(
        gmtext.compile_text("{% for a in seats %}" + cheap + "{% endfor %}"), data(), output=100
    )


def test_output_stops_at_the_slots_length() -> None:
    with pytest.raises(MessageError, match="длиннее 300 знаков") as caught:
        text = gmtext.compile_text(
            "Раз.\n{% for s in seats %}{{ s }} — житель города. {% endfor %}"
        )
        gmtext.render(text, data(), output=300)
    assert caught.value.line == 2


def test_a_grammar_call_is_paid_by_the_word_and_a_repeat_is_nearly_free() -> None:
    once = gmtext.compile_text("{{ 3|count:'голос' }}")
    gmtext.render(once, data(), output=100, steps=gmtext.PLURAL_WORD_STEPS + 50)
    with pytest.raises(MessageError, match="слишком сложный"):
        gmtext.render(once, data(), output=100, steps=gmtext.PLURAL_WORD_STEPS - 1)
    # 26 counts of the same phrase: three forms (1, 2, 5) are worked out, the rest repeat.
    loop = gmtext.compile_text(
        "{% for s in seats %}{{ forloop.counter|count:'голос' }}{% endfor %}"
    )
    gmtext.render(loop, data(), output=4000, steps=4 * gmtext.PLURAL_WORD_STEPS)


def test_a_text_sees_read_only_plain_data() -> None:
    seats = list(PEOPLE[:3])
    ctx = Context({"seats": seats, "theme": themes.Theme(), "d": {"a": [1, 2]}, "n": 5})
    seen = gmtext_data.data_of(ctx)
    assert "theme" not in seen
    assert seen["seats"] == tuple(seats) and isinstance(seen["d"], gmtext_data.GmMap)
    assert seen["d"]["a"] == (1, 2) and seen["n"] == 5
    # A list's methods are not there to be called: nothing changes the message around a text.
    err = refused("{{ seats.pop }}{{ seats.clear }}")
    assert "неизвестная переменная «seats.pop»" in err.reason
    assert len(seats) == 3
    err = refused("{{ theme.texts }}")
    assert "«theme.texts»" in err.reason


def test_every_shipped_theme_text_is_in_the_language() -> None:
    for key in themes.THEMES:
        for slot in themes.SLOTS:
            gmtext.compile_text(themes.source(key, slot))


def test_the_board_cap_is_the_delivery_s() -> None:
    from vkbot.delivery.rows import MAX_COMMENT_LENGTH

    assert gmtext.BOARD_POST_MAX == MAX_COMMENT_LENGTH


def test_every_refusal_has_its_text() -> None:
    for code in (
        "source_too_long",
        "too_deep",
        "loop_too_deep",
        "too_many_tags",
        "unknown_tag",
        "unclosed_tag",
        "unknown_filter",
        "unparsed",
        "too_costly",
        "too_long_output",
        "unknown_variable",
        "render_failed",
        "loop_not_list",
    ):
        assert render(f"gm/text_{code}", limit=3, tag="т", what="ч", kind="var")
