"""The long poll recovers at once when VK does (vkbot/longpoll.py): its back-off after a
passing fault — a 502 page, error 10 — stays within a few seconds and starts over after any
answer, and an outage is two lines in the log, without a traceback.

Done when: VK fails for 30 s (15 s of 502 pages for every API call and long poll, then 15 s of
error 10 for every API call after the long-poll key expired), then recovers; a player's
«статус» written at that moment is answered within the stated bound (the back-off's cap, its
jitter, and the time to apply the message and send the answer).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from vkbottle.http import SingleAiohttpClient

from localvk import FaultConfig, running_server
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, make_state
from tests.vkbot.delivery_support import deliver
from tests.vkbot.ingest_support import (
    VK_BASE,
    close_db_thread_connections,  # noqa: F401
    configure,
    make_game,
)
from vkbot.longpoll import LongPoller
from vkbot.polling import FAULT_INITIAL, FAULT_MAX
from vkbot.vkapi import make_api

pytestmark = pytest.mark.django_db(transaction=True)

PLAYER = VK_BASE + 1
#: The bound stated in the module doc of vkbot.longpoll: the next request within the cap
#: (+20 % jitter) of the back-off, then the message applied and its answer sent.
REPLY_BOUND = FAULT_MAX * 1.2 + 2.0


async def db(fn: Callable[..., Any], *args: Any) -> Any:
    return await sync_to_async(fn, thread_sensitive=True)(*args)


def test_the_back_off_is_bounded_and_starts_over_after_any_answer() -> None:
    poller = LongPoller(make_api(GROUP_TOKEN, api_url="http://127.0.0.1:9/method/"), GROUP_ID)
    fault = ConnectionResetError("reset by peer")
    delays = [poller._fault(fault) for _ in range(12)]
    assert delays[0] <= FAULT_INITIAL * 1.2
    assert max(delays) <= FAULT_MAX * 1.2 and delays[-1] >= FAULT_MAX * 0.8
    poller._answered()
    assert poller._fault(fault) <= FAULT_INITIAL * 1.2


@pytest.mark.slow
async def test_after_30_s_of_vk_failing_the_next_reply_comes_within_the_bound(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vkbot.longpoll")
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        settings.OUTBOX_RETRY_BASE_MS = 20
        await db(make_game)
        await db(deliver)  # the game's start is behind us
        poller = LongPoller(make_api(GROUP_TOKEN, api_url=srv.api_url), GROUP_ID, token=GROUP_TOKEN)
        task = asyncio.create_task(poller.run())
        try:
            await wait_until(poller.reached.wait, timeout=10)
            srv.state.faults.configure(bad_gateway_rate=1.0)
            await asyncio.sleep(15)
            srv.state.longpoll.expire_keys()  # a new key is needed: groups.getLongPollServer
            srv.state.faults.configure(FaultConfig(error_rates={10: 1.0}))
            await asyncio.sleep(15)
            injected = dict(srv.state.faults.injected)

            srv.state.faults.clear()
            recovered = time.monotonic()
            srv.state.inject_message(PLAYER, "статус")

            sent_before = len(srv.state.sent_messages(PLAYER))

            def answered() -> bool:
                deliver(max_seconds=5, wait_up_to=0)  # the drain a commit would enqueue
                return len(srv.state.sent_messages(PLAYER)) > sent_before

            await wait_until(lambda: db(answered), timeout=30, interval=0.05)
            reply_after = time.monotonic() - recovered
            poller.request_stop()
            await asyncio.wait_for(task, 10)
        finally:
            if not task.done():
                task.cancel()
            await SingleAiohttpClient().close()

    print(
        f"VK failed 30 s ({injected}); the reply to «статус» written as it recovered came "
        f"{reply_after:.1f} s later (bound {REPLY_BOUND:.1f} s)"
    )
    assert injected.get("bad_gateway", 0) + injected.get("bad_gateway_longpoll", 0) > 0
    assert injected.get("error_10", 0) > 0
    assert reply_after <= REPLY_BOUND
    lines = [
        r for r in caplog.records if r.name == "vkbot.longpoll" and r.levelno >= logging.WARNING
    ]
    assert not any(r.exc_info for r in lines), [r.getMessage() for r in lines]
    outages = [r.getMessage() for r in lines if "VK is unavailable" in r.getMessage()]
    assert 1 <= len(outages) <= 2, [r.getMessage() for r in lines]  # one per failing stretch
