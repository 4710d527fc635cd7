"""Facts the handlers want from VK (names, «may we write») fetched before the transaction,
by the long poll and by the Callback API, against the local VK server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client
from vkbottle.http import SingleAiohttpClient

from gameplay.models import VkEvent
from localvk import FaultConfig, ServerThread, running_server
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, make_state
from tests.vkbot.ingest_support import (
    SECRET,
    close_db_thread_connections,  # noqa: F401
    configure,
    message_update,
    use_dispatch,
)
from vkbot.inbox import apply_inbox
from vkbot.longpoll import Backoff, LongPoller
from vkbot.prefetch import prefetch, prefetch_batch
from vkbot.vkapi import make_api

SIGNER = 4242


@dataclass(frozen=True)
class Facts:
    names: Mapping[int, str] = field(default_factory=dict)
    pm_allowed: Mapping[int, bool] = field(default_factory=dict)
    sexes: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    names: frozenset[int] = frozenset()
    pm_allowed: frozenset[int] = frozenset()


def facts_needed(update: Any) -> Request:
    """Like the bot's: a «+» wants the sender's name and whether we may write to them."""
    message = update.get("object", {}).get("message", {})
    if update.get("type") == "message_new" and message.get("text") == "+":
        sender = message["from_id"]
        return Request(names=frozenset({sender}), pm_allowed=frozenset({sender}))
    return Request()


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def __call__(self, update: dict[str, Any], facts: Any = None) -> None:
        self.seen.append((update["object"]["message"]["text"], facts))


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    use_dispatch(monkeypatch, recorder, facts_needed=facts_needed, VkFacts=Facts)
    return recorder


async def wait_until(condition: Any, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


@pytest.mark.django_db(transaction=True)
async def test_the_long_poll_hands_the_facts_to_the_handlers(
    settings: Any, recorder: Recorder
) -> None:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        srv.state.add_user(SIGNER, "Анна", "Каренина", sex=1)
        poller = LongPoller(make_api(GROUP_TOKEN), GROUP_ID, wait=1, backoff=Backoff(0.02, 0.1))
        task = asyncio.create_task(poller.run())
        try:
            await wait_until(lambda: srv.state.calls("groups.getLongPollServer"))
            srv.state.inject_message(SIGNER, "+")
            srv.state.inject_message(SIGNER, "статус")
            await wait_until(lambda: len(recorder.seen) == 2)
        finally:
            poller.request_stop()
            await asyncio.wait_for(task, 5)
            await SingleAiohttpClient().close()
        assert recorder.seen == [
            (
                "+",
                Facts(
                    names={SIGNER: "Анна Каренина"}, pm_allowed={SIGNER: True}, sexes={SIGNER: 1}
                ),
            ),
            ("статус", None),  # nothing needed: nothing asked, no facts passed
        ]
        assert len(srv.state.calls("users.get")) == 1
        assert len(srv.state.calls("messages.isMessagesFromGroupAllowed")) == 1


async def test_vk_trouble_leaves_the_facts_unknown(
    settings: Any, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        srv.state.faults.configure(
            FaultConfig(error_rates={10: 1.0}, methods=frozenset({"users.get"}))
        )
        srv.state.set_messages_allowed(SIGNER, False)
        update = message_update(SIGNER, "+")
        try:
            facts = await prefetch(make_api(GROUP_TOKEN), update, group_id=GROUP_ID)
        finally:
            await SingleAiohttpClient().close()
    assert facts == Facts(names={}, pm_allowed={SIGNER: False})  # what VK did answer
    assert "Could not ask VK for users.get" in caplog.text


async def test_a_slow_vk_is_given_up_on(settings: Any, recorder: Recorder) -> None:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        srv.state.faults.configure(FaultConfig(delay=0.5, methods=frozenset({"users.get"})))
        try:
            facts = await prefetch(
                make_api(GROUP_TOKEN), message_update(SIGNER, "+"), group_id=GROUP_ID, timeout=0.1
            )
        finally:
            await SingleAiohttpClient().close()
    assert facts == Facts()


async def test_handlers_without_facts_needed_get_none(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, lambda update: None)
    api = make_api(GROUP_TOKEN, api_url="http://127.0.0.1:9/method/")  # never called
    assert await prefetch(api, message_update(SIGNER, "+"), group_id=GROUP_ID) is None


@pytest.mark.django_db
def test_the_callback_api_hands_the_facts_to_the_handlers(
    settings: Any, recorder: Recorder, client: Client
) -> None:
    with ServerThread(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        srv.state.add_user(SIGNER, "Лев", "Толстой", sex=2)
        srv.state.set_messages_allowed(SIGNER, False)
        body = {**message_update(SIGNER, "+", event_id="cb-facts"), "secret": SECRET}
        response = client.post("/vk/callback/", json.dumps(body), content_type="application/json")
        assert recorder.seen == []  # recorded, applied by the applier
        apply_inbox()
        calls = len(srv.state.calls("users.get"))
    assert (response.status_code, response.content) == (200, b"ok")
    facts = Facts(names={SIGNER: "Лев Толстой"}, pm_allowed={SIGNER: False}, sexes={SIGNER: 2})
    assert recorder.seen == [("+", facts)]
    assert calls == 1 and VkEvent.objects.filter(event_id="cb-facts").exists()


@pytest.mark.django_db
def test_the_callback_api_applies_without_facts_when_vk_is_unreachable(
    settings: Any, recorder: Recorder, client: Client
) -> None:
    configure(settings, api_url="http://127.0.0.1:9/method/")  # nothing listens there
    body = {**message_update(SIGNER, "+", event_id="cb-nofacts"), "secret": SECRET}
    response = client.post("/vk/callback/", json.dumps(body), content_type="application/json")
    assert response.content == b"ok"
    apply_inbox()
    assert recorder.seen == [("+", Facts())]


async def test_a_batch_asks_for_every_name_at_once(settings: Any, recorder: Recorder) -> None:
    other = SIGNER + 1
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        srv.state.add_user(SIGNER, "Анна", "Каренина", sex=1)
        srv.state.add_user(other, "Лев", "Толстой", sex=2)
        srv.state.set_messages_allowed(other, False)
        batch = [
            message_update(SIGNER, "+"),
            message_update(other, "статус"),
            None,  # another community's update: nothing asked for it
            message_update(other, "+"),
        ]
        try:
            facts = await prefetch_batch(make_api(GROUP_TOKEN), batch, group_id=GROUP_ID)
        finally:
            await SingleAiohttpClient().close()
        assert len(srv.state.calls("users.get")) == 1
        assert len(srv.state.calls("messages.isMessagesFromGroupAllowed")) == 2
    assert facts == [
        Facts(names={SIGNER: "Анна Каренина"}, pm_allowed={SIGNER: True}, sexes={SIGNER: 1}),
        None,
        None,
        Facts(names={other: "Лев Толстой"}, pm_allowed={other: False}, sexes={other: 2}),
    ]
