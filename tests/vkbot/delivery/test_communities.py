"""Delivery as many communities: each row with its community's tokens, a disconnected
community's rows waiting, and one community's burst not holding another's reply back.

The local VK hosts both communities (77, the environment's, and 88) in one server and
attributes every call to a community by the token it came with."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from gameplay.models import Community, Game, Outbox, OutboxStatus
from gameplay.services.common import post_board, send_message
from localvk import RunningServer
from outbox.ratelimit import token_key
from tests.gameplay.factories import queued
from tests.vkbot.delivery_support import (
    GROUP_ID,
    GROUP_TOKEN,
    USER_TOKEN,
    deliver,
    make_game,
    message_row,
    received,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.delivery import senders
from vkbot.delivery.drain import Drainer

pytestmark = pytest.mark.django_db

OTHER_ID = 88
OTHER_GROUP_TOKEN = "community-88-group-token"
OTHER_USER_TOKEN = "community-88-admin-token"


@dataclass
class Sent:
    """One request the local VK got: whose token ("77-group", "88-user", …), the method, its
    parameters."""

    token: str
    method: str
    data: dict[str, Any] = field(default_factory=dict)

    def mentions(self, text: str) -> bool:
        return any(text in str(value) for value in self.data.values())


@pytest.fixture(name="sent")
def sent_fixture(
    vk: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[], list[Sent]]]:
    """Both communities connected; a function listing every request the two got, in order."""
    vk.communities.create(
        group_id=OTHER_ID, group_token=OTHER_GROUP_TOKEN, user_tokens=[OTHER_USER_TOKEN]
    )
    monkeypatch.setattr(senders, "REFRESH_SECONDS", 0.0)
    Community.objects.create(
        vk_id=GROUP_ID, name="Первое", group_token=GROUP_TOKEN, user_token=USER_TOKEN,
        connected=True, from_env=True,
    )  # fmt: skip
    Community.objects.create(
        vk_id=OTHER_ID, name="Второе", group_token=OTHER_GROUP_TOKEN,
        user_token=OTHER_USER_TOKEN, connected=True,
    )  # fmt: skip
    _reset(OTHER_GROUP_TOKEN, OTHER_USER_TOKEN)

    def requests() -> list[Sent]:
        records = [
            record
            for group in (GROUP_ID, OTHER_ID)
            for record in vk.community(group).calls(include_inner=False)
        ]
        return [
            Sent(f"{r.group_id}-{r.token_kind}", r.method, dict(r.params))
            for r in sorted(records, key=lambda r: r.seq)
        ]

    yield requests
    _reset(OTHER_GROUP_TOKEN, OTHER_USER_TOKEN)


def _reset(*tokens: str) -> None:
    import django_rq

    django_rq.get_connection("vk").delete(*(token_key(t) for t in tokens))


def two_games(vk: RunningServer) -> tuple[Game, Game, int, int]:
    """A game in each community, each with a topic of its community (their ids differ: a
    topic id is one active game's)."""
    first_topic = vk.state.create_topic("Игра первого").id
    theirs = vk.community(OTHER_ID)
    second_topic = next(
        t.id for t in (theirs.create_topic(f"Тема {n}") for n in range(first_topic + 1))
        if t.id != first_topic
    )  # fmt: skip
    first = make_game(topic_id=first_topic, vk_group_id=GROUP_ID)
    second = make_game(topic_id=second_topic, vk_group_id=OTHER_ID)
    return first, second, first_topic, second_topic


def test_each_community_s_rows_go_out_with_its_own_tokens(
    vk: RunningServer, sent: Callable[[], list[Sent]]
) -> None:
    first, second, first_topic, second_topic = two_games(vk)
    send_message(game=first, peer_ids=[1001], text="Первому сообществу", kind="status")
    send_message(game=second, peer_ids=[2001], text="Второму сообществу", kind="status")
    message_row([3001], "Без игры, как второе", group_id=OTHER_ID)
    message_row([4001], "Без игры и без сообщества")  # the environment's: 77
    post_board(game=first, text="Пост первого", kind="post")
    post_board(game=second, text="Пост второго", kind="post")

    report = deliver()

    assert report.failed == 0
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()
    by_token: dict[str, list[Sent]] = {}
    for request in sent():
        by_token.setdefault(request.token, []).append(request)
    texts = {
        "77-group": ["Первому сообществу", "Без игры и без сообщества"],
        "88-group": ["Второму сообществу", "Без игры, как второе"],
        "77-user": ["Пост первого"],
        "88-user": ["Пост второго"],
    }
    for token, wanted in texts.items():
        mine = by_token.get(token, [])
        for text in wanted:
            assert any(r.mentions(text) for r in mine), (token, text)
        others = [r for other, rs in by_token.items() if other != token for r in rs]
        assert not any(r.mentions(text) for r in others for text in wanted), token
    # Board posts carry their community's id.
    (post_77,) = by_token["77-user"]
    (post_88,) = by_token["88-user"]
    assert str(post_77.data["group_id"]) == str(GROUP_ID)
    assert str(post_88.data["group_id"]) == str(OTHER_ID)
    assert received(vk)[(1001, "Первому сообществу")] == 1
    theirs = vk.community(OTHER_ID)
    assert {(m.peer_id, m.text) for m in theirs.sent_messages()} == {
        (2001, "Второму сообществу"),
        (3001, "Без игры, как второе"),
    }
    assert [c.text for c in vk.state.topic(first_topic).comments] == ["Пост первого"]
    assert [c.text for c in theirs.topic(second_topic).comments] == ["Пост второго"]


def test_a_disconnected_community_s_rows_wait_and_go_once_it_is_connected_again(
    vk: RunningServer,
    sent: Callable[[], list[Sent]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(senders, "WAIT_SECONDS", 3.0)
    Community.objects.filter(vk_id=OTHER_ID).update(connected=False)
    waiting = message_row([2001], "Ответ второго", group_id=OTHER_ID)
    going = message_row([1001], "Ответ первого", group_id=GROUP_ID)

    with caplog.at_level(logging.WARNING, logger="vkbot.delivery"):
        report = deliver(wait_up_to=1.0)

    assert report.sent == 1 and report.failed == 0
    assert report.stopped == "the next row is due later"
    assert 2.0 < (report.next_due_in or 0) <= 3.0  # put off, not looked at in a busy loop
    going.refresh_from_db()
    waiting.refresh_from_db()
    assert going.status == OutboxStatus.SENT
    assert waiting.status == OutboxStatus.PENDING and waiting.attempts == 0
    assert waiting.locked_until is None and waiting.next_attempt_at is not None
    assert not any(r.token.startswith("88") for r in sent())
    assert "community 88 is not connected" in caplog.text
    assert OTHER_GROUP_TOKEN not in caplog.text and OTHER_USER_TOKEN not in caplog.text

    Community.objects.filter(vk_id=OTHER_ID).update(connected=True)
    report = deliver(wait_up_to=5.0)

    waiting.refresh_from_db()
    assert waiting.status == OutboxStatus.SENT and waiting.attempts == 1
    assert [r.token for r in sent() if r.mentions("Ответ второго")] == ["88-group"]
    assert [(m.peer_id, m.text) for m in vk.community(OTHER_ID).sent_messages()] == [
        (2001, "Ответ второго")
    ]


def test_a_community_without_an_admin_token_sends_its_messages_and_its_posts_wait(
    vk: RunningServer, sent: Callable[[], list[Sent]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(senders, "WAIT_SECONDS", 30.0)
    Community.objects.filter(vk_id=OTHER_ID).update(user_token="")
    _, game, _, _ = two_games(vk)
    post = queued(post_board(game=game, text="Пост второго", kind="post"))
    send_message(game=game, peer_ids=[2001], text="Ответ второго", kind="status")

    report = deliver(wait_up_to=1.0)

    assert report.sent == 1
    post.refresh_from_db()
    assert post.status == OutboxStatus.PENDING and post.attempts == 0
    assert [r.token for r in sent()] == ["88-group"]


def test_one_community_s_burst_does_not_hold_another_s_single_reply_back(
    vk: RunningServer, sent: Callable[[], list[Sent]]
) -> None:
    for n in range(500):  # 500 texts of their own: 20 execute requests at the very least
        message_row([5000 + n], f"Проверка №{n}", group_id=GROUP_ID)
    reply = message_row([2001], "Статус", group_id=OTHER_ID)  # queued last

    report = deliver()

    assert report.sent == 501 and report.failed == 0
    calls = sent()
    first_88 = next(i for i, r in enumerate(calls) if r.token == "88-group")
    assert calls[first_88].mentions("Статус")
    ahead = [r for r in calls[:first_88] if r.token == "77-group"]
    assert len(ahead) <= 1  # in id order it was behind all 20 of them
    assert len([r for r in calls if r.token == "77-group"]) >= 20
    reply.refresh_from_db()
    assert reply.status == OutboxStatus.SENT


def test_a_busy_admin_token_does_not_hold_another_community_s_board_post_back(
    vk: RunningServer, sent: Callable[[], list[Sent]]
) -> None:
    first, second, first_topic, second_topic = two_games(vk)
    post_board(game=first, text="Голос первого", kind="vote")
    post_board(game=second, text="Голос второго", kind="vote")
    with Drainer() as drainer:
        busy = drainer.transport.limiter("user", GROUP_ID)
        assert busy is not None
        while busy.try_acquire() == 0:  # community 77's admin token has spent its requests
            pass
        assert drainer.round() == 1  # 88's post alone: 77's is not even claimed
        assert [r.token for r in sent()] == ["88-user"]
        assert 0 < drainer.slot_in <= 1.5
        drainer.run(max_seconds=10, wait_up_to=5)  # 77's slot comes: its post goes out
    assert [c.text for c in vk.state.topic(first_topic).comments] == ["Голос первого"]
    theirs = vk.community(OTHER_ID)
    assert [c.text for c in theirs.topic(second_topic).comments] == ["Голос второго"]
    assert [r.token for r in sent()] == ["88-user", "77-user"]
