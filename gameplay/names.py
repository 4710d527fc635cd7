"""Finding a player by what people type: a name in any case, with «ё» or «е», in the forms
Russian gives it («за Аню», «Бориса»), or a part of it (first or last name). Pure Python.

Matching goes from strict to loose and stops at the first level that finds anyone: the whole
name; one word of the name; the same stem (case endings removed). Several players found at
that level is an ambiguity the caller reports with their seat numbers; a looser level is never
used to break a tie.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

_SPACE = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[^\w\s-]+")
_VOWELS = "аеиоуыэюяйь"
_ENDINGS = (
    "ами",
    "ями",
    "ого",
    "его",
    "ому",
    "ему",
    "ом",
    "ем",
    "ой",
    "ей",
    "ою",
    "ею",
    "ым",
    "им",
    "ам",
    "ям",
    "ах",
    "ях",
)


def fold(text: str) -> str:
    """Case-insensitive, «ё» as «е», compatibility forms unified, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")
    return _SPACE.sub(" ", text).strip()


def words(text: str) -> list[str]:
    return [w for w in _NOT_WORD.sub(" ", fold(text)).replace("-", " ").split() if w]


def stem(word: str) -> str:
    """A crude stem: one case ending, then trailing vowels, off (never shorter than 2)."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    while len(word) > 2 and word[-1] in _VOWELS:
        word = word[:-1]
    return word


def match(query: str, candidates: Iterable[tuple[T, str]]) -> list[T]:
    """The candidates (``(key, name)``) whose name the query designates; see the module doc."""
    items = list(candidates)
    q = " ".join(words(query))
    if not q:
        return []
    qwords = q.split()
    levels = (
        lambda name: " ".join(words(name)) == q,
        lambda name: _in_order(qwords, words(name), lambda a, b: a == b),
        lambda name: _in_order(
            qwords, words(name), lambda a, b: len(stem(a)) >= 2 and stem(a) == stem(b)
        ),
    )
    for level in levels:
        found = [key for key, name in items if level(name)]
        if found:
            return found
    return []


def _in_order(query: Sequence[str], name: Sequence[str], same) -> bool:  # noqa: ANN001
    """Every query word matches a distinct word of the name, in order."""
    i = 0
    for word in name:
        if i < len(query) and same(query[i], word):
            i += 1
    return i == len(query)
