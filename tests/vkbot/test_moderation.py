"""Profanity and insults under the usual disguises, the documented false-positive guards, and
the reveal hints of RULES.md G2."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vkbot.moderation import normalise, profanity, reveal

OBSCENE = [
    "бля",
    "Блять, опять",
    "пиздец",
    "заебал уже",
    "уебок",
    "долбоёб",
    "выблядок",
    "хуйня",
    "нахуй",
    "охуенно",
    "ёбаный стыд",
    "мудак",
    "пидор",
    "гандон",
    "шлюха",
    "сука",
    "сучка",
    "залупа",
    "говно",
    "засранец",
    "дрочит",
]
INSULTS = [
    "ты дебил",
    "идиот",
    "мразь",
    "тварь",
    "ублюдок",
    "кретин",
    "лох",
    "козёл",
    "придурок",
    "чмо",
    "сволочь",
    "урод",
]
DISGUISED = [
    "б л я",
    "б.л.я.т.ь",
    "б-л-я",
    "бляяяяя",
    "6ля",
    "xуй",
    "XУЙ",
    "eбaть",
    "п!здец",
    "пu3дец",
    "cукa",
    "MPA3Ь",
    "д е б и л",
    "ид и о т",
]
CLEAN = [
    "оскорблять",
    "употреблять",
    "потребляю",
    "корабля",
    "рубля",
    "сабля",
    "хлебать",
    "хлеба",
    "тебе",
    "себе",
    "требую",
    "требуется",
    "небо",
    "учебник",
    "ребята",
    "страхуем",
    "психует",
    "мудрый",
    "мудрость",
    "мандарин",
    "командир",
    "сукно",
    "сук",
    "бляха",
    "среда",
    "странный",
    "лохматый",
    "колхоз",
    "хулиган",
    "художник",
    "худой",
    "хуже",
    "ебонит",
    "оскорбление",
    "Команда 2023 года",
    "300 голосов",
    "голосую за 5",
    "Доброе утро, город!",
]


@pytest.mark.parametrize("text", OBSCENE + INSULTS + DISGUISED)
def test_flagged(text: str) -> None:
    assert profanity(text), text


@pytest.mark.parametrize("text", CLEAN)
def test_not_flagged(text: str) -> None:
    assert profanity(text) == [], text


def test_normalise_undoes_disguises() -> None:
    assert normalise("Б Л Я") == "бля"
    assert normalise("x.у.й") == "хуй"
    assert normalise("6ляяя") == "бля"
    assert normalise("до 2023 года") == "до 2023 года"


def test_reveal_hints() -> None:
    assert reveal("Я проверил пятого, он чистый")
    assert reveal("я доктор, лечил себя")
    assert reveal("нажала кнопку на Борисе")
    assert reveal("Доброе утро! Кто что думает про Бориса?") == []


@given(st.text(max_size=500))
def test_any_text(text: str) -> None:
    assert isinstance(profanity(text), list)
    assert isinstance(reveal(text), list)
