"""The GM language's worst case (``gameplay.gmtext``): for every theme slot, the most expensive
texts of each kind that the save check still accepts for a game of 26 players, rendered cold
(the grammar's caches emptied, the text compiled afresh) in every message that shows the slot,
with every list of that message at its longest (``gameplay.services.story.worst_cases``).

The kinds, each grown until the check refuses it and taken one size smaller: ``nodes`` (two
nested loops over the slot's longest list, the body as many empty conditions as fit), ``loop``
(one loop, the same body), ``names``
(a loop declining every player in every case), ``morph`` (a loop counting with a different
word each time, every call a pymorphy3 parse), ``words`` (as many different phrases as fit,
outside any loop), ``agree`` (as many words agreed with an item's name), ``walks`` (a loop
comparing and searching the whole list each time), ``output`` (a loop writing as much as the
slot may hold).

Pure: no database, no VK. ``make bench`` runs it as its ``gmtext`` part; so does
``tests/gameplay/test_gmtext_budget.py``, which prints the table.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from gameplay import gmtext, grammar, messages, themes
from gameplay.messages import MessageError, render
from gameplay.services.story import theme_text_check, worst_cases
from gameplay.templatetags import gmtext as gmtext_tags

PLAYERS = 26
#: VK's limit on the text each message is sent in.
LIMITS = {"board": gmtext.BOARD_POST_MAX, "player": gmtext.PRIVATE_MESSAGE_MAX}
#: Each slot's longest list and how its element names a player, when the slot has lists.
LISTS: dict[str, tuple[str, str]] = {
    "welcome": ("seats", "a"),
    "morning": ("deaths", "a.person"),
    "execution": ("tally", "a.person"),
    "end": ("night_log", "a.actor"),
    "vote_count": ("candidates", "a.person"),
    "role_mafia": ("mafia", "a"),
    "item_clock": ("mafia", "a"),
    "item_red_button": ("mafia", "a"),
    "item_book": ("mafia", "a"),
}
#: A list to loop over and how its element names a player; None for a slot without lists.
Target = tuple[str, str] | None
_WORDS = (
    "голос город житель игрок лаборатория машина время ночь день утро вечер дверь часы книга "
    "кнопка профессор лаборант дочь злодей сосед улица площадь путешествие будущее прошлое "
    "тайна выстрел проверка лекарство доктор комиссар маньяк мафия свидетель судьба надежда "
    "страх победа поражение рассвет закат"
).split()
_CASES = ("gent", "datv", "accs", "ablt", "loct")


def _nodes(target: Target, k: int) -> str:
    if target is None:
        return "{% if number %}{% endif %}" * k
    name, _ = target
    body = "{% if b %}{% endif %}" * k
    return f"{{% for a in {name} %}}{{% for b in {name} %}}{body}{{% endfor %}}{{% endfor %}}"


def _names(target: Target, k: int) -> str:
    if target is None:
        return "{{ number|default:1 }}" * k
    name, person = target
    cases = "".join(f"{{{{ {person}|case:'{_CASES[i % len(_CASES)]}' }}}}" for i in range(k))
    return f"{{% for a in {name} %}}{cases}{{% endfor %}}"


def _word(i: int) -> str:
    return _WORDS[i % len(_WORDS)]


def _morph(target: Target, k: int) -> str:
    if target is None:
        return "".join(f"{{{{ number|count:'{_word(i)}' }}}}" for i in range(k))
    name, _ = target
    counts = "".join(f"{{{{ forloop.counter|count:'{_word(i)}' }}}}" for i in range(k))
    return f"{{% for a in {name} %}}{counts}{{% endfor %}}"


def _words(target: Target, k: int) -> str:
    return " ".join(f"{{{{ {i}|count:'{_word(i)} {_word(i + 7)}' }}}}" for i in range(k))


def _agree(target: Target, k: int) -> str:
    return " ".join(f"{{% item_agree 'book' '{_word(i)}' %}}" for i in range(k))


def _output(target: Target, k: int) -> str:
    if target is None:
        return "Ж" * k
    name, _ = target
    return f"{{% for a in {name} %}}{'Ж' * k}{{% endfor %}}"


def _loop(target: Target, k: int) -> str:
    if target is None:
        return "{{ number|default:1|length }}" * k
    name, _ = target
    return f"{{% for a in {name} %}}{'{% if a %}{% endif %}' * k}{{% endfor %}}"


def _walks(target: Target, k: int) -> str:
    if target is None:
        return "{% if number == number %}{% endif %}" * k
    name, _ = target
    walk = f"{{% if {name} == {name} %}}{{% endif %}}{{% if {name}.0 in {name} %}}{{% endif %}}"
    return f"{{% for a in {name} %}}{walk * k}{{% endfor %}}"


KINDS: dict[str, Callable[[Target, int], str]] = {
    "nodes": _nodes,
    "loop": _loop,
    "names": _names,
    "morph": _morph,
    "words": _words,
    "agree": _agree,
    "walks": _walks,
    "output": _output,
}


def accepted(slot: str, text: str, players: int = PLAYERS) -> bool:
    try:
        theme_text_check(slot=slot, text=text, seats=players)
    except MessageError:
        return False
    return True


def worst_text(
    slot: str, kind: str, players: int = PLAYERS, target: Target | str = "slot"
) -> str | None:
    """The largest text of ``kind`` the check accepts for ``slot`` (None if not even one),
    looping over ``target`` (the slot's longest list unless told)."""
    aim = LISTS.get(slot) if target == "slot" else target
    assert not isinstance(aim, str)

    def make(k: int) -> str:
        return KINDS[kind](aim, k)

    if not accepted(slot, make(1), players):
        return None
    low, high = 1, 2
    while accepted(slot, make(high), players):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(slot, make(middle), players) else (low, middle)
    return make(low)


def _cold() -> None:
    """Empty every cache a render of a GM's text could lean on."""
    gmtext.compile_text.cache_clear()
    for pure in (grammar.decline_name, grammar.plural, grammar.inflect, grammar.agree):
        pure.cache_clear()
    for cached in (gmtext_tags._decline, gmtext_tags._inflect, gmtext_tags._plural):
        cached.cache_clear()
    gmtext_tags._agree.cache_clear()
    # The refusals' text names go; the message templates stay compiled, as in a running
    # process: what is measured is the GM's texts.
    messages.clear_caches(templates=False)


@dataclass
class SlotFigure:
    """One worst text of ``kind`` in ``slot``, rendered cold in ``message``."""

    slot: str
    kind: str
    message: str
    text_chars: int
    slot_ms: float
    message_ms: float
    slot_chars: int
    message_chars: int
    limit: int


@dataclass
class MessageFigure:
    """``message`` with a worst text in every slot at once: the slowest of each slot (its
    time), the longest of each slot (its length); ``slots``: the slots it shows."""

    message: str
    ms: float
    chars: int
    limit: int
    slots: list[str]


@dataclass
class Figures:
    players: int
    slots: list[SlotFigure]
    messages: list[MessageFigure]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def slowest_slot(self) -> SlotFigure:
        return max(self.slots, key=lambda f: f.slot_ms)


def _timed(run: Callable[..., Any], runs: int) -> tuple[float, Any]:
    samples, result = [], None
    for _ in range(runs):
        _cold()
        start = time.perf_counter()
        result = run()
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1000, 2), result


def _limit(message: str) -> int:
    return LIMITS[message.split("/")[0]]


def measure(players: int = PLAYERS, runs: int = 3) -> Figures:
    """Every slot × every kind of worst text × every message showing the slot; then every
    message with a worst text in each of its slots at once."""
    slots: list[SlotFigure] = []
    texts = {
        (slot, kind): text
        for slot in themes.SLOTS
        for kind in KINDS
        if (text := worst_text(slot, kind, players)) is not None
    }
    for (slot, kind), text in texts.items():
        theme = themes.Theme(themes.DEFAULT, {slot: text})
        for name, ctx in worst_cases(slot=slot, seats=players):
            # The slot as a message renders it (the production path and its limits).
            slot_ms, rendered = _timed(
                lambda ctx=ctx, theme=theme, slot=slot: theme.render_slot(slot, ctx), runs
            )
            message_ms, post = _timed(
                lambda name=name, ctx=ctx, theme=theme: render(name, **{**ctx, "theme": theme}),
                runs,
            )
            slots.append(
                SlotFigure(
                    slot, kind, name, len(text), slot_ms, message_ms, len(rendered), len(post),
                    _limit(name),
                )
            )  # fmt: skip
    return Figures(players, slots, _every_slot(slots, texts, players, runs))


def _every_slot(
    slots: list[SlotFigure], texts: dict[tuple[str, str], str], players: int, runs: int
) -> list[MessageFigure]:
    slowest: dict[str, str] = {}
    longest: dict[str, str] = {}
    for slot in themes.SLOTS:
        mine = [f for f in slots if f.slot == slot]
        slowest[slot] = texts[(slot, max(mine, key=lambda f: f.slot_ms).kind)]
        longest[slot] = texts[(slot, max(mine, key=lambda f: f.slot_chars).kind)]
    by_message: dict[str, list[dict[str, Any]]] = {}
    shown: dict[str, list[str]] = {}
    for slot in themes.SLOTS:
        for name, ctx in worst_cases(slot=slot, seats=players):
            by_message.setdefault(name, []).append(ctx)
            if slot not in shown.setdefault(name, []):
                shown[name].append(slot)
    out = []
    for name, contexts in by_message.items():
        ms, chars = 0.0, 0
        for ctx in contexts:
            slow, long = themes.Theme(texts=slowest), themes.Theme(texts=longest)
            took, _ = _timed(lambda c=ctx, t=slow, n=name: render(n, **{**c, "theme": t}), runs)
            ms = max(ms, took)
            chars = max(chars, len(render(name, **{**ctx, "theme": long})))
        out.append(MessageFigure(name, ms, chars, _limit(name), shown[name]))
    return out


def table(figures: Figures) -> str:
    columns: tuple[str, ...] = ("slot", "kind", "message", "text", "slot render", "message render")
    columns += ("slot chars", "message chars / VK limit")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for f in figures.slots:
        lines.append(
            f"| {f.slot} | {f.kind} | {f.message} | {f.text_chars} | {f.slot_ms:.2f} ms "
            f"| {f.message_ms:.2f} ms | {f.slot_chars} | {f.message_chars} / {f.limit} |"
        )
    lines += ["", "| message, a worst text in every slot | render | chars / VK limit |"]
    lines.append("|---|---|---|")
    for m in figures.messages:
        lines.append(f"| {m.message} | {m.ms:.2f} ms | {m.chars} / {m.limit} |")
    worst = figures.slowest_slot
    lines.append(
        f"\n{figures.players} players: slowest slot render {worst.slot_ms:.2f} ms ({worst.slot}, "
        f"{worst.kind}, {worst.message}); slowest message "
        f"{max(m.ms for m in figures.messages):.2f} ms"
    )
    return "\n".join(lines)
