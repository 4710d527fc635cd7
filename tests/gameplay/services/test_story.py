"""Saving a theme text (``gameplay.services.story``): a text is checked against the worst case
of its slot for the game's real number of seats, in the GM language; a refusal names the line
in Russian and changes nothing."""

from __future__ import annotations

import pytest

from gameplay import gmtext, services, themes
from gameplay.models import Actor, Game, GameEvent
from gameplay.rules import RoleCounts
from gameplay.rules.errors import InvalidCommand
from gameplay.services.story import seat_count, theme_preview, theme_text_check, theme_text_set
from tests.gameplay.factories import community_id
from tests.gameplay.theme_support import CENTER, EIGHT_LOOPS, address_space_within, seven_players

pytestmark = pytest.mark.django_db

THREE_LOOPS = (
    "{% for a in seats %}\n{% for b in seats %}\n{% for c in seats %}\n{% if c %}{% endif %}"
    "{% endfor %}\n{% endfor %}\n{% endfor %}"
)


def refusal(game: Game, slot: str, text: str) -> str:
    before = dict(game.theme_texts)
    with pytest.raises(InvalidCommand) as caught:
        theme_text_set(game_id=game.pk, by=Actor.gm("t"), slot=slot, text=text)
    game.refresh_from_db()
    assert game.theme_texts == before  # nothing changed
    assert not GameEvent.objects.filter(game=game, kind="theme_text_set").exists()
    return str(caught.value)


def test_eight_nested_loops_in_the_end_text_are_refused_for_a_seven_player_game() -> None:
    game = seven_players({})
    said = refusal(game, "end", EIGHT_LOOPS)
    assert said.startswith("Текст не сохранён. Строка 1: ") and "циклов друг в друге" in said


def test_a_text_is_checked_for_the_seats_the_game_will_have_not_the_previews_three() -> None:
    # Set up for 26 (the default composition), nobody signed up yet: the preview's example
    # post shows three made-up players, the check counts 26.
    game = services.game_create(
        name="Набор", counts=RoleCounts(), topic_id=661_001, vk_group_id=community_id()
    )
    assert seat_count(game=game) == 26
    said = refusal(game, "end", THREE_LOOPS)
    assert said.startswith("Текст не сохранён. Строка 3: если в игре 26 игроков: ")
    assert "текст слишком сложный" in said
    small = seven_players({}, start=False)
    theme_text_set(game_id=small.pk, by=Actor.gm("t"), slot="end", text=THREE_LOOPS)  # 7³ fits


def test_a_filter_that_allocates_by_its_argument_is_refused_at_save() -> None:
    game = seven_players({})
    with address_space_within():
        said = refusal(game, "day_story", CENTER)
    assert "Строка 1: неизвестный фильтр «center»" in said


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Наступил день {{ number", "Строка 1: переменная открыта двумя фигурными скобками"),
        ("День.\n{% debug %}", "Строка 2: неизвестный или незакрытый тег «debug»"),
        ('{% include "board/roster.txt" %}', "Строка 1: неизвестный или незакрытый тег «include»"),
        ('{% include "../../config/settings.py" %}', "тег «include»"),
        ("{% load static %}", "тег «load»"),
        ('{% extends "board/roster.txt" %}', "тег «extends»"),
    ],
)
def test_what_reads_the_server_or_would_go_out_raw_is_refused(text: str, why: str) -> None:
    game = seven_players({})
    assert why in refusal(game, "day_story", text)


def test_a_text_within_the_budget_is_saved_and_previewed() -> None:
    game = seven_players({})
    text = (
        "{% for s in seats %}{% if forloop.first %}{{ s|case:'gent' }} ждут.{% endif %}{% endfor %}"
    )
    theme_text_set(game_id=game.pk, by=Actor.gm("t"), slot="welcome", text=text)
    game.refresh_from_db()
    assert game.theme_texts == {"welcome": text}
    assert "\n№1 Игрок 1 ждут.\n" in theme_preview(game=game, slot="welcome", text=text)


def test_every_shipped_theme_text_passes_the_check_for_26_players() -> None:
    for key in themes.THEMES:
        for slot in themes.SLOTS:
            theme_text_check(slot=slot, text=themes.source(key, slot), seats=26)


def test_a_stored_text_longer_than_the_cap_does_not_render() -> None:
    with pytest.raises(gmtext.TextRefusal, match="длиннее 4000 знаков"):
        theme_text_check(slot="end", text="Ж" * (gmtext.SOURCE_MAX + 1), seats=7)
