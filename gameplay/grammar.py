"""Russian grammar for the game's messages: names in the case a sentence needs, numerals that
agree with their nouns, words in a case, verbs in the player's gender. Pure Python (no Django).

Names go through ``petrovich`` (rules for Russian first and last names) with ``pymorphy3`` for
first names it knows from its dictionary (it declines «Никита», «Илья», «Любовь» right where
petrovich's rules do not); words and numerals go through ``pymorphy3``. The analyser is built
once per process (:func:`morph`).

Whatever the name, nothing raises: a word that is not Cyrillic (a nickname, Latin letters), an
indeclinable surname («Белых», «Шевченко», «Дюма») or a word the libraries fail on stays as it
is. A player's gender is VK's ``sex`` (1 female, 2 male, 0 unknown); with 0 a name is declined
by the gender its first name shows, and left as it is when that is unclear («Саша», «Женя»).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

#: VK's users.get ``sex``.
UNKNOWN, FEMALE, MALE = 0, 1, 2

#: Case names (pymorphy3's grammemes).
CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")

_CYRILLIC_WORD = re.compile(r"^[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*$")
# Surnames Russian does not decline whatever the gender.
_INDECLINABLE_LAST = re.compile(
    r"(?:[ыи]х|[ео]ко|[аеиоуыэюя]го|[еёиоуыэю]|[аеиоуыэюя]а)$", re.IGNORECASE
)
_CONSONANT_END = re.compile(r"[бвгджзклмнпрстфхцчшщ]$", re.IGNORECASE)


@lru_cache(maxsize=1)
def morph() -> Any:
    """The pymorphy3 analyser, loaded once per process (quietly: its «Loading dictionaries»
    lines are no news to an operator)."""
    import pymorphy3

    logging.getLogger("pymorphy3").setLevel(logging.WARNING)
    return pymorphy3.MorphAnalyzer()


@lru_cache(maxsize=1)
def _petrovich() -> Any:
    from petrovich.main import Petrovich

    return Petrovich()


_PETROVICH_CASE = {"gent": 0, "datv": 1, "accs": 2, "ablt": 3, "loct": 4}


def _name_parse(word: str, gender: str | None) -> Any | None:
    """pymorphy3's parse of ``word`` as a first name (of ``gender`` when given)."""
    for p in morph().parse(word):
        if (
            "Name" in p.tag
            and p.tag.case == "nomn"
            and (gender is None or p.tag.gender == gender or "ms-f" in p.tag)
        ):
            return p
    return None


_FEMALE_LAST = re.compile(r"(?:[оеё]ва|[иы]на|ая)$", re.IGNORECASE)
_MALE_LAST = re.compile(r"(?:[оеё]в|[иы]н|[ыио]й)$", re.IGNORECASE)
# «Цой», «Гей»: a short surname in -ой/-ей/-ай is a noun («Цоя»), not an adjective.
_SHORT_NOUN_LAST = re.compile(r"^[^аеёиоуыэюя][оеа]й$", re.IGNORECASE)
_SHORT_NOUN_ENDINGS = {"gent": "я", "datv": "ю", "accs": "я", "ablt": "ем", "loct": "е"}


def guess_sex(name: str) -> int:
    """The gender a name shows (MALE / FEMALE): its first name, else its surname's ending
    («Женя Иванова»); UNKNOWN when neither tells."""
    parts = name.strip().split(" ")
    first = parts[0]
    if not _CYRILLIC_WORD.match(first):
        return UNKNOWN
    genders = {
        p.tag.gender
        for p in morph().parse(first)
        if "Name" in p.tag and p.tag.case == "nomn" and p.score >= 0.1
    }
    if genders == {"masc"}:
        return MALE
    if genders == {"femn"}:
        return FEMALE
    last = parts[-1] if len(parts) > 1 else ""
    if _FEMALE_LAST.search(last):
        return FEMALE
    if _MALE_LAST.search(last):
        return MALE
    return UNKNOWN


def _first_name(word: str, case: str, sex: int) -> str:
    if "-" in word:  # «Анна-Мария»: each part
        return "-".join(_first_name(w, case, sex) for w in word.split("-"))
    gender = "masc" if sex == MALE else "femn"
    parse = _name_parse(word, gender)
    if parse is not None:
        form = parse.inflect({case})
        if form is not None:
            return _same_capitals(word, form.word)
    from petrovich.enums import Gender

    return _petrovich().firstname(
        word, _PETROVICH_CASE[case], Gender.MALE if sex == MALE else Gender.FEMALE
    )


def _last_name(word: str, case: str, sex: int) -> str:
    if _INDECLINABLE_LAST.search(word):
        return word
    if sex == FEMALE and _CONSONANT_END.search(word):
        return word  # «Анна Гейдельберг», «Ксения Собчак»
    if sex == MALE and _SHORT_NOUN_LAST.match(word):
        return word[:-1] + _SHORT_NOUN_ENDINGS[case]
    from petrovich.enums import Gender

    return _petrovich().lastname(
        word, _PETROVICH_CASE[case], Gender.MALE if sex == MALE else Gender.FEMALE
    )


def _same_capitals(original: str, form: str) -> str:
    if original[:1].isupper():
        return form[:1].upper() + form[1:]
    return form


@lru_cache(maxsize=8192)
def decline_name(name: str, case: str, sex: int = UNKNOWN) -> str:
    """``name`` («Имя Фамилия», as VK gives it) in ``case``; see the module doc for what is
    left as it is. A name whose gender is unknown is declined only where both genders
    decline it alike («Сашу Белых»)."""
    if case == "nomn" or case not in _PETROVICH_CASE:
        return name
    try:
        parts = name.split(" ")
        if not parts or not all(_CYRILLIC_WORD.match(p) for p in parts) or len(parts) > 3:
            return name
        sex = sex if sex in (MALE, FEMALE) else guess_sex(name)
        if sex == UNKNOWN:
            as_male, as_female = _decline(parts, case, MALE), _decline(parts, case, FEMALE)
            return as_male if as_male == as_female else name
        return _decline(parts, case, sex)
    except Exception:  # noqa: BLE001 - a library's failure leaves the name as it is
        return name


def _decline(parts: list[str], case: str, sex: int) -> str:
    out = [_first_name(parts[0], case, sex)] + [_last_name(p, case, sex) for p in parts[1:]]
    result = " ".join(out)
    return result if len(result.split(" ")) == len(parts) else " ".join(parts)


@lru_cache(maxsize=4096)
def inflect(phrase: str, case: str) -> str:
    """A word or a phrase («мирный житель») in ``case``, nouns and adjectives agreed; a word
    pymorphy3 does not know stays as it is."""
    if case == "nomn":
        return phrase
    out = []
    words = phrase.split(" ")
    for i, word in enumerate(words):
        try:
            parse: Any = _best_parse(word, "NOUN" if i == len(words) - 1 else "ADJF")
            form = parse.inflect({case}) if parse is not None else None
            if form is not None and "anim" in parse.tag and case == "accs":
                form = parse.inflect({case, "anim"}) or form
            out.append(_same_capitals(word, form.word) if form is not None else word)
        except Exception:  # noqa: BLE001
            out.append(word)
    return " ".join(out)


def _best_parse(word: str, prefer: str = "NOUN") -> Any | None:
    """The nominative reading of ``word`` as ``prefer`` (NOUN or ADJF), else as the other, if
    pymorphy3 has one."""
    parses = [p for p in morph().parse(word) if p.tag.case == "nomn"]
    for pos in (prefer, "ADJF" if prefer == "NOUN" else "NOUN"):
        for p in parses:
            if p.tag.POS == pos:
                return p
    return None


def agreement(n: int) -> int:
    """The number a count of ``n`` agrees like: 1 («21 голос»), 2 («3 голоса») or 5
    («11 голосов»): :func:`plural` of ``n`` and of ``agreement(n)`` are one, so a cache of
    the grammar's answers holds one per phrase and form, not one per number."""
    n = abs(n)
    if n % 10 == 1 and n % 100 != 11:
        return 1
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return 2
    return 5


@lru_cache(maxsize=4096)
def plural(n: int, phrase: str) -> str:
    """``phrase`` («голос», «живой игрок», «штрафной голос») in the form a count of ``n``
    needs («1 голос», «3 голоса», «21 живой игрок», «5 штрафных голосов»), without the number."""
    words = phrase.split(" ")
    try:
        noun = morph().parse(words[-1])[0]
        agreed = noun.make_agree_with_number(abs(n))
        if agreed is None:
            return phrase
        out = []
        for adj in words[:-1]:
            parse = _best_parse(adj, "ADJF")
            if parse is None or parse.tag.POS != "ADJF":
                out.append(adj)
                continue
            if agreed.tag.number == "sing" and agreed.tag.case == "nomn":
                form = parse.inflect({"nomn", "sing", noun.tag.gender or "masc"})
            elif (
                noun.tag.gender == "femn"
                and agreed.tag.case == "gent"
                and agreed.tag.number == "sing"
            ):
                form = parse.inflect({"nomn", "plur"})
            else:
                form = parse.inflect({"gent", "plur"})
            out.append(form.word if form is not None else adj)
        out.append(agreed.word)
        return " ".join(out)
    except Exception:  # noqa: BLE001
        return phrase


def count(n: int, phrase: str) -> str:
    """«3 голоса»: the number and the agreed phrase."""
    return f"{n} {plural(n, phrase)}"


@lru_cache(maxsize=4096)
def agree(word: str, phrase: str) -> str:
    """``word`` (an adjective or a short participle, «использован») in the gender and number
    of the head noun of ``phrase`` («Старинные часы» → «использованы», «Книга из будущего» →
    «использована»); as it is when pymorphy3 cannot tell."""
    try:
        head = next(
            (
                p
                for w in phrase.split(" ")
                if (p := _best_parse(w.strip("«»"))) is not None and p.tag.POS == "NOUN"
            ),
            None,
        )
        if head is None:
            return word
        if head.tag.number == "plur" or "Pltm" in head.tag:
            want = {"plur"}
        else:
            want = {"sing", head.tag.gender or "masc"}
        parse = morph().parse(word)[0]
        form = parse.inflect(want)
        return form.word if form is not None else word
    except Exception:  # noqa: BLE001
        return word


def gendered(sex: int, male: str, female: str, neutral: str) -> str:
    """The word for the player's gender; ``neutral`` when VK did not tell it."""
    return male if sex == MALE else female if sex == FEMALE else neutral


def join(items: list[str]) -> str:
    """«а», «а и б», «а, б и в»."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " и " + items[-1]
