"""``manage.py demo`` (what ``make demo`` runs) started as a real subprocess on free ports with
a temporary data folder; a real browser (Playwright, Debian's Chromium) plays Day 1 and
Night 1 of the demo game through the GM panel and the player page: the doctor votes in the
board on the player page, the GM closes the day in the panel, the doctor heals with a button
of the night prompt, the GM closes and publishes the night. The 25 other players are the
simulated ones. Then Ctrl-C: everything stops, nothing is left running; a second start
continues the same game.

Screenshots go to a temporary folder; with ``SANDBOX_SCREENSHOTS_DIR`` set (``make
screenshots``) the README's player-page images are also written there.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.procs import wait_for
from demo import config
from demo.sim.brain import suspects
from demo.sim.knowledge import Table
from gameplay.rules import Role, RoleCounts, deal_for_roster
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING
from tests.demo.conftest import Demo, alive, child_pids, start_demo

STARTUP_SECONDS = 120

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
        reason=f"{CHROMIUM_MISSING}; CI installs it",
    ),
]


def pick_seed() -> tuple[str, int, dict[int, Role]]:
    """A deal whose doctor is not among Day 1's rumoured suspects (so the simulated town is
    unlikely to execute them before the night): the seed, the doctor's seat, every role."""
    seats = {n: f"p{n}" for n in range(1, config.PLAYERS + 1)}
    for attempt in range(100):
        seed = f"browser-test-{attempt}"
        dealt = deal_for_roster(seed, RoleCounts(), config.player_ids())  # round 1, the roster
        roles = {n + 1: role for n, role in enumerate(dealt.roles)}
        doctor = next(n for n, role in roles.items() if role is Role.DOCTOR)
        if doctor not in suspects(Table(game=config.GAME_NAME, seats=seats), 1):
            return seed, doctor, roles
    raise AssertionError("no seed found")  # pragma: no cover


class Shots:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        docs = os.environ.get("SANDBOX_SCREENSHOTS_DIR")
        self.docs = Path(docs) if docs else None

    def __call__(self, page: Any, name: str, *, docs: bool = False) -> None:
        page.evaluate("document.getElementById('toast').hidden = true")
        page.screenshot(path=str(self.folder / f"{name}.png"))
        if docs and self.docs is not None:
            self.docs.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(self.docs / f"{name}.png"))


@pytest.fixture
def browser_context(chromium: Any) -> Iterator[Any]:
    """A browser context of its own in the module's Chromium."""
    from playwright.sync_api import expect

    context = chromium.new_context(
        viewport={"width": 1280, "height": 820}, locale="ru-RU", timezone_id="Europe/Moscow"
    )
    context.set_default_timeout(30_000)
    # The waiting assertions get the same patience as the actions (their default is 5 s).
    expect.set_options(timeout=30_000)
    try:
        yield context
    finally:
        context.close()


def _messages(page: Any) -> Any:
    """The panel's Django messages (the outcome of the GM's last action)."""
    return page.locator("ul.messagelist")


def _confirm_close(panel: Any) -> None:
    """Confirm «Закрыть … сейчас» on its confirmation page; the simulated players keep voting,
    so a page whose outcome changed meanwhile is shown again and confirmed again."""
    from playwright.sync_api import expect

    for _ in range(5):
        expect(panel.locator("#confirm")).to_be_visible()
        panel.click("#confirm-button")
        outcome = panel.locator("ul.messagelist, #confirm-changed").first
        expect(outcome).to_be_visible()
        if not panel.locator("#confirm-changed").count():
            return
    raise AssertionError("the close kept changing under the confirmation page")


def test_the_demo_plays_day_1_and_night_1_in_the_browser(
    browser_context: Any, demo_dir: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    seed, doctor_seat, roles = pick_seed()
    doctor = config.player_ids()[doctor_seat - 1]
    target = next(n for n in sorted(roles) if n != doctor_seat and roles[n] is Role.CIVILIAN)
    demo = start_demo(
        demo_dir,
        "--seed",
        seed,
        "--day-minutes",
        "60",
        "--night-minutes",
        "60",
        "--min-delay",
        "0.5",
        "--max-delay",
        "4",
        "--players-seed",
        "7",
    )
    try:
        demo.wait_for(r"The demo is running", STARTUP_SECONDS)
        children = child_pids(demo.process.pid)
        assert len(children) == 6, demo.output()  # redis, localvk, web, worker, bot, players
        play(browser_context, demo, doctor, doctor_seat, target, Shots(tmp_path))
    finally:
        status = demo.stop()
    output = demo.output()
    assert status == 0, output[-4000:]
    assert "stopped." in output
    assert "local VK state saved" in output
    wait_for(
        lambda: not any(alive(pid) for pid in children),
        timeout=10,
        what="the demo's processes to end",
    )

    # A second start continues the same game: Day 2, the conversation and the board kept.
    again = start_demo(
        demo_dir, "--no-players", ports=(demo.web_port, demo.vk_port, demo.redis_port)
    )
    try:
        again.wait_for(r"demo game continues: .*\(#1\): День 2", STARTUP_SECONDS)
        again.wait_for(r"The demo is running", STARTUP_SECONDS)
        again.wait_for(r"Long poll resumes from the stored ts", 30)
        seen = view_of(again, doctor)
        assert any(m["text"].startswith("Принято: лечение") for m in seen["messages"])
        game_topic = next(t for t in seen["topics"] if t["title"].startswith("Игра «"))
        assert any("Утро после ночи 1." in c["text"] for c in game_topic["comments"])
        assert seen["user"]["taken_over"] is True
    finally:
        assert again.stop() == 0, again.output()[-4000:]
    assert time.monotonic() - started < 150, "the demo test is getting slow"


def view_of(demo: Demo, user_id: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"{demo.vk_url}/sandbox/api/users/{user_id}", timeout=10) as r:
        return json.loads(r.read().decode())


def play(context: Any, demo: Demo, doctor: int, doctor_seat: int, target: int, shot: Shots) -> None:
    from playwright.sync_api import expect

    # The GM logs in and opens the game.
    panel = context.new_page()
    panel.goto(f"{demo.web_url}/admin/")
    panel.fill("#id_username", "gm")
    panel.fill("#id_password", "gm")
    panel.click("input[type=submit]")
    expect(panel).to_have_url(re.compile(r"/admin/$"))  # logged in: the session is set
    panel.goto(f"{demo.web_url}/admin/gameplay/game/1/")
    expect(panel.locator("body")).to_contain_text("День 1")

    # The doctor on the player page: the role card and Day 1's prompt arrive by the worker.
    sandbox = context.new_page()
    sandbox.goto(f"{demo.vk_url}/sandbox/#id{doctor}")
    messages = sandbox.locator("#messages")
    expect(messages).to_contain_text("Ваша роль — Доктор")
    expect(messages).to_contain_text("День 1. Голосуйте")
    expect(sandbox.locator("#keyboard")).to_contain_text("Действия")
    expect(sandbox.locator("#takeover")).not_to_be_checked()

    # A vote in the game's topic, typed in the board's box.
    topic = sandbox.locator("#topic-select option", has_text="Игра «").get_attribute("value")
    sandbox.select_option("#topic-select", value=topic)
    sandbox.fill("#compose-comment textarea", f"голос {target}")
    sandbox.click("#compose-comment button")
    expect(sandbox.locator("#takeover")).to_be_checked()  # the person plays the doctor now
    expect(sandbox.locator("#comments")).to_contain_text(f"голос {target}")
    expect(messages).to_contain_text(f"Ваш голос за №{target}")
    # The simulated players vote too (the bot posts a count every ten votes; a changed vote
    # counts as a vote, so the second count may show 19 voters after 20 votes).
    expect(sandbox.locator("#comments")).to_contain_text(
        re.compile(r"Проголосовали (1[1-9]|2\d) из 26"), timeout=90_000
    )
    shot(sandbox, "sandbox-day-1")

    # The GM closes the day in the panel.
    panel.reload()
    panel.click("#close-phase")
    _confirm_close(panel)
    expect(_messages(panel)).to_contain_text("День 1 закрыт")
    expect(sandbox.locator("#comments")).to_contain_text("Итоги дня 1.")
    expect(sandbox.locator("#comments")).to_contain_text("Ночь 1 наступила")

    # Night 1: the doctor heals with a button of the prompt.
    prompt = messages.locator(".msg", has_text="Ночь 1. Кого лечите?").last
    expect(prompt).to_be_visible()
    button = prompt.locator(".ikb .btn").first
    expect(button).to_have_text(re.compile(r"^№\d+ "))
    label = button.inner_text()
    button.click()
    expect(messages).to_contain_text(f"Принято: лечение — {label}")
    shot(sandbox, "sandbox", docs=True)

    # The same page on a phone.
    phone = context.new_page()
    phone.set_viewport_size({"width": 390, "height": 780})
    phone.goto(f"{demo.vk_url}/sandbox/#id{doctor}")
    expect(phone.locator("#messages")).to_contain_text("Принято: лечение")
    expect(phone.locator("#pane-board")).to_be_hidden()
    shot(phone, "sandbox-mobile", docs=True)
    phone.click(".tab[data-tab=board]")
    expect(phone.locator("#pane-board")).to_be_visible()
    expect(phone.locator("#pane-messages")).to_be_hidden()
    phone.close()

    # The GM closes the night, reviews the draft and publishes it.
    panel.reload()
    panel.click("#close-phase")
    _confirm_close(panel)
    expect(_messages(panel)).to_contain_text("Ночь 1 закрыта")
    expect(panel.locator("#draft")).to_be_visible()
    panel.click("#publish-night")
    expect(_messages(panel)).to_contain_text("Итоги ночи 1 опубликованы")
    comments = sandbox.locator("#comments")
    expect(comments).to_contain_text("Утро после ночи 1.")
    expect(comments).to_contain_text(re.compile(r"День 2\. [^\n]*\s+Голосуйте в этой теме"))
    shot(sandbox, "sandbox-day-2")
    sandbox.close()
    panel.close()
    assert doctor_seat  # the doctor's seat is the one the deal says
