"""The Bots Long Poll loop (vkbot.longpoll) against the local VK server over real HTTP.

Updates are injected as users would make them (``/_test/`` endpoints or the in-process state);
the poller applies them through the pipeline with the ts kept in the database. The database
is used from asgiref's thread as in ``runbot``, so these tests commit (``transaction=True``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from django.db import OperationalError
from vkbottle.http import SingleAiohttpClient

from gameplay.models import PollState
from localvk import FaultConfig, RunningServer, running_server
from ops.backoff import Backoff
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, control, long_polls, make_state
from tests.vkbot.ingest_support import (
    VK_BASE,
    close_db_thread_connections,  # noqa: F401
    configure,
    make_game,
    record_dispatch,
    recorded_texts,
    use_dispatch,
    vote_dispatch,
    vote_events,
    votes_cast,
)
from vkbot.longpoll import LongPoller, LongPollFatalError
from vkbot.pipeline import stored_ts
from vkbot.vkapi import make_api

pytestmark = pytest.mark.django_db(transaction=True)


async def db(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ORM code in the thread the poller uses."""
    return await sync_to_async(fn, thread_sensitive=True)(*args)


async def eventually(condition: Callable[..., Any], timeout: float = 10.0) -> Any:
    """Wait until the (sync, database-reading) condition holds."""
    return await wait_until(lambda: db(condition), timeout=timeout, interval=0.02)


async def caught_up(srv: RunningServer, progress: Callable[[], Any] | None = None) -> None:
    """Wait until the poller has applied every event the local VK has (the ts is stored with
    the batch it follows). A poller then stopped has applied all it ever will: nothing is
    left that could arrive, or be applied a second time, later.

    With ``progress`` (a database-reading measure of the work done, e.g. the updates
    recorded), a long backlog is waited for as long as it moves: the wait fails after 10 s
    without progress, however slow a loaded machine applies it."""
    seen: Any = None
    while True:
        try:
            await eventually(lambda: stored_ts() == str(srv.state.longpoll.ts))
            return
        except AssertionError:
            if progress is None:
                raise
            now = await db(progress)
            if now == seen:
                raise
            seen = now


@pytest_asyncio.fixture
async def server(settings: Any) -> AsyncIterator[RunningServer]:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        long_polls(srv.state)  # watched from the start: polling() needs every a_check
        try:
            yield srv
        finally:
            for bot in Poller.running:  # a failed test leaves its pollers running
                await bot.kill()
            Poller.running.clear()
            await SingleAiohttpClient().close()


@pytest_asyncio.fixture
async def game_id() -> int:
    return await db(make_game)


class Poller:
    """A LongPoller running as a task (fast back-off, a 1 s wait)."""

    running: list[Poller] = []

    def __init__(self, srv: RunningServer, *, token: str = GROUP_TOKEN, wait: int = 1) -> None:
        api = make_api(token, api_url=srv.api_url)
        self.poller = LongPoller(
            api, GROUP_ID, wait=wait, backoff=Backoff(0.02, 0.1), fault_backoff=Backoff(0.02, 0.1)
        )
        self.task = asyncio.create_task(self.poller.run())
        self.running.append(self)

    async def stop(self, timeout: float = 5.0) -> None:
        """A clean stop (what SIGTERM does)."""
        self.poller.request_stop()
        await asyncio.wait_for(self.task, timeout)

    async def kill(self) -> None:
        """Cancel the task wherever it is (a crash of the bot)."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def server_calls(srv: RunningServer, times: int) -> None:
    """Wait until the poller has asked for the long-poll server ``times`` times."""
    await wait_until(
        lambda: len(srv.state.calls("groups.getLongPollServer")) >= times,
        what=f"{times} groups.getLongPollServer calls",
    )


async def polling(srv: RunningServer, times: int = 1) -> None:
    """Wait until the poller, after asking for the long-poll server ``times`` times, is
    waiting in ``a_check``: its position is fixed, whatever is injected now reaches it."""
    watch = long_polls(srv.state)
    await wait_until(
        lambda: watch.polled(times),
        what=f"an a_check after {times} groups.getLongPollServer calls",
    )


def say(srv: RunningServer, *texts: str, user: int = 42) -> None:
    for text in texts:
        srv.state.inject_message(user, text)


async def test_injected_updates_are_applied_in_order(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    bot = Poller(server)
    await polling(server)
    async with aiohttp.ClientSession() as http:
        for text in ("один", "два", "три"):
            status, _ = await control(http, server, "message_new", {"from_id": 42, "text": text})
            assert status == 200
    await eventually(lambda: len(recorded_texts(game_id)) == 3)
    await bot.stop()
    assert await db(recorded_texts, game_id) == ["один", "два", "три"]
    assert await db(stored_ts) == str(server.state.longpoll.ts)


async def test_a_player_is_not_held_behind_a_burst_of_another_game(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = record_dispatch(game_id)

    def slow(update: dict[str, Any]) -> None:
        time.sleep(0.002)
        record(update)

    def games_of(updates: list[dict[str, Any]]) -> list[int | None]:  # a game per sender
        return [u["object"]["message"]["from_id"] for u in updates]

    use_dispatch(monkeypatch, slow, games_of=games_of)
    bot = Poller(server)
    await polling(server)
    burst = [f"b{n}" for n in range(600)]
    say(server, *burst, user=42)
    await eventually(lambda: len(recorded_texts(game_id)) > 0)  # the burst is being applied
    say(server, "probe", user=43)
    await caught_up(server, progress=lambda: len(recorded_texts(game_id)))
    await bot.stop()
    texts = await db(recorded_texts, game_id)
    assert sorted(texts) == sorted([*burst, "probe"])
    assert [t for t in texts if t != "probe"] == burst  # one game's updates in their order
    assert texts.index("probe") < 300  # a slice or two later, not after the whole burst


async def test_a_killed_poller_restarts_from_the_stored_ts(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    first = Poller(server)
    await polling(server)
    say(server, "m0", "m1", "m2")
    await eventually(lambda: len(recorded_texts(game_id)) == 3)
    await first.kill()

    say(server, "m3", "m4")  # while no bot runs
    second = Poller(server)
    say(server, "m5")
    await eventually(lambda: len(recorded_texts(game_id)) >= 6)
    await caught_up(server)  # so anything applied twice has been by now
    await second.stop()

    assert await db(recorded_texts, game_id) == [f"m{i}" for i in range(6)]
    assert await db(stored_ts) == str(server.state.longpoll.ts)


async def test_pollers_killed_mid_stream_lose_and_repeat_nothing(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    texts = [f"s{i}" for i in range(12)]

    async def stream() -> None:
        for text in texts:
            say(server, text)
            await asyncio.sleep(0.015)  # users' pace: the stream goes on across the kills

    bot = Poller(server)
    await polling(server)
    users = asyncio.create_task(stream())
    for kill_at in (4, 8):
        await eventually(lambda n=kill_at: len(recorded_texts(game_id)) >= n, timeout=5)
        await bot.kill()  # wherever it is: waiting, prefetching or applying
        bot = Poller(server)
    await users
    await eventually(lambda: len(recorded_texts(game_id)) >= len(texts))
    await caught_up(server)
    await bot.stop()
    assert await db(recorded_texts, game_id) == texts
    assert await db(stored_ts) == str(server.state.longpoll.ts)


async def test_a_crash_in_the_middle_of_a_batch_loses_and_repeats_nothing(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    healthy = record_dispatch(game_id)
    failures: list[str] = []

    def flaky(update: dict[str, Any]) -> None:
        text = update["object"]["message"]["text"]
        if text == "m2" and not failures:
            failures.append(text)
            raise OperationalError("the database went away")
        healthy(update)

    use_dispatch(monkeypatch, flaky)
    bot = Poller(server)
    await polling(server)
    say(server, "m0", "m1", "m2", "m3", "m4")  # one batch
    await eventually(lambda: len(recorded_texts(game_id)) >= 5)
    await caught_up(server)
    await bot.stop()

    assert failures == ["m2"]
    assert await db(recorded_texts, game_id) == ["m0", "m1", "m2", "m3", "m4"]
    assert len(server.state.calls("groups.getLongPollServer")) == 2  # restarted once


async def test_updates_replayed_after_a_restart_change_the_game_once(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, vote_dispatch(game_id))
    first = Poller(server)
    await polling(server)
    first_ts = str(server.state.longpoll.ts)
    say(server, "голос 2", user=VK_BASE + 1)
    say(server, "голос 3", user=VK_BASE + 4)
    await eventually(lambda: votes_cast(game_id) == 2)
    await first.stop()

    # The stored ts goes back (VK re-sends old events): the same updates arrive again.
    await db(lambda: PollState.objects.filter(group_id=GROUP_ID).update(ts=first_ts))
    second = Poller(server)
    await polling(server, 2)
    say(server, "голос 1", user=VK_BASE + 2)
    await eventually(lambda: votes_cast(game_id) >= 3)
    await caught_up(server)  # the replayed votes too
    await second.stop()

    assert await db(votes_cast, game_id) == 3 and await db(vote_events, game_id) == 3
    assert await db(stored_ts) == str(server.state.longpoll.ts)


async def test_failed_1_goes_on_with_the_given_ts(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    first = Poller(server)
    await polling(server)
    say(server, "m0")
    await eventually(lambda: recorded_texts(game_id) == ["m0"])
    await first.stop()
    say(server, "gone")
    server.state.drop_longpoll_history()  # VK no longer keeps the stored ts: failed 1
    say(server, "m1")

    second = Poller(server)
    await eventually(lambda: recorded_texts(game_id) == ["m0", "m1"])
    say(server, "m2")
    await eventually(lambda: recorded_texts(game_id) == ["m0", "m1", "m2"])
    await second.stop()
    assert len(server.state.calls("groups.getLongPollServer")) == 2  # no new key needed


async def test_failed_2_gets_a_new_key_and_keeps_the_ts(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    bot = Poller(server)
    await polling(server)
    # In one go: the key expires and a message arrives before the poller gets a new key. A
    # poller that took the new server's ts would skip the message.
    server.state.expire_longpoll_keys()
    say(server, "after expiry")
    await eventually(lambda: recorded_texts(game_id) == ["after expiry"])
    await bot.stop()
    assert len(server.state.calls("groups.getLongPollServer")) == 2


async def test_failed_3_gets_a_new_key_and_ts(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    # A ts the server does not know (e.g. VK lost its state): failed 3.
    await db(lambda: PollState.objects.create(group_id=GROUP_ID, ts="999999"))
    bot = Poller(server)
    await polling(server, 2)  # the first server, then a new one after failed 3
    # The new position is stored before anything arrives: a restart would not poll 999999.
    await eventually(lambda: stored_ts() == str(server.state.longpoll.ts))
    say(server, "fresh")
    await eventually(lambda: recorded_texts(game_id) == ["fresh"])
    await bot.stop()
    assert await db(stored_ts) == str(server.state.longpoll.ts)


@pytest.mark.parametrize(
    "fault", [{"drop_rate": 1.0}, {"error_rates": {10: 1.0}}], ids=["dropped", "error10"]
)
async def test_network_errors_back_off_and_retry(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch, fault: dict[str, Any]
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    server.state.faults.configure(
        FaultConfig.from_dict({**fault, "methods": ["groups.getLongPollServer"]})
    )
    say(server, "early")  # before the bot ever polled: not for it (it starts at the server's ts)
    bot = Poller(server)
    await server_calls(server, 3)  # refused each time: it never gets as far as an a_check
    assert not bot.task.done()
    server.state.faults.clear()
    await polling(server, 4)
    say(server, "late")
    await eventually(lambda: recorded_texts(game_id) == ["late"])
    await bot.stop()


async def test_a_stop_while_waiting_is_prompt(server: RunningServer) -> None:
    bot = Poller(server, wait=25)
    await polling(server)
    # A prompt stop takes milliseconds; one that waited for the long poll's answer would
    # take the 25 s wait. 10 s tells them apart however loaded the machine is.
    started = time.monotonic()
    await bot.stop(timeout=10)
    assert time.monotonic() - started < 10


async def test_a_stop_while_applying_finishes_the_batch(
    server: RunningServer, game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    record = record_dispatch(game_id)

    def slow(update: dict[str, Any]) -> None:
        entered.set()
        release.wait(5)
        record(update)

    use_dispatch(monkeypatch, slow)
    bot = Poller(server)
    await polling(server)
    say(server, "m0", "m1")
    assert await asyncio.to_thread(entered.wait, 5)
    bot.poller.request_stop()
    # The thing tested: for as long as the batch is being applied (held here), the stop
    # does not end the poller. 0.1 s is the window it is given to do so wrongly.
    await asyncio.sleep(0.1)
    assert not bot.task.done()  # still applying
    release.set()
    await asyncio.wait_for(bot.task, 5)
    assert await db(recorded_texts, game_id) == ["m0", "m1"]
    assert await db(stored_ts) == str(server.state.longpoll.ts)


async def test_a_refused_token_is_fatal(server: RunningServer) -> None:
    bot = Poller(server, token="not-a-token")
    with pytest.raises(LongPollFatalError, match="error 5"):
        await asyncio.wait_for(bot.task, 5)
