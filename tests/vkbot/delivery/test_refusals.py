"""vkbot.delivery.refusals against the local VK: when VK refuses a community's admin key in a
round, no board row fails for it — the key is renewed and the post sent again, or the rows go
back unsent (no attempt counted) and wait for the admin to sign in again; a topic's own refusal
still fails its post."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gameplay.models import (
    Actor,
    Community,
    FlagKind,
    Game,
    ModerationFlag,
    Outbox,
    OutboxStatus,
)
from gameplay.rules import RoleCounts
from gameplay.services.admin_tokens import AdminKey
from gameplay.services.common import post_board
from gameplay.services.communities import community_record
from gameplay.services.setup import game_create
from localvk import LocalVK, RunningServer, ServerThread
from tests.gameplay.factories import topic_of
from tests.vkid_support import aim_at, issue
from vkbot.delivery.drain import Drainer

pytestmark = pytest.mark.django_db

GROUP, ADMIN = 461, 970
REDIRECT = "http://testserver/panel/communities/vkid/"


@pytest.fixture
def vk(settings: Any) -> Iterator[RunningServer]:
    settings.OUTBOX_DELIVERY_ENABLED = False
    settings.VK_GROUP_ID = None
    settings.VK_GROUP_TOKEN = settings.VK_USER_TOKEN = ""
    state = LocalVK(group_id=GROUP, group_token="r-group", user_tokens={"declared": ADMIN},
                    group_name="Отказы")  # fmt: skip
    with ServerThread(state) as server:
        aim_at(settings, server)
        yield server


def connect(key: AdminKey) -> Community:
    return community_record(vk_id=GROUP, name="Отказы", group_token="r-group", admin_key=key,
                            connected=True)  # fmt: skip


def game_with_posts(vk: RunningServer, n: int = 2) -> Game:
    topic = vk.state.create_topic("Игра", "Здесь идёт игра.")
    game = game_create(name="Отказы", counts=RoleCounts.default_for(8), by=Actor.gm("test"),
                       vk_group_id=GROUP, topic_id=topic.id)  # fmt: skip
    for i in range(n):
        post_board(game=game, text=f"Пост {i}.", kind="post")
    return game


def drain() -> Drainer:
    with Drainer() as drainer:
        drainer.run(max_seconds=10.0, wait_up_to=0.2)
        return drainer


def board(game: Game) -> list[Outbox]:
    return list(Outbox.objects.filter(game=game, kind="post").order_by("id"))


def test_a_key_vk_refused_is_renewed_and_the_post_sent_again(vk: RunningServer) -> None:
    connect(AdminKey.of_grant(issue(vk, admin=ADMIN, redirect=REDIRECT)))
    game = game_with_posts(vk)
    vk.communities.vkid.expire(access_token=Community.objects.get(vk_id=GROUP).user_token)

    drainer = drain()

    assert drainer.report.renewed == 1 and drainer.report.failed == 0
    assert all(r.status == OutboxStatus.SENT and r.attempts == 1 for r in board(game))
    assert Community.objects.get(vk_id=GROUP).user_token_renewals == 1


def test_an_admin_who_left_the_admins_holds_the_board(vk: RunningServer) -> None:
    connect(AdminKey.of_grant(issue(vk, admin=ADMIN, redirect=REDIRECT)))
    game = game_with_posts(vk)
    with vk.state.lock:  # the owner took the admin's rights away
        del vk.state.user_tokens["declared"]

    drain()

    community = Community.objects.get(vk_id=GROUP)
    assert community.user_token_refused_at is not None
    assert "no longer administers" in community.user_token_problem
    assert all(r.status == OutboxStatus.PENDING and r.attempts == 0 for r in board(game))
    assert ModerationFlag.objects.filter(game=game, kind=FlagKind.ADMIN_KEY).count() == 1
    assert not vk.state.topic(topic_of(game)).comments[1:]


def test_a_closed_topic_still_fails_its_post(vk: RunningServer) -> None:
    connect(AdminKey.of_grant(issue(vk, admin=ADMIN, redirect=REDIRECT)))
    game = game_with_posts(vk, n=1)
    vk.state.topic(topic_of(game)).is_closed = True

    drain()

    assert [r.status for r in board(game)] == [OutboxStatus.FAILED]
    assert Community.objects.get(vk_id=GROUP).user_token_refused_at is None


def test_a_pasted_key_vk_refuses_holds_the_board(vk: RunningServer) -> None:
    connect(AdminKey(access_token="a-key-vk-no-longer-knows"))
    game = game_with_posts(vk)

    drain()

    community = Community.objects.get(vk_id=GROUP)
    assert community.user_token_refused_at is not None
    assert all(r.status == OutboxStatus.PENDING and r.attempts == 0 for r in board(game))


def test_vk_id_not_answering_keeps_the_rows_for_a_later_try(
    vk: RunningServer, settings: Any
) -> None:
    connect(AdminKey.of_grant(issue(vk, admin=ADMIN, redirect=REDIRECT)))
    game = game_with_posts(vk)
    vk.communities.vkid.expire(access_token=Community.objects.get(vk_id=GROUP).user_token)
    settings.VK_ID_URL = "http://127.0.0.1:9/vkid/"  # nothing answers there

    drain()

    community = Community.objects.get(vk_id=GROUP)
    assert community.user_token_refused_at is None and community.user_token_renewals == 0
    assert all(r.status == OutboxStatus.PENDING and r.attempts == 0 for r in board(game))
