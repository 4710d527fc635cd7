"""The panel's reader: the checks of tests/gameplay/test_messages.py (``problems``) plus what
a GM's page adds — the case after «Штраф» and «Модкилл», a verb after a bare seat number
(«№8 проверила»), a verb's number agreeing with its list («погибает: №1 …»), every gendered
word of a row about one player in that player's gender, no raw codes (an event kind, a
setting's name, VK's error number), and a sentence that starts with a capital letter."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import cast

from gameplay import grammar
from gameplay.messages import Person
from tests.gameplay.test_messages import PAST_GENDER, problems

#: A raw code where a GM reads: an event kind or a field («story_set»), a setting's name
#: («VK_GROUP_ID»), VK's error number («ошибка 6», «код 9»).
RAW_CODE = re.compile(
    r"\b[a-z]+_[a-z_]+\b|\b[A-Z]+_[A-Z_]+\b|\b(?:ошибк[аиу]|код[а]?|error)\s*№?\s*\d+", re.I
)
#: A full stop, question or exclamation mark followed on its line by a lower-case letter
#: (not after an abbreviation: «см.», «т. е.», «ч.», «мин.»).
LOWER_AFTER_STOP = re.compile(
    r"(?<![А-ЯЁA-Z.])(?<!\bсм)(?<!\bт\. е)(?<!\bт\.е)(?<!\bч)(?<!\bмин)[.!?][ \t]+([а-яё])"
)
#: A word said twice across a colon («Вам штраф: штраф ведущего»).
REPEATED = re.compile(r"\b(\w{3,})\b: \1\b", re.I)
#: A form's error that does not say which field it is about.
NAMELESS_ERROR = re.compile(r"(?:^|\n)\s*(?:Обязательное поле|Введите правильное значение)\.")
#: The nouns a name follows in a case other than the nominative («Штраф №3 Михаилу …»).
NOUN_BEFORE_NAME = ("Штраф", "Модкилл", "штраф", "модкилл")
#: A verb and its list after a colon: «погибают: №1 …, №4 …».
VERB_LIST = re.compile(r"\b([а-яё]+): ((?:№\d+[^.;:\n]*?)(?:, №\d+[^.;:\n]*?)*)(?=[.;\n]|$)")


@cache
def _verb_number(word: str) -> str | None:
    """«sing» or «plur» for a present- or past-tense verb, None for any other word."""
    parses = [p for p in grammar.morph().parse(word) if p.score >= 0.1]
    if not parses or parses[0].tag.POS != "VERB":
        return None
    return parses[0].tag.number


@cache
def gender_of(word: str) -> int | None:
    parses = grammar.morph().parse(word)
    best = parses[0] if parses else None
    if best is None or best.tag.POS not in ("VERB", "PRTS", "ADJS") or best.tag.number != "sing":
        return None
    if best.tag.POS == "VERB" and best.tag.tense != "past":
        return None
    return PAST_GENDER.get(best.tag.gender)


def panel_problems(
    text: str,
    persons: list[Person],
    accusatives: dict[str, str],
    *,
    rows: Sequence[str] = (),
    sentence: bool = False,
) -> list[str]:
    """What is wrong in a panel text ``text`` (a page's visible text, a flash, a log line)
    about ``persons``; ``rows`` are the page's table rows and list items, each read alone;
    ``sentence``: the text is one message (a flash, a log line) that starts as a sentence."""
    out = problems(text, persons, accusatives)
    if sentence and re.match(r"\s*[а-яё]", text):
        out.append(f"a sentence in lower case: «{text[:40]}»")
    for m in REPEATED.finditer(text):
        out.append(f"a word repeated: «{m.group(0)}»")
    if NAMELESS_ERROR.search(text):
        found = cast("re.Match[str]", NAMELESS_ERROR.search(text))
        out.append(f"an error without its field: «{found.group(0).strip()}»")
    plain = text
    for p in persons:
        plain = plain.replace(p.name, " ")
    for m in RAW_CODE.finditer(plain):
        out.append(f"a raw code: {m.group(0)}")
    for m in LOWER_AFTER_STOP.finditer(plain):
        start = max(0, m.start() - 30)
        out.append(f"a sentence in lower case: «{plain[start : m.end() + 20]}»")
    for p in persons:
        if f"№{p.number} " not in text:  # what both patterns below hold
            continue
        declinable = accusatives[p.name] != p.name
        for noun in NOUN_BEFORE_NAME:
            if declinable and f"{noun} №{p.number} {p.name}" in text:
                if re.search(rf"\b{noun} №{p.number} {re.escape(p.name)}(?!\w)", text):
                    out.append(f"nominative after «{noun}»: {p}")
        for m in re.finditer(rf"(?<!за )(?<!\w)№{p.number} ([а-яё]+)", text):
            shown = gender_of(m.group(1))
            if shown is not None and shown != p.sex:
                out.append(f"«{m.group(1)}» after №{p.number} for {p} (VK sex {p.sex})")
    for m in VERB_LIST.finditer(text):
        number = _verb_number(m.group(1))
        many = m.group(2).count("№") > 1
        if number is not None and (number == "plur") != many:
            out.append(f"the verb's number disagrees with its list: «{m.group(0)}»")
    for row in rows:
        named = [p for p in persons if p.name in row]
        if len(named) != 1:
            continue
        p = named[0]
        row_plain = re.sub(r"\(.*?\)", " ", row.replace(p.name, " ")).lower()
        words = re.findall(r"[а-яё]+", row_plain)
        for before, word in zip(["", *words], words, strict=False):
            shown = gender_of(word)
            if shown is not None and shown != p.sex and not _is_noun(before):
                out.append(
                    f"«{word}» in a row about {p} (VK sex {p.sex}): «{' '.join(row.split())}»"
                )
    return out


@cache
def _is_noun(word: str) -> bool:
    """A noun the next word may agree with («ночь закрыта»), not the player."""
    parses = grammar.morph().parse(word) if word else []
    return bool(parses) and parses[0].tag.POS == "NOUN"
