"""«Войти через VK ID» in a real browser (Playwright driving Debian's Chromium): a GM opens
«Подключить сообщество», types the community token, presses «Войти через VK ID», allows on the
local VK's VK ID page as the community's admin, and lands on the community's page, connected,
its admin key renewing itself. Then the bot serves the community: ``manage.py runbot`` (in a
thread of its own, reading the community from the database) answers a player's «помощь», and a
board post goes out with the admin's VK ID key. No page refuses anything under its
Content-Security-Policy (the form's redirect to VK ID included)."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from bench.procs import wait_for
from gameplay.models import Community, Outbox, OutboxChannel, OutboxStatus
from gameplay.rules import RoleCounts
from gameplay.services.common import post_board
from gameplay.services.settings import game_open
from localvk import LocalVK, ServerThread, token_fingerprint
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING
from tests.panel.conftest import PASSWORD
from tests.panel.test_browser import csp_violations, page  # noqa: F401 (the fixtures)
from tests.runbot_support import RunbotThread
from tests.vkid_support import aim_at
from vkbot.delivery.drain import Drainer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
        reason=f"{CHROMIUM_MISSING}; CI installs it",
    ),
]

GROUP, ADMIN, PLAYER = 451, 950, 9501


def drain() -> None:
    """The worker's drain, in a thread of its own (Playwright's event loop runs in this one)."""

    def run() -> None:
        try:
            with Drainer() as drainer:
                drainer.run(max_seconds=20.0, wait_up_to=0.5)
        finally:
            connections.close_all()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)


def test_an_admin_signs_in_with_vk_id_in_the_browser_and_the_bot_serves_the_community(
    page: Any,  # noqa: F811
    live_server: Any,
    gm: Any,
    settings: Any,
    tmp_path: Path,
) -> None:
    settings.OUTBOX_DELIVERY_ENABLED = False  # the test drains the Outbox itself
    settings.VK_GROUP_ID = None
    settings.VK_GROUP_TOKEN = settings.VK_USER_TOKEN = ""
    group_token = f"browser-group-{time.time_ns()}"
    state = LocalVK(
        group_id=GROUP,
        group_token=group_token,
        user_tokens={"declared-admin": ADMIN},
        group_name="Мафия в браузере",
    )
    state.add_user(ADMIN, "Анна", "Админова")
    state.add_user(PLAYER, "Пётр", "Игроков")
    base = live_server.url
    with ServerThread(state) as vk:
        aim_at(settings, vk, public_url=base)

        page.goto(f"{base}/admin/")
        page.fill("#id_username", gm.username)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        expect(page.locator("#user-tools")).to_be_visible()

        page.goto(f"{base}/panel/communities/connect/")
        page.fill("#id_group_token", group_token)
        page.screenshot(path=str(tmp_path / "01-connect.png"), full_page=True)
        page.click("#vkid-sign-in")

        # The local VK's VK ID page: the admin allows.
        expect(page).to_have_url(re.compile(re.escape(f"{vk.url}/vkid/authorize") + r"\?"))
        expect(page.locator("h1")).to_have_text("Войти через VK ID")
        page.screenshot(path=str(tmp_path / "02-vk-id.png"), full_page=True)
        page.locator("li", has_text="Анна Админова").get_by_role("button", name="Разрешить").click()

        # Back in the panel: connected, the key renewing itself.
        expect(page).to_have_url(re.compile(re.escape(f"{base}/panel/communities/{GROUP}/") + "$"))
        expect(page.locator("ul.messagelist")).to_contain_text("«Мафия в браузере» подключено")
        expect(page.locator("#admin-key-state")).to_contain_text("продлевается сам")
        page.screenshot(path=str(tmp_path / "03-community.png"), full_page=True)
        community = Community.objects.get(vk_id=GROUP)
        assert community.connected and community.user_token_source == "vkid"
        assert vk.communities.vkid.stats()["grants"] == 1

        # The bot serves it: runbot (the command, in a thread of its own: this one runs the
        # browser's loop) finds the community in the database and answers a player; the board
        # post goes out with the admin's VK ID key.
        settings.VK_COMMUNITIES_REFRESH_SECONDS = 1
        with RunbotThread("--wait", "1") as bot:
            wait_for(lambda: f"long poll for group {GROUP}" in bot.output(), timeout=120,
                     what="runbot polling the community connected in the browser")  # fmt: skip
            # The poll starts from the server's position: write only once runbot has it.
            wait_for(lambda: state.calls("groups.getLongPollServer"), timeout=60,
                     what="runbot asking for the long-poll server")  # fmt: skip
            state.inject_message(PLAYER, "помощь")
            wait_for(_reply_queued, timeout=30, what="the bot's answer to «помощь»")
        log = bot.output()
        topic = state.create_topic("Игра", "Здесь идёт игра.")
        game = game_open(name="Игра из браузера", counts=RoleCounts.default_for(8), gm=gm,
                         vk_group_id=GROUP, topic_id=topic.id, seed="browser")  # fmt: skip
        post_board(game=game, text="Набор открыт.", kind="post")
        drain()

    assert [m.text for m in state.sent_messages(PLAYER)], log[-3000:]
    [comment] = state.calls("board.createComment")
    community.refresh_from_db()
    assert comment.to_dict()["token"] == token_fingerprint(community.user_token)
    assert comment.error is None and state.topic(topic.id).comments[-1].text.endswith(
        "Набор открыт."
    )
    assert (
        not Outbox.objects.exclude(status=OutboxStatus.SENT)
        .filter(channel=OutboxChannel.BOARD)
        .exists()
    )


def _reply_queued() -> bool:
    """Whether the bot queued its answer to the player (a private message of no game)."""
    return Outbox.objects.filter(channel=OutboxChannel.MESSAGE).exists()
