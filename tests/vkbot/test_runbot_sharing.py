"""Two runbots in one process sharing the communities by lease (vkbot.supervisor,
vkbot.sharing): the second one gets its fair share from the first, never while the first still
runs that community's loop; one stopping hands its communities back at once; a runbot whose
lease another took stops that loop and applies nothing of it. The subprocess version, with a
runbot killed: tests/vkbot/test_runbot_scaleout.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from django.utils import timezone
from vkbottle.http import SingleAiohttpClient

from gameplay.models import LongPollLease
from gameplay.selectors.communities import Credentials
from gameplay.services.communities import community_record, community_sync_env
from localvk import Communities, LocalVK, RunningServer, running_server
from ops.backoff import Backoff
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, long_polls, make_state
from tests.vkbot.ingest_support import (
    close_db_thread_connections,  # noqa: F401
    configure,
    use_dispatch,
)
from tests.vkbot.test_runbot_communities import Seen
from vkbot.longpoll import LongPoller
from vkbot.sharing import LeaseTerms
from vkbot.supervisor import Supervisor
from vkbot.vkapi import make_api

pytestmark = pytest.mark.django_db(transaction=True)

GROUPS = [GROUP_ID, 91, 92, 93]
TERMS = LeaseTerms(renew=0.1, ttl=3.0)


async def db(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await sync_to_async(fn, thread_sensitive=True)(*args, **kwargs)


class Hosted:
    """The local VK hosting every community of :data:`GROUPS` behind one address."""

    def __init__(self, server: RunningServer, states: dict[int, LocalVK]) -> None:
        self.server = server
        self.states = states

    def build(self, community: Credentials) -> LongPoller:
        api = make_api(community.group_token, api_url=self.server.api_url)
        return LongPoller(api, community.group_id, wait=1, backoff=Backoff(0.02, 0.1),
                          token=community.group_token)  # fmt: skip

    def supervisor(self, lines: list[str] | None = None) -> Supervisor:
        announce = lines.append if lines is not None else (lambda line: None)
        return Supervisor(self.build, refresh=0.1, announce=announce, terms=TERMS)


def connect_others() -> None:
    for group_id in GROUPS[1:]:
        community_record(vk_id=group_id, name=f"Сообщество {group_id}",
                         group_token=f"token-{group_id}", connected=True)  # fmt: skip


@pytest_asyncio.fixture
async def hosted(settings: Any) -> AsyncIterator[Hosted]:
    first = make_state()
    registry = Communities.of(first)
    states = {GROUP_ID: first}
    for group_id in GROUPS[1:]:
        states[group_id] = registry.create(group_id=group_id, group_token=f"token-{group_id}")
    async with running_server(first) as server:
        configure(settings, api_url=server.api_url)
        await db(community_sync_env)
        await db(connect_others)
        for state in states.values():
            long_polls(state)
        yield Hosted(server, states)
        await SingleAiohttpClient().close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    handler = Seen()
    use_dispatch(monkeypatch, handler)
    return handler


@contextlib.asynccontextmanager
async def running(supervisor: Supervisor) -> AsyncIterator[Supervisor]:
    task = asyncio.create_task(supervisor.run())
    try:
        yield supervisor
    finally:
        supervisor.request_stop()
        await asyncio.wait_for(task, 10)


async def polled_by_now(hosted: Hosted, runbots: list[Supervisor]) -> None:
    """Every community's long poll is waiting in a_check since its current loop started."""
    for group_id, state in hosted.states.items():

        def polling(state: LocalVK = state) -> bool:
            servers = len(state.calls("groups.getLongPollServer"))
            return servers > 0 and long_polls(state).polled(servers)

        await wait_until(polling, what=f"group {group_id}'s long poll")


async def everyone_writes(hosted: Hosted, seen: Seen, text: str) -> None:
    for state in hosted.states.values():
        state.inject_message(4242, text)
    await wait_until(lambda: all(seen.texts(g).count(text) == 1 for g in GROUPS),
                     what=f"«{text}» applied in every community")  # fmt: skip


async def test_a_second_runbot_takes_its_share_and_gives_it_back_when_it_stops(
    hosted: Hosted, seen: Seen
) -> None:
    overlaps: list[tuple[list[int], list[int]]] = []
    first, second = hosted.supervisor(), hosted.supervisor()
    lines: list[str] = []
    first.announce = lines.append

    async def watch() -> None:  # no community's loop in both at any moment
        while True:
            a, b = first.running(), second.running()
            if set(a) & set(b):
                overlaps.append((a, b))
            await asyncio.sleep(0.002)

    watcher = asyncio.create_task(watch())
    try:
        async with running(first):
            await wait_until(lambda: first.serving() == GROUPS, what="one runbot serving all")
            await polled_by_now(hosted, [first])
            await everyone_writes(hosted, seen, "один")

            async with running(second):
                await wait_until(lambda: len(first.serving()) == len(second.serving()) == 2,
                                 what="two communities each")  # fmt: skip
                assert sorted(first.serving() + second.serving()) == GROUPS
                await polled_by_now(hosted, [first, second])
                await everyone_writes(hosted, seen, "два")
                handed = second.serving()
            # The second stopped: its leases are free at once, long before they would expire.
            started = asyncio.get_running_loop().time()
            await wait_until(lambda: first.serving() == GROUPS, what="the first serving all")
            assert asyncio.get_running_loop().time() - started < TERMS.ttl / 2
            await polled_by_now(hosted, [first])
            await everyone_writes(hosted, seen, "три")
    finally:
        watcher.cancel()

    assert overlaps == []
    assert all(seen.texts(g) == ["один", "два", "три"] for g in GROUPS), seen.updates
    assert all(f"runbot: group {g} handed over" in " ".join(lines) for g in handed)
    # Both have left: every lease is free.
    assert await db(lambda: set(LongPollLease.objects.values_list("holder", flat=True))) == {""}


async def test_a_runbot_whose_lease_another_took_stops_that_loop_and_applies_none_of_it(
    hosted: Hosted, seen: Seen
) -> None:
    lines: list[str] = []
    b = GROUPS[1]
    async with running(hosted.supervisor(lines)) as runbot:
        await wait_until(lambda: runbot.serving() == GROUPS, what="the runbot serving all")
        await polled_by_now(hosted, [runbot])

        # Another runbot took B's lease (as after an expiry): the loop stops, B waits.
        later = timezone.now() + timedelta(hours=1)
        await db(lambda: LongPollLease.objects.filter(group_id=b).update(
            holder="elsewhere:1:x", expires_at=later))  # fmt: skip
        await wait_until(lambda: b not in runbot.running(), what="B's loop to stop")
        assert f"runbot: group {b} lost its lease; its long poll stops" in lines
        hosted.states[b].inject_message(4242, "пока чужое")
        await asyncio.sleep(10 * TERMS.renew)
        assert seen.texts(b) == [] and b not in runbot.holding()

        # The other runbot is gone and its lease free: B is taken back, its message applied.
        await db(lambda: LongPollLease.objects.filter(group_id=b).update(holder=""))
        await wait_until(lambda: seen.texts(b) == ["пока чужое"], what="B's message")
        assert runbot.serving() == GROUPS
