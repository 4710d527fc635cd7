"""Coalescing: a community's replies held briefly while its Callback events are still being
applied (``vkbot/delivery/coalesce.py``), and a round of many communities taking each one's
rows whole (``vkbot.delivery.drain``), so a burst's replies share requests."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gameplay.models import Community, InboundEvent, OutboxStatus
from gameplay.services.inbox import inbound_record
from localvk import RunningServer
from outbox.ratelimit import token_key
from tests.vkbot.delivery_support import (
    GROUP_ID,
    GROUP_TOKEN,
    USER_TOKEN,
    message_row,
    requests,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.delivery import drain, senders
from vkbot.delivery.coalesce import Coalescer
from vkbot.delivery.drain import Drainer

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_community_is_held_only_while_its_events_are_in_hand_and_never_past_the_bound() -> None:
    clock = Clock()
    busy: set[int] = {1}
    asked: list[list[int]] = []

    def in_hand(groups: list[int]) -> set[int]:
        asked.append(sorted(groups))
        return busy & set(groups)

    coalescer = Coalescer(0.25, in_hand, clock)
    assert coalescer.held([1, 2, None]) == ({1}, 0.25)  # 2 is idle: it goes at once
    assert asked == [[1, 2]]
    clock.now += 0.1
    held, left = coalescer.held([1, 2])
    assert held == {1} and left == pytest.approx(0.15)
    clock.now += 0.15
    assert coalescer.held([1]) == (set(), 0.0)  # the bound: let go though still busy
    assert coalescer.held([1]) == ({1}, 0.25)  # its next rows start a new hold
    busy.clear()
    assert coalescer.held([1]) == (set(), 0.0)  # its events applied: let go at once
    assert Coalescer(0.0, in_hand, clock).held([1]) == (set(), 0.0)  # 0: never held


def test_a_callback_community_s_replies_wait_for_its_next_commit_and_go_in_one_request(
    vk: RunningServer, settings: Any
) -> None:
    settings.OUTBOX_COALESCE_SECONDS = 2.0
    inbound_record(group_id=GROUP_ID, event_id="next", update={"type": "message_new"})
    first = message_row([2001], "Первый ответ", group_id=GROUP_ID)
    with Drainer() as drainer:
        assert drainer.round() == 0  # its next event waits in the inbox: the reply is held
        assert 0 < drainer.hold_in <= 2.0
        # The applier commits the next event's reply and deletes its inbox row together.
        second = message_row([2002], "Второй ответ", group_id=GROUP_ID)
        InboundEvent.objects.all().delete()
        assert drainer.round() == 2
    assert requests(vk, "group") == 1  # both replies in one execute
    for row in (first, second):
        row.refresh_from_db()
        assert row.status == OutboxStatus.SENT


def test_a_reply_is_held_no_longer_than_the_bound_while_events_keep_coming(
    vk: RunningServer, settings: Any
) -> None:
    settings.OUTBOX_COALESCE_SECONDS = 0.3
    inbound_record(group_id=GROUP_ID, event_id="next", update={"type": "message_new"})
    reply = message_row([2001], "Ответ", group_id=GROUP_ID)
    started = time.monotonic()
    with Drainer() as drainer:
        report = drainer.run(max_seconds=5, wait_up_to=1)
    waited = time.monotonic() - started
    reply.refresh_from_db()
    assert report.sent == 1 and reply.status == OutboxStatus.SENT
    assert 0.3 <= waited < 1.5  # held for the bound, then sent though the inbox still waits


def test_an_idle_community_s_reply_is_never_held(vk: RunningServer, settings: Any) -> None:
    settings.OUTBOX_COALESCE_SECONDS = 2.0
    inbound_record(group_id=99, event_id="another", update={"type": "message_new"})
    message_row([2001], "Ответ", group_id=GROUP_ID)  # nothing of 77 in the inbox
    with Drainer() as drainer:
        assert drainer.round() == 1 and drainer.hold_in == 0.0
    assert requests(vk, "group") == 1


COMMUNITIES = 5
ROWS = 25  # an execute's calls: one request per community when a round takes them whole


def test_a_round_of_many_communities_takes_each_one_s_rows_whole(
    vk: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(senders, "REFRESH_SECONDS", 0.0)
    groups = [GROUP_ID] + [900 + n for n in range(1, COMMUNITIES)]
    Community.objects.create(vk_id=GROUP_ID, group_token=GROUP_TOKEN, user_token=USER_TOKEN,
                             connected=True, from_env=True)  # fmt: skip
    for group in groups[1:]:
        vk.communities.create(group_id=group, group_token=f"token-{group}", user_tokens=[])
        Community.objects.create(vk_id=group, group_token=f"token-{group}", connected=True)
    for n in range(ROWS):
        for group in groups:  # 125 rows, more than ROUND_ROWS: a round of old took 100
            message_row([3000 + n], f"Ответ {group} №{n}", group_id=group)
    assert COMMUNITIES * ROWS > drain.ROUND_ROWS
    try:
        with Drainer() as drainer:
            assert drainer.round() == COMMUNITIES * ROWS
        for group in groups:
            calls = vk.community(group).calls(include_inner=False)
            assert [c.method for c in calls] == ["execute"], group
    finally:
        import django_rq

        django_rq.get_connection("vk").delete(*(token_key(f"token-{g}") for g in groups[1:]))
