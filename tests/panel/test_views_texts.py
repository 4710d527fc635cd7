"""Themes and the GM's story: the theme in the settings, the theme editor with its live preview
(a text that does not render is refused with its line and changes nothing), and the exact post
of a night under review or an open day, with the GM's story paragraph in it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services, themes
from gameplay.export import export_game
from gameplay.models import Actor, Game, GameEvent, Outbox, OutboxChannel, Phase, PhaseStatus
from gameplay.replay import parse_scenario, play
from gameplay.rules.errors import InvalidCommand
from gameplay.services.story import phase_story_set, theme_text_set
from tests.panel.support import make_game, module_gm, night_round, vote_round

pytestmark = pytest.mark.django_db


def url(name: str, game: Game) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk})


def msgs(response: Any) -> str:
    return " | ".join(str(m) for m in response.context["messages"])


def board(game: Game, kind: str) -> list[str]:
    return list(
        Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD, kind=kind)
        .order_by("id")
        .values_list("text", flat=True)
    )


def current(game: Game) -> Phase:
    return Phase.objects.get(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])


world, gm = module_gm(lambda gm: {"game": make_game(gm, players=7, seed="texts-seed").pk})


@pytest.fixture
def game(world: dict[str, int]) -> Game:
    return Game.objects.get(pk=world["game"])


def test_the_theme_is_a_game_setting_and_shapes_the_role_cards(gm: Any) -> None:
    classic = make_game(gm, players=7, seed="texts-seed", theme="classic", vk_base=710_000)
    tm = make_game(gm, players=7, seed="texts-seed", vk_base=720_000)
    assert (classic.theme, tm.theme) == ("classic", themes.DEFAULT)
    cards = {
        g.theme: " ".join(
            Outbox.objects.filter(game=g, kind="role_card").values_list("text", flat=True)
        )
        for g in (classic, tm)
    }
    assert "обезумевший профессор" not in cards["classic"]
    assert "любопытный лаборант профессора" in cards["time_machine"]
    roster = board(tm, "roster")[0]
    assert "Профессор включил машину времени" in roster


def test_settings_change_the_theme(game: Game, gm_client: Client) -> None:
    page = gm_client.get(url("panel_settings", game))
    form = page.context["form"]
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        theme="classic",
        co_gms=[u.pk for u in data["co_gms"]],
        topic=str(game.topic_id),
        recruit_topic="",
    )
    response = gm_client.post(url("panel_settings", game), data, follow=True)
    assert "Настройки сохранены." in msgs(response)
    game.refresh_from_db()
    assert game.theme == "classic"


def test_the_theme_editor_saves_a_text_and_previews_it_from_the_game(
    game: Game, gm_client: Client
) -> None:
    page = gm_client.get(url("panel_texts", game))
    assert page.status_code == 200
    slots = {s["slot"]: s for s in page.context["slots"]}
    assert set(slots) == set(themes.SLOTS)
    assert "Город засыпает." in slots["night_story"]["preview"]
    text = "Над лабораторией {{ number }}-я ночь."
    preview = gm_client.post(
        url("panel_texts_preview", game), {"slot": "night_story", "text": text}
    ).json()
    assert preview["ok"] and "Над лабораторией 1-я ночь." in preview["text"]
    assert "Действия принимаются в личных сообщениях" in preview["text"]  # the facts stay
    response = gm_client.post(
        url("panel_texts", game), {"slot": "night_story", "text": text}, follow=True
    )
    assert "сохранён" in msgs(response)
    game.refresh_from_db()
    assert game.theme_texts == {"night_story": text}
    assert GameEvent.objects.filter(game=game, kind="theme_text_set").exists()


def test_the_preview_says_its_roles_are_made_up(game: Game, gm_client: Client) -> None:
    """The previews name the game's players but give them roles of the example's own (the
    end's list has everyone a civilian, the execution a mafioso): the page says so."""
    response = gm_client.get(url("panel_texts", game))
    page = response.content.decode()
    slots = {s["slot"]: s for s in response.context["slots"]}
    first = game.seats.get(number=1)
    assert first.name in slots["end"]["preview"]  # a real player, his role the example's
    assert "по данным этой игры" not in page
    assert page.count("пример: игроки этой игры, их роли и события придуманы") == len(slots)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("Первая строка.\n{% if deaths %}\nНочь.", 2, "незакрытый тег"),
        ("Раз.\nДва {{ number|nope }}.", 2, "неизвестный фильтр «nope»"),
        ("Ночь {{ nobody }}.", 0, "неизвестная переменная «nobody»"),
    ],
)
def test_a_text_that_does_not_render_is_refused_and_changes_nothing(
    game: Game, gm_client: Client, text: str, line: int, reason: str
) -> None:
    theme_text_set(game_id=game.pk, by=Actor.gm("t"), slot="night_story", text="Тихо.")
    preview = gm_client.post(
        url("panel_texts_preview", game), {"slot": "night_story", "text": text}
    ).json()
    assert not preview["ok"] and reason in preview["error"]
    response = gm_client.post(url("panel_texts", game), {"slot": "night_story", "text": text})
    assert response.status_code == 200
    said = msgs(response)
    assert "Текст не сохранён." in said and reason in said
    assert (f"Строка {line}:" in said) == bool(line)
    game.refresh_from_db()
    assert game.theme_texts == {"night_story": "Тихо."}
    [slot] = [s for s in response.context["slots"] if s["slot"] == "night_story"]
    assert slot["text"] == text and slot["refused"]  # what the GM typed stays in the form


def test_the_night_review_shows_the_exact_post_and_the_story_goes_out_with_it(
    game: Game, gm_client: Client
) -> None:
    vote_round(game)
    services.day_close(game_id=game.pk, by=Actor.gm("t"))
    night_round(game)
    services.night_close(game_id=game.pk, by=Actor.gm("t"))
    page = gm_client.get(url("panel_game", game))
    before = page.context["post_preview"]
    assert before.startswith("Утро после ночи 1.\n")
    assert "утром город недосчитался своих" in before or "прошла тихо" in before  # the theme
    story = "Ночью в лаборатории погас свет, а утром дверь оказалась открыта."
    response = gm_client.post(
        url("panel_story", game), {"story": story, "phase": current(game).pk}, follow=True
    )
    assert "Рассказ сохранён" in msgs(response)
    shown = gm_client.get(url("panel_game", game)).context["post_preview"]
    assert shown.splitlines()[1] == story and shown.splitlines()[2:] == before.splitlines()[2:]
    services.night_publish(game_id=game.pk, by=Actor.gm("t"))
    assert board(game, "night_result") == [shown]  # exactly what the GM saw
    [event] = GameEvent.objects.filter(game=game, kind="story_set")
    assert event.data["story"] == story
    exported = export_game(game)
    [night] = [p for p in exported.scenario["phases"] if p["phase"] == "night"]
    assert night["story"] == story
    play(parse_scenario(exported.to_json()))  # the export still replays


def test_the_day_close_post_is_previewed_with_the_gms_story(game: Game, gm_client: Client) -> None:
    vote_round(game)
    phase_story_set(game_id=game.pk, by=Actor.gm("t"), story="Город спорил до ночи.")
    preview = gm_client.get(url("panel_game", game)).context["post_preview"]
    assert preview.startswith("Итоги дня 1.\n") and preview.endswith("\n\nГород спорил до ночи.")
    services.day_close(game_id=game.pk, by=Actor.gm("t"))
    assert board(game, "day_result") == [preview]


def test_auto_publish_uses_the_themes_story(gm: Any) -> None:
    game = make_game(gm, players=7, seed="texts-seed", auto_publish=True, vk_base=730_000)
    vote_round(game)
    services.day_close(game_id=game.pk, by=Actor.gm("t"))
    night_round(game)
    services.night_close(game_id=game.pk, by=Actor.gm("t"))
    [post] = board(game, "night_result")
    theme_line = post.splitlines()[1]
    assert theme_line in (
        "Ночью машина времени снова гудела без спроса, и утром город недосчитался своих.",
        "Ночь прошла тихо: стрелки часов профессора даже не дрогнули.",
    )


def test_a_story_is_refused_when_there_is_no_post_to_shape(game: Game) -> None:
    vote_round(game)
    services.day_close(game_id=game.pk, by=Actor.gm("t"))  # an open night: its post is not out yet
    with pytest.raises(InvalidCommand, match="Рассказ пишут"):
        phase_story_set(game_id=game.pk, by=Actor.gm("t"), story="Рано.")


def test_the_day_close_confirmation_shows_the_exact_post_and_takes_the_story(
    game: Game, gm_client: Client
) -> None:
    vote_round(game)
    page = gm_client.get(url("panel_close", game))
    assert page.status_code == 200
    shown = page.context["post_preview"]
    assert shown.startswith("Итоги дня 1.\n") and shown in page.content.decode()
    confirm_page = url("panel_close", game)
    response = gm_client.post(
        url("panel_story", game),
        {"story": "Спорили до хрипоты.", "phase": current(game).pk, "next": confirm_page},
    )
    assert response.status_code == 302 and response["Location"] == confirm_page
    again = gm_client.get(confirm_page).context["post_preview"]
    assert again.endswith("\n\nСпорили до хрипоты.")
    services.day_close(game_id=game.pk, by=Actor.gm("t"))
    assert board(game, "day_result") == [again]


# --- the GM language: what a text may do ---------------------------------------------------

#: Seen in a preview: six loops over the seats one inside another ran until the web worker
#: was killed (seats⁶ iterations), and a Callback request waited behind it.
SIX_LOOPS = "".join(f"{{% for {v} in seats %}}" for v in "abcdef") + "{{ f }} "
SIX_LOOPS += "{% endfor %}" * 6


def test_the_preview_refuses_six_nested_loops_before_running_them(
    game: Game, gm_client: Client
) -> None:
    text = "Добро пожаловать.\n" + SIX_LOOPS
    preview = gm_client.post(
        url("panel_texts_preview", game), {"slot": "welcome", "text": text}
    ).json()
    assert not preview["ok"]
    assert preview["error"].startswith("Строка 2: ") and "циклов друг в друге" in preview["error"]


@pytest.mark.parametrize(
    "text",
    [
        "{% debug %}",
        '{% include "board/roster.txt" %}',
        '{% include "/etc/passwd" %}',
        "{% load log %}{% get_admin_log 10 as log %}{{ log }}",
    ],
)
def test_the_preview_shows_nothing_of_the_server(game: Game, gm_client: Client, text: str) -> None:
    response = gm_client.post(
        url("panel_texts_preview", game), {"slot": "night_story", "text": text}
    )
    assert response.status_code == 200
    preview = response.json()
    assert not preview["ok"] and "Строка 1: неизвестный или незакрытый тег «" in preview["error"]
    body = response.content.decode()
    assert "site-packages" not in body and "Хеш раздачи" not in body
