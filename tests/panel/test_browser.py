"""A GM runs a whole game in a real browser (Playwright driving Debian's Chromium).

The test logs in, creates a game, signs up 26 players, randomises (and sees the draws, exactly
one item with the mafia), starts, closes Day 1, edits and publishes Night 1, modkills, replaces,
opens the spectator chat and ends the game, saving a screenshot of every screen. Players' votes
and night actions arrive through the services, as the bot would deliver them.

Beside it: the game page and its confirmations at 390×844 (a phone), every other panel page
there too (no sideways scroll), removing a player after the deal (confirmed first), and the
GM's voice — the theme editor refusing a broken template with its line, and a night draft's
story paragraph published exactly as previewed.

Every check of the page after a click, a navigation or a form submission is one of Playwright's
waiting assertions (``expect``): on a busy machine the page the click leads to comes later, and
reading the page at once would read the old one. The database is read only after the page shows
that the request was done.

Screenshots go to a temporary folder; with ``PANEL_SCREENSHOTS_DIR`` set (``make screenshots``)
the ones docs/panel.md shows are also written there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from playwright.sync_api import expect

from gameplay import services
from gameplay.models import (
    Actor,
    Game,
    GameEvent,
    GameStatus,
    Outbox,
    OutboxChannel,
    Phase,
    Seat,
    SeatStatus,
)
from gameplay.rules import Role
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING
from tests.gameplay.factories import number_of
from tests.panel.conftest import PASSWORD
from tests.panel.support import community_of

#: Screens docs/panel.md shows (docs/screenshots/<name>.png).
DOCS_SCREENS = ("deal", "day", "night-draft", "spectators", "day-close-confirm", "game-mobile")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
        reason=f"{CHROMIUM_MISSING}; CI installs it",
    ),
]


#: Every page reports what its Content-Security-Policy refused as a console message; Chromium
#: writes its own as well («Refused to execute inline script because it violates …»).
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " " + (e.blockedURI || "inline")
                + " at " + e.sourceFile + ":" + e.lineNumber);
});
"""


def _is_csp_violation(text: str) -> bool:
    return text.startswith(("CSP violation:", "Refused to")) or "Content Security Policy" in text


@pytest.fixture
def csp_violations() -> list[str]:
    """What the pages of a test refused under their Content-Security-Policy (config/csp.py):
    none, checked when the tab closes."""
    return []


@pytest.fixture
def page(
    chromium: Any, live_server: Any, monkeypatch: pytest.MonkeyPatch, csp_violations: list[str]
) -> Iterator[Any]:
    """A Chromium tab in a browser context of its own (the module's one Chromium); closed
    before the live server stops. No page it showed may have had anything refused by the
    Content-Security-Policy."""
    # The browser keeps HTTP connections alive: the server's request threads must not keep
    # persistent database connections open past the test (PostgreSQL's teardown waits).
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    context = chromium.new_context(viewport={"width": 1360, "height": 860}, locale="ru-RU")
    context.set_default_timeout(15_000)
    # The waiting assertions get the same patience as the actions (their default is 5 s).
    expect.set_options(timeout=15_000)
    context.add_init_script(REPORT_CSP_VIOLATIONS)
    tab = context.new_page()
    tab.on(
        "console",
        lambda m: csp_violations.append(m.text) if _is_csp_violation(m.text) else None,
    )
    try:
        yield tab
    finally:
        # The test's ORM calls ran beside Playwright's event loop, where Django keeps
        # separate connections: close them here, in the same context.
        connections.close_all()
        context.close()
    assert csp_violations == [], "the Content-Security-Policy refused parts of a page"


class Shots:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.docs = (
            Path(os.environ["PANEL_SCREENSHOTS_DIR"])
            if os.environ.get("PANEL_SCREENSHOTS_DIR")
            else None
        )
        self.n = 0

    def __call__(self, page: Any, name: str) -> None:
        self.n += 1
        page.screenshot(path=str(self.folder / f"{self.n:02d}-{name}.png"), full_page=True)
        if self.docs is not None and name in DOCS_SCREENS:
            self.docs.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(self.docs / f"{name}.png"))


def _messages(page: Any) -> Any:
    """The Django messages of the page (the outcome of the last action)."""
    return page.locator("ul.messagelist")


def _at(page: Any, path: str) -> None:
    """Wait until the tab shows the page whose address ends with ``path``."""
    expect(page).to_have_url(re.compile(re.escape(path) + r"(\?.*)?$"))


def test_gm_runs_a_whole_game_in_the_browser(
    page: Any, live_server: Any, gm: Any, tmp_path: Path
) -> None:
    community_of(12345, owner=gm)  # the GM's one community: the new game's, chosen for them
    shot = Shots(tmp_path)
    base = live_server.url

    # Log in.
    page.goto(f"{base}/admin/")
    page.fill("#id_username", gm.username)
    page.fill("#id_password", PASSWORD)
    shot(page, "login")
    page.click("input[type=submit]")
    _at(page, "/admin/")
    expect(page.locator("h1")).to_have_text("Мои игры")  # the GM lands on their games
    page.get_by_role("link", name="Все игры").click()
    _at(page, "/admin/gameplay/game/")

    # A new game with the default 26-player table.
    page.click("a.addlink")
    page.fill("#id_name", "Машина времени")
    page.fill("#id_topic", "https://vk.com/topic-12345_678")
    shot(page, "new-game")
    page.click("#save-game")
    expect(_messages(page)).to_contain_text("создана")
    game = Game.objects.get()
    game_url = f"/admin/gameplay/game/{game.pk}/"
    assert (game.vk_group_id, game.topic_id, game.mafia_count) == (12345, 678, 6)

    # 26 sign-ups: one by link, the rest as a list.
    page.fill("#add-player input[name=vk]", "https://vk.com/id1001")
    page.fill("#add-player input[name=name]", "Аня")
    page.click("#add-player button")
    expect(_messages(page)).to_contain_text("Аня (id1001) — в составе игры.")
    lines = "\n".join(f"id{1001 + i} Игрок {i + 1}" for i in range(1, 26))
    page.fill("#add-bulk textarea", lines)
    page.click("#add-bulk button")
    expect(_messages(page)).to_contain_text("Добавлено игроков: 25")
    shot(page, "signups")
    assert Seat.objects.filter(game=game, status=SeatStatus.PLAYER).count() == 26

    # Randomise: every draw is shown, and the accepted one puts exactly one item with the mafia.
    # A new round (confirmed on its own page) until a deal needed more than one draw, so that
    # the page shows a rejected draw too.
    page.click("#deal-button")
    _at(page, game_url + "deal/")
    expect(_messages(page)).to_contain_text("Роли розданы")
    for _ in range(12):
        game.refresh_from_db()
        if (
            game.draws.filter(deal_round=game.draws.order_by("-deal_round")[0].deal_round).count()
            > 1
        ):
            break
        page.click("a:has-text('Новый раунд…')")
        _at(page, game_url + "deal/round/")
        expect(page.locator("#confirm")).to_contain_text("Начать новый раунд раздачи?")
        page.click("#confirm-button")
        _at(page, game_url + "deal/")
        expect(_messages(page)).to_contain_text("роли розданы заново")
    draws = page.locator("#draws tbody tr")
    accepted = page.locator("#draws tbody tr.lead")
    expect(accepted).to_have_count(1)
    expect(accepted.locator("td").nth(4)).to_have_text("1")
    game.refresh_from_db()
    last_round = game.draws.order_by("-deal_round")[0].deal_round
    expect(draws).to_have_count(game.draws.filter(deal_round=last_round).count())
    mafia_items = Seat.objects.filter(game=game, role=Role.MAFIA).exclude(item="").count()
    assert mafia_items == 1
    expect(page.locator("#commitment")).to_contain_text(game.commitment)
    shot(page, "deal")

    # Start: Day 1, after its confirmation page.
    page.click("#start-button")
    _at(page, game_url + "start/")
    expect(page.locator("#confirm")).to_contain_text("Все игроки (26) получат")
    shot(page, "start-confirm")
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("Игра началась")
    seats = {number_of(s): s for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER)}
    town = sorted(n for n, s in seats.items() if s.role == Role.CIVILIAN)
    mafia = sorted(n for n, s in seats.items() if s.role == Role.MAFIA)
    doomed = town[0]
    Seat.objects.filter(game=game, number=doomed).update(sex=1)  # as VK would have told it
    for n in sorted(seats):
        if n not in (doomed, town[-1]):
            services.vote_submit(game_id=game.pk, voter=n, target=doomed)
    services.vote_submit(game_id=game.pk, voter=doomed, target=mafia[0])
    page.reload()
    expect(page.locator("#tally tbody tr.lead td").nth(0)).to_have_text(str(doomed))
    expect(page.locator("#not-voted")).to_contain_text("№" + str(town[-1]))
    shot(page, "day")
    page.click("#close-phase")
    _at(page, game_url + "phase/close/")
    expect(page.locator("#close-outcome")).to_contain_text(f"Будет казнена №{doomed}")
    expect(page.locator("#close-strikes")).to_contain_text(f"№{town[-1]}")
    shot(page, "day-close-confirm")
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text(f"казнена №{doomed}")

    # Night 1: the players act, the GM closes, edits the draft and publishes it.
    role_of = {s.role: n for n, s in seats.items() if s.role != Role.CIVILIAN}
    victim, extra = town[1], town[2]
    services.night_action_submit(game_id=game.pk, actor=mafia[0], act="mafia_shot", target=victim)
    services.night_action_submit(
        game_id=game.pk, actor=role_of[Role.COMMISSAR], act="check", target=mafia[1]
    )
    services.night_action_submit(
        game_id=game.pk, actor=role_of[Role.DOCTOR], act="heal", target=role_of[Role.DOCTOR]
    )
    services.night_action_submit(
        game_id=game.pk, actor=role_of[Role.MANIAC], act="maniac_shot", target=mafia[2]
    )
    page.reload()
    shot(page, "night")
    page.click("#close-phase")
    _at(page, game_url + "phase/close/")
    expect(page.locator("#close-outcome")).to_contain_text("черновик итогов придёт вам")
    expect(page.locator("#close-deaths")).to_contain_text(f"№{victim}")
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("Ночь 1 закрыта")
    expect(page.locator("#draft")).to_be_visible()
    expect(page.locator("#draft-summary")).to_contain_text(f"№{victim}")
    shot(page, "night-draft")
    page.check(f"#draft-edit input[value='{extra}']")
    page.fill("#draft-edit input[name=reason]", "Проверка правки в панели")
    page.click("#edit-night")
    expect(_messages(page)).to_contain_text("Черновик исправлен")
    expect(page.locator("#draft-summary")).to_contain_text(f"№{extra}")
    page.click("#publish-night")
    expect(_messages(page)).to_contain_text("опубликованы")
    for n in (victim, extra, mafia[2]):
        assert not Seat.objects.get(game=game, number=n).alive
    shot(page, "day-2")

    # Modkill, after its confirmation page.
    modkilled = town[3]
    page.click(f"a[href$='/seats/{modkilled}/modkill/']")
    _at(page, game_url + f"seats/{modkilled}/modkill/")
    expect(page.locator("#confirm")).to_be_visible()
    assert Seat.objects.get(game=game, number=modkilled).alive  # nothing happened yet
    page.fill("#confirm input[name=reason]", "Оскорбления в теме")
    shot(page, "modkill-confirm")
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("модкилл")
    assert not Seat.objects.get(game=game, number=modkilled).alive

    # Replacement by any VK user.
    replaced = town[4]
    page.click(f"a[href$='/seats/{replaced}/replace/']")
    _at(page, game_url + f"seats/{replaced}/replace/")
    page.fill("#replace input[name=vk]", "vk.com/id5555")
    page.fill("#replace input[name=name]", "Новичок")
    shot(page, "replace")
    page.click("#replace-button")
    expect(_messages(page)).to_contain_text("передано")
    seat = Seat.objects.get(game=game, number=replaced)
    assert (seat.vk_user_id, seat.name) == (5555, "Новичок")

    # The spectator chat: link it, open it.
    page.get_by_role("link", name="Беседа ЗЗ").first.click()
    _at(page, game_url + "spectators/")
    page.fill("#chat input[name=chat]", "7")
    page.click("#link-chat")
    # The old page has the «open» button too: click it on the page the link led to.
    expect(_messages(page)).to_contain_text("Беседа привязана")
    page.click("#open-chat")
    expect(_messages(page)).to_contain_text("открыта")
    game.refresh_from_db()
    assert game.spectator_chat_open and game.spectator_chat_id == 2_000_000_007
    eligible = page.locator("#eligible")
    expect(eligible).to_contain_text(f"№{doomed}")
    expect(eligible).not_to_contain_text(f"№{mafia[2]}")
    shot(page, "spectators")

    # The log shows the GM's overrides.
    page.get_by_role("link", name="Журнал").first.click()
    _at(page, game_url + "log/")
    page.check("#log-filters input[name=overrides]")
    page.click("#log-filters button")
    expect(page).to_have_url(re.compile(r"/log/\?.*overrides="))
    expect(page.locator("#log")).to_contain_text("Модкилл")
    expect(page.locator("#log")).to_contain_text("Правка ночи")
    shot(page, "log")

    # End the game, after its confirmation page.
    page.get_by_role("link", name="Ход игры").first.click()
    _at(page, game_url)
    page.click("a:has-text('Завершить игру…')")
    _at(page, game_url + "end/")
    expect(page.locator("#confirm select[name=winner]")).to_be_visible()
    shot(page, "end-confirm")
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING
    page.select_option("#confirm select[name=winner]", "town")
    page.fill("#confirm input[name=reason]", "Проверка завершения")
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("Игра завершена")
    game.refresh_from_db()
    assert (game.status, game.winner) == (GameStatus.FINISHED, "town")
    assert GameEvent.objects.filter(game=game, kind="game_finished", override=True).exists()
    assert not Phase.objects.filter(game=game, status__in=["open", "review"]).exists()
    shot(page, "finished")

    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(names) == shot.n >= 14, names
    assert all(re.match(r"\d\d-[a-z0-9-]+\.png$", n) for n in names)


PHONE = {"width": 390, "height": 844}


def _fits_the_phone(page: Any) -> None:
    """No horizontal scroll of the page at 390 px (a wide table may scroll inside its box)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (page.url, width)


def _log_in(page: Any, base: str, gm: Any) -> None:
    page.goto(f"{base}/admin/")
    page.fill("#id_username", gm.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("h1")).to_have_text("Мои игры")


def test_the_game_page_and_its_confirmations_fit_a_phone(
    page: Any, live_server: Any, gm: Any, tmp_path: Path
) -> None:
    from tests.panel.support import make_game

    shot = Shots(tmp_path)
    base = live_server.url
    page.set_viewport_size(PHONE)
    game = make_game(gm, players=26, name="Машина времени", seed="phone-seed")
    game_url = f"/admin/gameplay/game/{game.pk}/"
    seats = {number_of(s): s for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER)}
    town = sorted(n for n, s in seats.items() if s.role == Role.CIVILIAN)
    mafia = sorted(n for n, s in seats.items() if s.role == Role.MAFIA)
    Seat.objects.filter(game=game, number=town[0]).update(sex=2)  # as VK would have told it
    for n in sorted(seats)[:-3]:
        target = town[0] if n % 3 else town[1]
        services.vote_submit(game_id=game.pk, voter=n, target=target if n != target else mafia[0])

    _log_in(page, base, gm)
    expect(page.locator("#my-games")).to_contain_text("Машина времени")
    _fits_the_phone(page)
    page.locator("#my-games a", has_text="Машина времени").first.click()
    _at(page, game_url)
    # The tally's voters and the seat actions are on screen, and nothing scrolls sideways.
    expect(page.locator("#tally tbody tr.lead")).to_contain_text(seats[town[0]].name)
    voters = page.locator("#tally tbody tr.lead td.gm-history")
    expect(voters).to_be_in_viewport()
    modkill = page.locator(f"a[href$='/seats/{town[5]}/modkill/']")
    modkill.scroll_into_view_if_needed()
    expect(modkill).to_be_in_viewport()
    _fits_the_phone(page)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "game-mobile")

    # «Закрыть день сейчас» on the phone: its confirmation first.
    page.click("#close-phase")
    _at(page, game_url + "phase/close/")
    expect(page.locator("#close-outcome")).to_contain_text(f"Будет казнён №{town[0]}")
    _fits_the_phone(page)
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text(f"казнён №{town[0]}")

    # The night, closed on the phone, and its draft reviewed there.
    roles = {s.role: n for n, s in seats.items() if s.role != Role.CIVILIAN}
    services.night_action_submit(game_id=game.pk, actor=mafia[0], act="mafia_shot", target=town[2])
    services.night_action_submit(
        game_id=game.pk, actor=roles[Role.COMMISSAR], act="check", target=mafia[1]
    )
    page.reload()
    page.click("#close-phase")
    _at(page, game_url + "phase/close/")
    expect(page.locator("#close-deaths")).to_contain_text(f"№{town[2]}")
    _fits_the_phone(page)
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("Ночь 1 закрыта")
    expect(page.locator("#draft-summary")).to_contain_text(f"№{town[2]}")
    edit = page.locator("#edit-night")
    edit.scroll_into_view_if_needed()
    expect(edit).to_be_in_viewport()
    _fits_the_phone(page)
    shot(page, "night-draft-mobile")
    page.click("#publish-night")
    expect(_messages(page)).to_contain_text("опубликованы")
    _fits_the_phone(page)


def test_removing_a_player_after_the_deal_is_confirmed(
    page: Any, live_server: Any, gm: Any, tmp_path: Path
) -> None:
    from tests.panel.support import make_game

    page.set_viewport_size(PHONE)
    game = make_game(gm, players=7, name="До старта", start=False)
    seat = Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("number").first()
    assert seat is not None
    _log_in(page, live_server.url, gm)
    page.goto(f"{live_server.url}/admin/gameplay/game/{game.pk}/players/")
    page.locator(f"form[action$='/players/{seat.pk}/remove/'] button").click()
    expect(page.locator("#confirm")).to_contain_text("раздача будет сброшена")
    _fits_the_phone(page)
    game.refresh_from_db()
    assert game.status == GameStatus.DEALT  # nothing happened yet
    page.click("#confirm-button")
    expect(_messages(page)).to_contain_text("Раздача сброшена")
    game.refresh_from_db()
    assert game.status == GameStatus.RECRUITING


def test_the_gm_edits_a_theme_text_and_a_nights_story_in_the_browser(
    page: Any, live_server: Any, gm: Any, tmp_path: Path
) -> None:
    from tests.panel.support import make_game, night_round, vote_round

    shot = Shots(tmp_path)
    game = make_game(gm, players=7, seed="browser-texts")
    _log_in(page, live_server.url, gm)
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
    services.day_close(game_id=game.pk, by=Actor.gm("t"))
    night_opened = Outbox.objects.filter(
        game=game, channel=OutboxChannel.BOARD, kind="night_opened"
    ).get()
    assert night_opened.text.startswith("Ночь 1 наступила. Над лабораторией 1-я ночь.")

    # The night's draft: the exact post, the GM's story in it, published as shown.
    night_round(game)
    services.night_close(game_id=game.pk, by=Actor.gm("t"))
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


def test_the_public_pages_and_the_login_keep_the_content_security_policy(
    page: Any, live_server: Any, gm: Any, csp_violations: list[str]
) -> None:
    """The players' page (where ``/`` leads), the community admin's, the login and «Мои игры»
    carry the policy and break none of it; an inline script is refused and reported."""
    response = page.goto(f"{live_server.url}/")
    _at(page, "/players/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator("main h1")).to_be_visible()
    # The page's style sheet applies (an inline <style> would have been refused).
    assert page.locator("main").evaluate("e => getComputedStyle(e).maxWidth") != "none"
    page.goto(f"{live_server.url}/community/")
    expect(page.locator("main h1")).to_be_visible()
    _log_in(page, live_server.url, gm)  # «Мои игры»
    assert csp_violations == []

    # The report works: a script injected inline is refused, and that is seen.
    page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
        " document.body.appendChild(s); }"
    )
    for _ in range(50):
        if csp_violations:
            break
        page.wait_for_timeout(100)
    assert page.evaluate("() => window.ran") is None
    assert any("script-src" in v for v in csp_violations), csp_violations
    csp_violations.clear()


def test_every_panel_page_fits_a_phone(page: Any, live_server: Any, gm: Any) -> None:
    """Every tab of a game in sign-up, a running one with its night's draft under review, a
    finished one and one in its day, their confirmations and the log's filters, the games
    list, «Мои игры» and the community pages: none scrolls sideways at 390 px."""
    from tests.panel.test_panel_reads import pages, played

    games = played(gm)
    client = Client()
    client.force_login(gm)
    # an action's address (POST only, or a redirect) has no page of its own
    urls = [u for u in pages(gm, games) if client.get(u).status_code == 200]
    page.set_viewport_size(PHONE)
    _log_in(page, live_server.url, gm)
    wide = []
    for url in urls:
        page.goto(live_server.url + url)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide.append(f"{url}: {width} px")
    assert len(urls) >= 40, urls
    assert wide == [], "\n".join(wide)
