"""The local Bots Long Poll server, with vkbottle's own ``BotPolling`` and ``Bot``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from vkbottle import API, Bot, BotPolling
from vkbottle.bot import Message

from localvk import RunningServer
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, control, long_polls


async def poll(
    http: aiohttp.ClientSession, server: dict[str, Any], ts: Any = None, wait: int = 0
) -> dict[str, Any]:
    params = {"act": "a_check", "key": server["key"], "ts": server["ts"] if ts is None else ts}
    params["wait"] = wait
    async with http.post(server["server"], params=params) as response:
        assert response.status == 200
        return await response.json()


async def lp_server(api: API) -> dict[str, Any]:
    return (await api.request("groups.getLongPollServer", {"group_id": GROUP_ID}))["response"]


async def test_bot_polling_receives_an_injected_private_message(
    server: RunningServer, api: API, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # BotPolling writes its ts under ./.vkbottle/
    polling = BotPolling(api=api, group_id=GROUP_ID, wait=1)
    events = polling.listen()
    first = asyncio.ensure_future(events.__anext__())
    await wait_until(lambda: server.state.calls("groups.getLongPollServer"))
    update = server.state.inject_message(4242, "/join", payload={"cmd": "join"})
    try:
        event = await asyncio.wait_for(first, 5)
    finally:
        polling.stop()
        await events.aclose()
    [received] = event["updates"]
    assert received == update
    message = received["object"]["message"]
    assert (message["from_id"], message["peer_id"], message["text"]) == (4242, 4242, "/join")
    assert message["payload"] == '{"cmd":"join"}'
    assert received["event_id"] and received["v"] == "5.199" and received["group_id"] == GROUP_ID
    assert received["object"]["client_info"]["keyboard"] is True


async def test_bot_answers_a_private_message_end_to_end(
    server: RunningServer, api: API, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    bot = Bot(api=api, polling=BotPolling(group_id=GROUP_ID, wait=1))

    @bot.on.private_message(text="ping")
    async def pong(message: Message) -> None:
        await message.answer("pong")

    task = asyncio.create_task(bot.run_polling())
    try:
        await wait_until(lambda: server.state.calls("groups.getLongPollServer"))
        server.state.inject_message(77001, "ping")
        [reply] = await wait_until(lambda: server.state.sent_messages(77001))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert reply.text == "pong" and reply.from_id == -GROUP_ID


async def test_poll_blocks_until_an_event_or_the_wait(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    watch = long_polls(server.state)
    lp = await lp_server(api)
    started = time.monotonic()
    empty = await poll(http, lp, wait=1)
    assert empty == {"ts": lp["ts"], "updates": []}
    assert time.monotonic() - started >= 0.9
    waiting = asyncio.ensure_future(poll(http, lp, wait=10))
    await wait_until(lambda: len(watch.servers_before) == 2)  # the server has the a_check
    assert not waiting.done()  # and holds it
    status, update = await control(http, server, "message_new", {"from_id": 5, "text": "hi"})
    assert status == 200
    answer = await asyncio.wait_for(waiting, 5)
    assert answer["updates"] == [update] and int(answer["ts"]) == int(lp["ts"]) + 1
    # The next ts returns nothing old.
    assert (await poll(http, lp, ts=answer["ts"]))["updates"] == []


async def test_failed_codes(server: RunningServer, api: API, http: aiohttp.ClientSession) -> None:
    lp = await lp_server(api)
    server.state.inject_message(5, "one")
    server.state.inject_message(5, "two")
    # ts from the future (e.g. a server that lost its state): 3, get a new key and ts
    assert await poll(http, lp, ts=int(lp["ts"]) + 100) == {"failed": 3}
    assert await poll(http, lp, ts="garbage") == {"failed": 3}
    # history no longer kept: 1, go on from the given ts
    server.state.drop_longpoll_history()
    server.state.inject_message(5, "three")
    outdated = await poll(http, lp)
    assert outdated["failed"] == 1
    resumed = await poll(http, lp, ts=outdated["ts"])
    assert [u["object"]["message"]["text"] for u in resumed["updates"]] == ["three"]
    # expired key: 2, get a new key and keep the ts
    server.state.expire_longpoll_keys()
    assert await poll(http, lp) == {"failed": 2}
    fresh = await lp_server(api)
    assert fresh["key"] != lp["key"]
    assert (await poll(http, fresh, ts=outdated["ts"]))["updates"] == resumed["updates"]
    # a wrong group in the URL is a bad key too
    assert await poll(http, {**fresh, "server": fresh["server"].replace(f"/{GROUP_ID}", "/9")}) == {
        "failed": 2
    }


async def test_vkbottle_handles_each_failure_code(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    """vkbottle's own recovery (``handle_failed_event``) works with the server's answers."""
    polling = BotPolling(api=api, group_id=GROUP_ID, wait=1)
    lp = await polling.get_server()
    server.state.inject_message(6, "a")
    server.state.drop_longpoll_history()
    after_1 = await polling.handle_failed_event(dict(lp), await poll(http, lp))
    assert after_1["key"] == lp["key"] and int(after_1["ts"]) > int(lp["ts"])
    server.state.expire_longpoll_keys()
    after_2 = await polling.handle_failed_event(dict(after_1), await poll(http, after_1))
    assert after_2["key"] != after_1["key"] and after_2["ts"] == after_1["ts"]
    after_3 = await polling.handle_failed_event(dict(after_2), await poll(http, after_2, ts=10**6))
    assert after_3["ts"] == str(server.state.longpoll.ts)
    server.state.inject_message(6, "b")
    answer = await poll(http, after_3)
    assert [u["object"]["message"]["text"] for u in answer["updates"]] == ["b"]


async def test_bot_polling_survives_an_expired_key(
    server: RunningServer, api: API, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    polling = BotPolling(api=api, group_id=GROUP_ID, wait=1)
    events = polling.listen()
    pending = asyncio.ensure_future(events.__anext__())
    await wait_until(lambda: server.state.calls("groups.getLongPollServer"))
    server.state.expire_longpoll_keys()  # wakes the poller: failed 2, new key
    await wait_until(lambda: len(server.state.calls("groups.getLongPollServer")) == 2)
    update = server.state.inject_message(8, "still here")
    try:
        event = await asyncio.wait_for(pending, 5)
    finally:
        polling.stop()
        await events.aclose()
    assert event["updates"] == [update]


async def test_chat_join_and_leave_arrive_as_message_new(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    chat = server.state.create_chat("Мафия", [1])
    lp = await lp_server(api)
    status, _ = await control(http, server, "chat_join", {"chat_id": chat.chat_id, "user_id": 2})
    assert status == 200
    status, _ = await control(http, server, "chat_leave", {"chat_id": chat.chat_id, "user_id": 1})
    assert status == 200
    answer = await poll(http, lp)
    joined, left = (u["object"]["message"] for u in answer["updates"])
    assert joined["action"] == {"type": "chat_invite_user_by_link", "member_id": 2}
    assert joined["peer_id"] == chat.peer_id and joined["from_id"] == 2
    assert joined["id"] == 0  # a bot sees message id 0 in chats, as in VK
    assert left["action"] == {"type": "chat_kick_user", "member_id": 1}
    assert set(chat.members) == {-GROUP_ID, 2}
