"""The GM's voice in a real browser: the theme editor (its live preview, a broken template
refused with its line) and the story paragraph of a night's draft, published as previewed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from gameplay import services
from gameplay.models import Game, Outbox, OutboxChannel
from tests.panel.conftest import PASSWORD
from tests.panel.support import make_game, night_round, vote_round
from tests.panel.test_browser import Shots, _messages, page, pytestmark  # noqa: F401

__all__ = ["page", "pytestmark"]


def _login(page: Any, base: str, gm: Any) -> None:
    page.goto(f"{base}/admin/")
    page.fill("#id_username", gm.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_be_visible()


def test_the_gm_edits_a_theme_text_and_a_nights_story_in_the_browser(
    page: Any, live_server: Any, gm: Any, tmp_path: Path
) -> None:
    shot = Shots(tmp_path)
    game = make_game(gm, players=7, seed="browser-texts")
    _login(page, live_server.url, gm)
    base = f"{live_server.url}/admin/gameplay/game/{game.pk}"

    # The theme editor: a broken text shows why at once, and saving it is refused.
    page.goto(f"{base}/texts/")
    area = page.locator("#slot-night_story textarea")
    area.fill("Луна.\n{% if deaths %}без конца")
    preview = page.locator("#preview-night_story")
    expect(preview).to_contain_text("Не отрисовывается. Строка 2:")
    page.click("#save-night_story")
    expect(_messages(page)).to_contain_text("Текст не сохранён. Строка 2:")
    expect(_messages(page)).to_contain_text("незакрытый тег")
    game.refresh_from_db()
    assert game.theme_texts == {}
    shot(page, "theme-editor-refused")
    # A good one: the preview is the post players will see, with the game's own number.
    page.locator("#slot-night_story textarea").fill("Над лабораторией {{ number }}-я ночь.")
    expect(preview).to_contain_text("Ночь 1 наступила. Над лабораторией 1-я ночь.")
    page.click("#save-night_story")
    expect(_messages(page)).to_contain_text("сохранён")
    game.refresh_from_db()
    assert game.theme_texts == {"night_story": "Над лабораторией {{ number }}-я ночь."}

    # Day 1 closes; the night's post opens with the game's text.
    vote_round(game)
    services.day_close(game_id=game.pk, by="gm:t")
    night_opened = Outbox.objects.filter(
        game=game, channel=OutboxChannel.BOARD, kind="night_opened"
    ).get()
    assert night_opened.text.startswith("Ночь 1 наступила. Над лабораторией 1-я ночь.")

    # The night's draft: the exact post, the GM's story in it, published as shown.
    night_round(game)
    services.night_close(game_id=game.pk, by="gm:t")
    page.goto(f"{base}/")
    expect(page.locator("#post-text")).to_contain_text("Утро после ночи 1.")
    page.fill("#story-text", "Утром в лаборатории нашли открытую дверь.")
    page.click("#save-story")
    expect(_messages(page)).to_contain_text("Рассказ сохранён")
    expect(page.locator("#post-text")).to_contain_text("нашли открытую дверь")
    shown = page.locator("#post-text").inner_text()
    assert shown.splitlines()[1] == "Утром в лаборатории нашли открытую дверь."
    shot(page, "night-draft-story")
    page.click("#publish-night")
    expect(_messages(page)).to_contain_text("опубликованы")
    post = Outbox.objects.filter(game=Game.objects.get(pk=game.pk), kind="night_result").get()
    assert post.text == shown.strip()
