"""One ``runbot`` for many communities (vkbot.supervisor): a long poll per community, each on its
own token and from its own stored ts, started and stopped as communities connect and
disconnect, a refused token retried without stopping the others; their batches applied
together, several communities' in one transaction.

Each community is a local VK server of its own (its group id and token); a community's poller
is aimed at its server (``build``), as the real VK would answer each token. The database is
used from asgiref's thread as in ``runbot``, so these tests commit (``transaction=True``).
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from vkbottle.http import SingleAiohttpClient

from bench.procs import wait_for
from gameplay.context import current_group
from gameplay.models import Community, Outbox, PollState, VkEvent
from gameplay.selectors.communities import Credentials
from gameplay.services.communities import (
    community_disconnect,
    community_record,
    community_sync_env,
)
from localvk import Communities, RunningServer, ServerThread, running_server
from ops.backoff import Backoff
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, long_polls, make_state
from tests.runbot_support import run_runbot
from tests.vkbot.ingest_support import (
    close_db_thread_connections,  # noqa: F401
    configure,
    use_dispatch,
)
from vkbot import applier as applier_module
from vkbot.longpoll import LongPoller
from vkbot.management.commands.runbot import Command as Runbot
from vkbot.pipeline import stored_ts
from vkbot.supervisor import Supervisor
from vkbot.vkapi import make_api

pytestmark = pytest.mark.django_db(transaction=True)

A = GROUP_ID  # the environment's community (VK_GROUP_ID)
B = 88
TOKEN_B = "token-of-b"


async def db(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await sync_to_async(fn, thread_sensitive=True)(*args, **kwargs)


def _replies_to(vk_user_id: int) -> int:
    """How many Outbox rows go to ``vk_user_id`` (in Python: SQLite has no JSON ``contains``)."""
    return sum(vk_user_id in row for row in Outbox.objects.values_list("peer_ids", flat=True))


def connect_b(token: str = TOKEN_B) -> Community:
    return community_record(vk_id=B, name="Второе сообщество", group_token=token, connected=True)


def poller_for(servers: dict[int, Any]) -> Callable[[Credentials], LongPoller]:
    """Each community's poller aimed at its own local VK (a fast back-off, a 1 s wait)."""

    def build(community: Credentials) -> LongPoller:
        api = make_api(community.group_token, api_url=servers[community.group_id].api_url)
        return LongPoller(api, community.group_id, wait=1, backoff=Backoff(0.02, 0.1),
                          token=community.group_token)  # fmt: skip

    return build


class Seen:
    """A stand-in handler: every update applied, with the community it was applied for."""

    def __init__(self) -> None:
        self.updates: list[tuple[int | None, int, str]] = []

    def __call__(self, update: dict[str, Any]) -> None:
        text = update["object"]["message"]["text"]
        self.updates.append((current_group(), update["group_id"], text))

    def texts(self, group: int) -> list[str]:
        return [text for served, _, text in self.updates if served == group]


@pytest_asyncio.fixture
async def servers(settings: Any) -> AsyncIterator[dict[int, RunningServer]]:
    async with (
        running_server(make_state()) as a,
        running_server(make_state(group_id=B, group_token=TOKEN_B)) as b,
    ):
        configure(settings, api_url=a.api_url)
        await db(community_sync_env)
        for srv in (a, b):
            long_polls(srv.state)
        yield {A: a, B: b}
        await SingleAiohttpClient().close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    handler = Seen()
    use_dispatch(monkeypatch, handler)
    return handler


@pytest_asyncio.fixture
async def supervisor(servers: dict[int, RunningServer]) -> AsyncIterator[Supervisor]:
    running = Supervisor(poller_for(servers), refresh=0.1, retry=lambda: Backoff(0.05, 0.2))
    task = asyncio.create_task(running.run())
    yield running
    running.request_stop()
    await asyncio.wait_for(task, 10)


async def serving(supervisor: Supervisor, groups: list[int]) -> None:
    await wait_until(lambda: supervisor.serving() == groups, what=f"loops of {groups}")


def positions() -> dict[int, str]:
    return dict(PollState.objects.values_list("group_id", "ts"))


async def positions_are(expected: dict[int, str]) -> bool:
    return await db(positions) == expected


def setup_of(vk_id: int) -> dict[str, Any]:
    return Community.objects.get(vk_id=vk_id).setup.get("longpoll") or {}


async def test_two_communities_are_served_each_from_its_own_ts(
    servers: dict[int, RunningServer], seen: Seen
) -> None:
    await db(connect_b)
    running = Supervisor(poller_for(servers), refresh=0.1)
    task = asyncio.create_task(running.run())
    await serving(running, [A, B])
    await wait_until(
        lambda: long_polls(servers[A].state).polled() and long_polls(servers[B].state).polled(),
        what="both long polls",
    )
    servers[A].state.inject_message(42, "в первом")
    servers[B].state.inject_message(42, "во втором")
    expected = {g: str(servers[g].state.longpoll.ts) for g in (A, B)}
    await wait_until(lambda: positions_are(expected), what="both batches' ts stored")
    running.request_stop()
    await asyncio.wait_for(task, 10)

    assert sorted(seen.updates) == [(A, A, "в первом"), (B, B, "во втором")]
    groups = await db(lambda: sorted(VkEvent.objects.values_list("group_id", flat=True)))
    assert groups == [A, B]
    assert running.applied == 2


async def test_a_community_connected_later_is_served_and_a_disconnected_one_stops(
    servers: dict[int, RunningServer], seen: Seen, supervisor: Supervisor
) -> None:
    await serving(supervisor, [A])
    await db(connect_b)
    await serving(supervisor, [A, B])
    await wait_until(lambda: long_polls(servers[B].state).polled(), what="B's long poll")
    servers[B].state.inject_message(7, "привет")
    await wait_until(lambda: seen.texts(B) == ["привет"], what="B's message")

    await db(lambda: community_disconnect(community=Community.objects.get(vk_id=B)))
    await serving(supervisor, [A])
    servers[B].state.inject_message(7, "пока никто не слушает")
    servers[A].state.inject_message(7, "в первом")
    await wait_until(lambda: seen.texts(A) == ["в первом"], what="A's message")
    await asyncio.sleep(0.3)
    assert seen.texts(B) == ["привет"]

    # Connected again: B goes on from its stored ts, and what was written meanwhile arrives.
    await db(connect_b)
    await serving(supervisor, [A, B])
    await wait_until(lambda: seen.texts(B) == ["привет", "пока никто не слушает"],
                     what="B's message written while it was disconnected")  # fmt: skip


async def test_a_refused_token_is_retried_without_stopping_the_others(
    servers: dict[int, RunningServer], seen: Seen, supervisor: Supervisor
) -> None:
    await db(connect_b, "revoked-token")
    await serving(supervisor, [A, B])
    await wait_until(lambda: long_polls(servers[A].state).polled(), what="A's long poll")
    servers[A].state.inject_message(5, "первое сообщество работает")
    await wait_until(lambda: seen.texts(A) == ["первое сообщество работает"], what="A")

    await wait_until(lambda: db(lambda: "error 5" in setup_of(B).get("problem", "")),
                     what="B's refusal recorded")  # fmt: skip
    refused = await db(setup_of, B)
    assert refused["ok"] is False and "revoked" not in refused["problem"]
    await wait_until(lambda: len(servers[B].state.calls("groups.getLongPollServer")) >= 3,
                     what="B retried")  # fmt: skip

    await db(connect_b)  # the admin pastes a working token
    await wait_until(lambda: db(lambda: setup_of(B).get("ok") is True), what="B polls")
    await wait_until(lambda: long_polls(servers[B].state).polled(), what="B's long poll")
    servers[B].state.inject_message(5, "второе тоже")
    await wait_until(lambda: seen.texts(B) == ["второе тоже"], what="B's message")
    assert supervisor.serving() == [A, B]


async def test_a_community_without_a_token_is_recorded_and_waits(
    servers: dict[int, RunningServer], supervisor: Supervisor
) -> None:
    await db(lambda: Community.objects.create(vk_id=B, connected=True))
    await wait_until(lambda: db(lambda: setup_of(B).get("problem") == "no community token "
                                "is stored"), what="the missing token recorded")  # fmt: skip
    assert servers[B].state.calls("groups.getLongPollServer") == []


# --- the command ------------------------------------------------------------------------------


def _run_runbot(monkeypatch: pytest.MonkeyPatch, servers: dict[int, Any] | None,
                user: Callable[[io.StringIO], None]) -> str:  # fmt: skip
    """``manage.py runbot`` (with each community aimed at its own local VK when ``servers``
    says), while ``user`` acts in another thread and then sends SIGTERM; runbot's stdout."""
    if servers is not None:
        build = poller_for(servers)
        monkeypatch.setattr(Runbot, "build_poller",
                            lambda self, community, wait: build(community))  # fmt: skip
    return run_runbot(user)


def test_runbot_answers_a_player_in_each_community_as_that_community(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real handlers: a player writes to each community; each reply is queued to go out
    as the community written to."""
    settings.VK_COMMUNITIES_REFRESH_SECONDS = 1
    with (
        ServerThread(make_state()) as a,
        ServerThread(make_state(group_id=B, group_token=TOKEN_B)) as b,
    ):
        configure(settings, api_url=a.api_url)
        connect_b()
        watches = {A: long_polls(a.state), B: long_polls(b.state)}

        def player(out: io.StringIO) -> None:
            wait_for(lambda: all(w.polled() for w in watches.values()), timeout=30,
                     what="both long polls")  # fmt: skip
            with a.state.lock:
                a.state.inject_message(4242, "помощь")
            with b.state.lock:
                b.state.inject_message(4343, "помощь")
            wait_for(lambda: _replies_to(4343) and _replies_to(4242),
                     timeout=30, what="both replies")  # fmt: skip

        out = _run_runbot(monkeypatch, {A: a, B: b}, player)

    replies = {row.peer_ids[0]: row.group_id for row in Outbox.objects.all()}
    assert replies == {4242: A, 4343: B}
    assert "long poll for group 77" in out and "long poll for group 88" in out
    assert "stopped after 2 batches (2 updates applied)" in out
    assert stored_ts(A) == str(a.state.longpoll.ts) and stored_ts(B) == str(b.state.longpoll.ts)


def test_runbot_without_a_community_waits_for_one(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VK_COMMUNITIES_REFRESH_SECONDS = 1
    seen = Seen()
    use_dispatch(monkeypatch, seen)
    with ServerThread(make_state(group_id=B, group_token=TOKEN_B)) as b:
        configure(settings, api_url=b.api_url)
        settings.VK_GROUP_ID, settings.VK_GROUP_TOKEN = None, ""
        watch = long_polls(b.state)

        def operator(out: io.StringIO) -> None:
            wait_for(lambda: "no community is connected yet" in out.getvalue(), timeout=30,
                     what="runbot to say it waits")  # fmt: skip
            connect_b()
            wait_for(watch.polled, timeout=30, what="B's long poll")
            with b.state.lock:
                b.state.inject_message(9, "наконец")
            wait_for(lambda: seen.texts(B) == ["наконец"], timeout=30, what="B's message")

        out = _run_runbot(monkeypatch, {B: b}, operator)

    assert "long poll for group 88" in out and "stopped after" in out


def test_one_local_vk_hosting_two_communities_gets_each_ones_long_poll_and_replies(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local VK hosts both communities behind one address (requests told apart by their
    token, as VK does): the same player writes to each; runbot polls each with its own token
    and each reply is queued to go out as the community written to."""
    settings.VK_COMMUNITIES_REFRESH_SECONDS = 1
    state = make_state()
    b_state = Communities.of(state).create(group_id=B, group_token=TOKEN_B)
    with ServerThread(state) as srv:
        configure(settings, api_url=srv.api_url)
        connect_b()
        watches = [long_polls(state), long_polls(b_state)]

        def player(out: io.StringIO) -> None:
            wait_for(lambda: all(w.polled() for w in watches), timeout=30,
                     what="both long polls")  # fmt: skip
            with state.lock:
                state.inject_message(4242, "помощь")
                b_state.inject_message(4242, "помощь")
            wait_for(lambda: _replies_to(4242) == 2, timeout=30, what="both replies")

        out = _run_runbot(monkeypatch, None, player)

    assert list(Outbox.objects.order_by("group_id").values_list("group_id", flat=True)) == [A, B]
    assert state.calls("groups.getLongPollServer") and b_state.calls("groups.getLongPollServer")
    assert stored_ts(A) == str(state.longpoll.ts) and stored_ts(B) == str(b_state.longpoll.ts)
    assert "long poll for group 77" in out and "long poll for group 88" in out


async def test_one_runbot_applies_both_communities_batches_in_one_transaction(
    servers: dict[int, RunningServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a slice is held, a batch of each community comes in: the next slice applies
    both, in one transaction (one ``apply_sections``), each for its community, each once,
    and each community's position is its own server's."""
    held, release = threading.Event(), threading.Event()
    seen = Seen()

    def handler(update: dict[str, Any]) -> None:
        if update["object"]["message"]["text"] == "первое":
            held.set()
            release.wait(10)
        seen(update)

    use_dispatch(monkeypatch, handler)
    slices: list[list[int]] = []
    apply_sections = applier_module.apply_sections

    def spy(sections: Any, **kwargs: Any) -> Any:
        slices.append(sorted(s.group_id for s in sections if s.updates))
        return apply_sections(sections, **kwargs)

    monkeypatch.setattr(applier_module, "apply_sections", spy)
    await db(connect_b)
    running = Supervisor(poller_for(servers), refresh=0.1)
    task = asyncio.create_task(running.run())
    try:
        await serving(running, [A, B])
        await wait_until(
            lambda: long_polls(servers[A].state).polled() and long_polls(servers[B].state).polled(),
            what="both long polls",
        )
        servers[A].state.inject_message(42, "первое")
        assert await asyncio.to_thread(held.wait, 10)
        servers[A].state.inject_message(43, "в первом")
        servers[B].state.inject_message(44, "во втором")
        await wait_until(lambda: len(running.applier.inbox) == 2, what="both batches waiting")
        release.set()
        expected = {g: str(servers[g].state.longpoll.ts) for g in (A, B)}
        await wait_until(lambda: positions_are(expected), what="both batches' ts stored")
    finally:
        release.set()
        running.request_stop()
        await asyncio.wait_for(task, 10)

    assert slices == [[A], [A, B]]
    assert sorted(seen.updates) == [(A, A, "в первом"), (A, A, "первое"), (B, B, "во втором")]
    assert await db(lambda: VkEvent.objects.count()) == 3 and running.applied == 3
