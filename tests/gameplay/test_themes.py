"""A game's own theme texts at send time (``gameplay.themes``): a stored text that does not
render in the GM language — saved before the language had limits, say — never reaches a post
nor holds the deadline tick; the theme's own text goes out instead and the GM gets a flag."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gameplay import services, themes
from gameplay.messages import render
from gameplay.models import FlagKind, Game, ModerationFlag, Outbox, OutboxChannel
from gameplay.services.deadlines import deadline_tick
from tests.gameplay.deadline_support import T0
from tests.gameplay.theme_support import CENTER, EIGHT_LOOPS, address_space_within, seven_players

pytestmark = pytest.mark.django_db


def board(game: Game, kind: str) -> list[str]:
    rows = Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD, kind=kind)
    return list(rows.order_by("id").values_list("text", flat=True))


def flags(game: Game) -> list[str]:
    rows = ModerationFlag.objects.filter(game=game, kind=FlagKind.THEME_TEXT)
    return list(rows.order_by("id").values_list("text", flat=True))


def test_a_stored_day_story_that_would_grow_the_process_goes_out_as_the_themes() -> None:
    with address_space_within():
        game = seven_players({"day_story": CENTER})
    [post] = board(game, "day_opened")
    own = render("board/day_opened", theme=themes.Theme(), number=1, deadline="x")
    assert post.split(". ", 1)[1].split("\n")[0] == own.split(". ", 1)[1].split("\n")[0]
    assert len(post) < 1000
    [flag] = flags(game)
    assert "«Начало дня»" in flag and "фильтр «center»" in flag and "строка 1" in flag


def test_a_stored_end_text_of_eight_nested_loops_does_not_hold_the_deadline_tick() -> None:
    game = seven_players({"end": EIGHT_LOOPS})
    for seat in range(1, 8):
        services.vote_submit(game_id=game.pk, voter=seat, target=1 if seat != 1 else 2)
    report = deadline_tick(now=T0 + timedelta(hours=24, seconds=1))
    assert report.closed and not report.failures
    game.refresh_from_db()
    assert game.winner == "town"
    [post] = board(game, "game_over")
    assert "Машина времени спасена" in post  # the theme's own end
    assert "...." not in post and len(post) < 3000
    [flag] = flags(game)
    assert "«Конец игры»" in flag and "циклов друг в друге" in flag


def test_one_flag_per_text_and_reason_however_many_messages_meet_it() -> None:
    game = seven_players({"night_story": "Ночь {{ nobody }}."})
    for seat in range(1, 8):
        services.vote_submit(game_id=game.pk, voter=seat, target=2 if seat != 2 else 3)
    deadline_tick(now=T0 + timedelta(hours=24, seconds=1))
    [post] = board(game, "night_opened")
    assert "{{" not in post and "Город засыпает" in post
    themes.of(game).render_slot("night_story", {"number": 1})  # met again: no second flag
    [flag] = flags(game)
    assert "«Начало ночи»" in flag and "неизвестная переменная «nobody»" in flag


def test_a_theme_without_a_game_tells_no_one() -> None:
    theme = themes.Theme(texts={"night_story": "{% debug %}"})
    assert theme.render_slot("night_story", {"number": 1}) == "Город засыпает. " + (
        "В лаборатории тикают старинные часы, а по тёмным улицам идут те, кому не спится."
    )
    assert not ModerationFlag.objects.exists()
