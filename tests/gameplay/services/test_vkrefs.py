"""gameplay.services.vkrefs: the VK user and chat references a GM types, parsed or refused."""

from __future__ import annotations

import pytest

from gameplay.rules.errors import InvalidCommand
from gameplay.services.vkrefs import parse_vk_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("text", "vk_id"),
    [
        ("123", 123),
        (" id123 ", 123),
        ("ID123", 123),
        ("vk.com/id123", 123),
        ("https://vk.com/id123", 123),
        ("http://m.vk.com/id123/", 123),
        ("vk.ru/id7", 7),
        ("https://www.vk.com/id42", 42),
        ("[id9|Аня]", 9),
    ],
)
def test_vk_user_references(text: str, vk_id: int) -> None:
    assert parse_vk_user(text=text) == vk_id


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "Укажите VK id"),
        ("vk.com/durov", "Короткое имя «durov»"),
        ("https://vk.com/club1", "Короткое имя «club1»"),
        ("id0", "не id пользователя"),
        ("2000000005", "не id пользователя"),
        ("https://example.com/id5", "Не понял"),
        ("123 456", "Не понял"),
    ],
)
def test_bad_vk_user_references_are_refused(text: str, reason: str) -> None:
    with pytest.raises(InvalidCommand) as e:
        parse_vk_user(text=text)
    assert reason in e.value.reason
