"""The board keeps posting after the first hour: a community whose admin signed in with VK ID
(from «Подключить сообщество», against the local VK's VK ID page) plays a whole day and night
while its admin's user token lives 2 seconds — the sign-up posts, the vote counts, the day's
and the night's results all go out, each once, none failed, over more than ten lifetimes of
the token, renewed by the delivery before it expires (and once after VK refused an expired
one: error 5, renewed, sent again).

And when VK says no: the admin revokes the app's access; the renewal is refused, the
community's page says «Войдите заново через VK ID», the GM of its game is flagged, its board
posts stay pending (none failed, none lost) while its private messages keep flowing, and after
the admin signs in again the held posts go out, in order."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.models import (
    Actor,
    Community,
    FlagKind,
    FlagStatus,
    Game,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Seat,
)
from gameplay.rules import RoleCounts
from gameplay.services.day import day_close
from gameplay.services.deal import game_deal
from gameplay.services.night import night_close, night_publish
from gameplay.services.settings import game_open
from gameplay.services.setup import game_start
from gameplay.services.signup import signup_create
from gameplay.services.votes import vote_count_post, vote_submit
from localvk import LocalVK, RunningServer, ServerThread
from tests.gameplay.factories import topic_of
from tests.vkid_support import aim_at, consent, path_and_query, sign_in
from vkbot.delivery import senders
from vkbot.delivery.drain import Drainer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GROUP = 421
ADMIN = 900
PLAYERS = [9001 + n for n in range(8)]
#: The admin's token lives this long (VK ID's hour, shortened).
LIFETIME = 2.0
#: Seconds between two steps of the game: the whole game spans many lifetimes, and each step's
#: posts find the key due (renewed at three quarters of its life) but not yet expired.
STEP = 0.8 * LIFETIME


@pytest.fixture
def vk(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningServer]:
    # The delivery reads a community's credentials again after a second: a test waits only that
    # long (and a little) for a new sign-in to reach it.
    monkeypatch.setattr(senders, "REFRESH_SECONDS", 1.0)
    settings.OUTBOX_DELIVERY_ENABLED = False  # the test drains the Outbox itself
    settings.SIGNUP_LIST_SECONDS = 1  # a list posted after each sign-up (they are seconds apart)
    settings.VK_GROUP_ID = None
    settings.VK_GROUP_TOKEN = settings.VK_USER_TOKEN = ""
    state = LocalVK(group_id=GROUP, group_token=f"vkid-group-{time.time_ns()}",
                    user_tokens={"declared-admin": ADMIN}, group_name="Мафия 2 секунды",
                    group_rps=20, user_rps=3)  # fmt: skip
    state.add_user(ADMIN, "Анна", "Админова")
    for n, vk_id in enumerate(PLAYERS, 1):
        state.add_user(vk_id, f"Игрок{n}", "Тестов")
    with ServerThread(state) as server:
        aim_at(settings, server)
        server.communities.vkid.configure(access_ttl=LIFETIME)
        yield server


@pytest.fixture
def gm(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ведущий", password="x", is_staff=True)


@pytest.fixture
def panel(gm: Any) -> Client:
    client = Client()
    client.force_login(gm)
    return client


class Delivery:
    """The worker: one drain after each step, as the job a commit enqueues would run."""

    def __init__(self) -> None:
        self.drainer = Drainer()

    def drain(self) -> None:
        while True:
            report = self.drainer.run(max_seconds=30.0, wait_up_to=1.0)
            pending = Outbox.objects.filter(status=OutboxStatus.PENDING)
            if not pending.exists() or report.next_due_in is None or report.next_due_in > 1.0:
                return

    def close(self) -> None:
        self.drainer.close()


def open_game(gm: Any, vk: RunningServer) -> Game:
    topic = vk.state.create_topic("Игра", "Здесь идёт игра.")
    return game_open(name="Две секунды", counts=RoleCounts.default_for(len(PLAYERS)), gm=gm,
                     vk_group_id=GROUP, topic_id=topic.id, recruit_topic_id=topic.id,
                     seed="vkid-renewals")  # fmt: skip


def board_rows(game: Game) -> list[Outbox]:
    return list(Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD).order_by("id"))


def assert_each_posted_once(vk: RunningServer, game: Game) -> None:
    comments = "\n\n".join(c.text for c in vk.state.topic(topic_of(game)).comments)
    for row in board_rows(game):
        assert comments.count(row.text) == 1, row.text


def test_a_day_and_a_night_over_many_lifetimes_of_the_admins_token(
    vk: RunningServer, gm: Any, panel: Client
) -> None:
    community = sign_in(panel, vk, group_token=vk.state.group_token, admin=ADMIN)
    started = time.monotonic()
    delivery = Delivery()
    try:
        game = open_game(gm, vk)
        for n, vk_id in enumerate(PLAYERS, 1):  # the sign-up list is posted after each
            signup_create(game_id=game.pk, vk_user_id=vk_id, name=f"Игрок{n} Тестов",
                          pm_allowed=True, topic_id=game.recruit_topic_id)  # fmt: skip
            delivery.drain()
            time.sleep(STEP)
        game_deal(game_id=game.pk)
        game_start(game_id=game.pk)
        delivery.drain()
        for n, vk_id in enumerate(PLAYERS):
            own = Seat.objects.get(game=game, vk_user_id=vk_id).number
            vote_submit(game_id=game.pk, vk_user_id=vk_id, target=1 if own != 1 else 2)
            if n % 2:
                vote_count_post(game_id=game.pk)
            delivery.drain()
            if n == len(PLAYERS) // 2:
                # VK refuses the fresh key before its time (as after an early expiry): the next
                # board call gets error 5, and the delivery renews and sends it again.
                row = Community.objects.get(vk_id=GROUP)
                vk.communities.vkid.expire(access_token=row.user_token)
                vote_count_post(game_id=game.pk)
                delivery.drain()
            time.sleep(STEP)
        day_close(game_id=game.pk, by=Actor.gm("test"))
        delivery.drain()
        time.sleep(STEP)
        night_close(game_id=game.pk, by=Actor.gm("test"))
        night_publish(game_id=game.pk, by=Actor.gm("test"))
        delivery.drain()
        renewed_after_refusal = delivery.drainer.report.renewed
    finally:
        delivery.close()
    elapsed = time.monotonic() - started

    rows = board_rows(game)
    kinds = Counter(row.kind for row in rows)
    statuses = Counter(row.status for row in rows)
    community.refresh_from_db()
    stats = vk.communities.vkid.stats()
    print(
        f"\nVK ID renewals: {community.user_token_renewals} by the project, "
        f"{stats['refreshes']} seen by VK ID (refused: {stats['refused']}, "
        f"reused refresh tokens: {stats['reused_refresh']}), "
        f"{renewed_after_refusal} after VK refused a key (error 5); "
        f"{len(rows)} board posts over {elapsed:.0f} s = {elapsed / LIFETIME:.1f} lifetimes"
    )
    assert elapsed > 10 * LIFETIME
    assert statuses == Counter({OutboxStatus.SENT: len(rows)}), statuses
    assert kinds["signup_list"] >= len(PLAYERS) and kinds["vote_count"] >= 4, kinds
    assert {"roster", "day_opened", "day_result", "night_result"} <= set(kinds), kinds
    assert_each_posted_once(vk, game)
    assert community.user_token_refused_at is None
    assert community.user_token_renewals >= 10
    assert stats["refreshes"] == community.user_token_renewals
    assert stats["reused_refresh"] == 0 and stats["refused"] == 0
    assert renewed_after_refusal >= 1
    assert not Outbox.objects.filter(status=OutboxStatus.FAILED).exists()


def test_a_revoked_sign_in_holds_the_board_until_the_admin_signs_in_again(
    vk: RunningServer, gm: Any, panel: Client
) -> None:
    sign_in(panel, vk, group_token=vk.state.group_token, admin=ADMIN)
    delivery = Delivery()
    try:
        game = open_game(gm, vk)
        for n, vk_id in enumerate(PLAYERS[:3], 1):
            signup_create(game_id=game.pk, vk_user_id=vk_id, name=f"Игрок{n} Тестов",
                          pm_allowed=True, topic_id=game.recruit_topic_id)  # fmt: skip
        delivery.drain()
        before = len(vk.state.topic(topic_of(game)).comments)
        assert before >= 1

        vk.communities.vkid.revoke_user(ADMIN)  # the admin took the app's access back
        time.sleep(LIFETIME)  # the current key runs out: the next post needs a renewal
        for n, vk_id in enumerate(PLAYERS[3:6], 4):
            signup_create(game_id=game.pk, vk_user_id=vk_id, name=f"Игрок{n} Тестов",
                          pm_allowed=True, topic_id=game.recruit_topic_id)  # fmt: skip
            delivery.drain()

        community = Community.objects.get(vk_id=GROUP)
        held = [r for r in board_rows(game) if r.status != OutboxStatus.SENT]
        assert community.user_token_refused_at is not None
        assert held and all(r.status == OutboxStatus.PENDING for r in held)
        assert not Outbox.objects.filter(status=OutboxStatus.FAILED).exists()
        assert len(vk.state.topic(topic_of(game)).comments) == before
        # Private messages go on: the sign-up confirmations reached the new players.
        assert all(vk.state.sent_messages(vk_id) for vk_id in PLAYERS[3:6])
        # The GM is flagged; the page asks the admin to sign in again.
        [flag] = ModerationFlag.objects.filter(game=game, kind=FlagKind.ADMIN_KEY)
        assert flag.status == FlagStatus.OPEN and "войти через VK ID заново" in flag.text
        page = panel.get(reverse("panel:community", kwargs={"vk_id": GROUP})).content.decode()
        assert "Войдите заново через VK ID" in page and 'id="vkid-sign-in-again"' in page

        # The admin signs in again from that page: the held posts go out, in order.
        again = panel.post(reverse("panel:community_reconnect", kwargs={"vk_id": GROUP}),
                           {"how": "vkid"})  # fmt: skip
        assert again.status_code == 302
        back = consent(vk, str(again["Location"]), user_id=ADMIN)
        panel.get(path_and_query(back), follow=True)
        time.sleep(senders.REFRESH_SECONDS + 0.5)  # the delivery reads the credentials again
        delivery.drain()
    finally:
        delivery.close()

    community.refresh_from_db()
    assert community.user_token_refused_at is None
    rows = board_rows(game)
    assert all(r.status == OutboxStatus.SENT for r in rows)
    assert_each_posted_once(vk, game)
    comments = [c.text for c in vk.state.topic(game.topic_id).comments]
    positions = [next(i for i, c in enumerate(comments) if r.text in c) for r in rows]
    assert positions == sorted(positions)  # in the order they were written
    flag.refresh_from_db()
    assert flag.status == FlagStatus.ACTED
