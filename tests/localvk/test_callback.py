"""The local VK's Callback API pusher (``localvk.callback``) against small aiohttp
receivers standing in for the bot's web processes: confirmation first, then every event
POSTed with the secret, ``ok`` or a retry with ``X-Retry-Counter``, round-robin over the URLs,
a bounded number of posts in flight, injected duplicates; its options and control endpoints."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from localvk import FaultConfig, LocalVK, RunningServer, running_server
from localvk.__main__ import build_parser, main, state_from_args
from localvk.callback_config import CallbackConfig
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, control, make_state

CODE = "c0nf1rm"
SECRET = "s3cret"
FAST: dict[str, Any] = {"backoff": 0.01, "confirm_interval": 0.02, "timeout": 5.0}

Answer = Callable[[dict[str, Any], int], "tuple[int, str] | None"]


@dataclass
class Received:
    body: dict[str, Any]
    retry: str | None
    content_type: str


@dataclass
class Receiver:
    """A web process: records every POST, answers the confirmation with ``code`` and events
    with what ``answer(body, nth)`` says (default ``ok``)."""

    url: str = ""
    code: str = CODE
    answer: Answer | None = None
    hold: asyncio.Event | None = None
    got: list[Received] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0

    async def handle(self, request: web.Request) -> web.Response:
        body = json.loads(await request.text())
        self.got.append(
            Received(body, request.headers.get("X-Retry-Counter"), request.content_type)
        )
        if body.get("type") == "confirmation":
            return web.Response(text=self.code)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.hold is not None:
                await self.hold.wait()
            custom = self.answer(body, len(self.events())) if self.answer else None
        finally:
            self.in_flight -= 1
        status, text = custom or (200, "ok")
        return web.Response(status=status, text=text)

    def events(self) -> list[Received]:
        return [r for r in self.got if r.body.get("type") != "confirmation"]

    def event_ids(self) -> list[str]:
        return [r.body["event_id"] for r in self.events()]


@pytest_asyncio.fixture
async def receivers() -> AsyncIterator[list[Receiver]]:
    """Three receivers on free ports (tests use as many as they need)."""
    found: list[Receiver] = []
    runners = []
    for _ in range(3):
        receiver = Receiver()
        app = web.Application()
        app.router.add_post("/vk/callback/", receiver.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        receiver.url = f"http://127.0.0.1:{runner.addresses[0][1]}/vk/callback/"
        found.append(receiver)
        runners.append(runner)
    yield found
    for runner in runners:
        await runner.cleanup()


@pytest_asyncio.fixture
async def server() -> AsyncIterator[RunningServer]:
    async with running_server(make_state()) as srv:
        yield srv


def push_to(state: LocalVK, *receivers: Receiver, **options: Any) -> None:
    settings = {**FAST, **options}
    state.callbacks.configure(
        CallbackConfig(
            urls=tuple(r.url for r in receivers),
            confirmation_code=settings.pop("confirmation_code", CODE),
            secret=settings.pop("secret", SECRET),
            **settings,
        )
    )


async def confirmed(state: LocalVK) -> None:
    await wait_until(lambda: state.callbacks.confirmed, what="the confirmation")


async def drained(state: LocalVK) -> None:
    await wait_until(lambda: state.callbacks.pending == 0, what="every event answered")


#: How long a test watches for a post that must not come (nothing queued it: the post
#: would be a bug). A wait for something that is not to happen cannot end on a condition;
#: on a slow machine the window only catches less, it never fails a correct pusher.
NOTHING_WINDOW = 0.1


async def test_without_a_server_url_nothing_is_pushed_and_long_poll_is_as_ever(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    update = server.state.inject_message(42, "привет")
    assert server.state.longpoll.events() == [update]
    stats = server.state.callbacks.stats()
    assert (stats["configured"], stats["events"], stats["not_confirmed"]) == (False, 0, 0)
    assert server.state.callbacks.pending == 0  # nothing queued, so nothing may be posted:
    await asyncio.sleep(NOTHING_WINDOW)
    assert receivers[0].got == []


async def test_events_wait_for_the_confirmation_then_come_as_vk_sends_them(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    state, web_process = server.state, receivers[0]
    web_process.code = "wrong"
    push_to(state, web_process)
    await wait_until(lambda: len(web_process.got) >= 2)  # asked, and asked again
    before = state.inject_message(42, "до подтверждения")
    assert not state.callbacks.confirmed
    assert web_process.got[0].body == {"type": "confirmation", "group_id": GROUP_ID}

    web_process.code = CODE
    await confirmed(state)
    after = state.inject_board_post(42, state.create_topic("Игра").id, "голос 3")
    await drained(state)

    assert web_process.event_ids() == [after["event_id"]]
    [got] = web_process.events()
    assert got.body == {**after, "secret": SECRET}
    assert set(got.body) == {"type", "event_id", "v", "object", "group_id", "secret"}
    assert got.body["v"] == "5.199" and got.retry is None
    assert got.content_type == "application/json"
    assert state.longpoll.events()[-2:] == [before, after]  # the long poll has both
    stats = state.callbacks.stats()
    assert (stats["events"], stats["ok"], stats["not_confirmed"]) == (1, 1, 1)
    assert stats["confirmation_requests"] >= 2


async def test_without_a_secret_the_field_is_left_out(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    push_to(server.state, receivers[0], secret="")
    await confirmed(server.state)
    server.state.inject_message(42, "привет")
    await drained(server.state)
    assert "secret" not in receivers[0].events()[0].body


@pytest.mark.parametrize(
    "refusal", [(500, "ok"), (200, "OK"), (200, "ok\n"), (200, ""), (403, "forbidden")]
)
async def test_anything_but_200_ok_is_retried_with_the_retry_counter(
    server: RunningServer, receivers: list[Receiver], refusal: tuple[int, str]
) -> None:
    web_process = receivers[0]
    web_process.answer = lambda body, nth: refusal if nth <= 2 else None
    push_to(server.state, web_process)
    await confirmed(server.state)
    update = server.state.inject_message(42, "голос 1")
    await drained(server.state)

    assert [r.retry for r in web_process.events()] == [None, "1", "2"]
    assert web_process.event_ids() == [update["event_id"]] * 3
    tries = server.state.callbacks.deliveries()
    assert [(d.attempt, d.ok) for d in tries if d.type != "confirmation"] == [
        (0, False), (1, False), (2, True),
    ]  # fmt: skip
    stats = server.state.callbacks.stats()
    assert (stats["ok"], stats["retries"], stats["failed"]) == (1, 2, 0)


async def test_an_event_is_given_up_after_the_retries(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    web_process = receivers[0]
    web_process.answer = lambda body, nth: (503, "down")
    push_to(server.state, web_process, retries=2)
    await confirmed(server.state)
    server.state.inject_message(42, "голос 1")
    await drained(server.state)
    assert [r.retry for r in web_process.events()] == [None, "1", "2"]
    assert server.state.callbacks.stats()["failed"] == 1


async def test_events_take_turns_over_the_urls_and_a_retry_goes_to_the_next_one(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    first, second, _ = receivers
    push_to(server.state, first, second)
    await confirmed(server.state)
    ids = [server.state.inject_message(40 + n, f"голос {n}")["event_id"] for n in range(10)]
    await drained(server.state)
    assert len(first.events()) == len(second.events()) == 5
    assert sorted(first.event_ids() + second.event_ids()) == sorted(ids)

    # A backend that fails: the retry reaches the other one.
    first.answer = lambda body, nth: (502, "bad gateway")
    before = len(second.events())
    for n in range(4):
        server.state.inject_message(60 + n, "статус")
    await drained(server.state)
    retried = second.events()[before:]
    assert len(retried) == 4 and sorted(r.retry or "0" for r in retried) == ["0", "0", "1", "1"]
    assert server.state.callbacks.stats()["failed"] == 0


async def test_a_dead_url_is_retried_at_the_next(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    with socket.socket() as probe:  # a free port: nothing listens there
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/vk/callback/"
    alive = receivers[0]
    server.state.callbacks.configure(
        CallbackConfig(urls=(alive.url, dead), confirmation_code=CODE, secret=SECRET, **FAST)
    )
    await confirmed(server.state)
    ids = [server.state.inject_message(40 + n, "статус")["event_id"] for n in range(6)]
    await drained(server.state)
    assert sorted(alive.event_ids()) == sorted(ids)
    refused = [d for d in server.state.callbacks.deliveries() if d.url == dead]
    assert len(refused) == 3 and all(d.status is None and not d.ok for d in refused)


async def test_at_most_concurrency_posts_are_in_flight(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    web_process = receivers[0]
    web_process.hold = asyncio.Event()
    push_to(server.state, web_process, concurrency=3)
    await confirmed(server.state)
    for n in range(8):
        server.state.inject_message(40 + n, "статус")
    await wait_until(lambda: web_process.in_flight == 3, what="3 posts in flight")
    # Five more are queued: none of them may start while the three are held.
    await asyncio.sleep(NOTHING_WINDOW)
    assert web_process.in_flight == 3 and server.state.callbacks.pending == 8
    web_process.hold.set()
    await drained(server.state)
    assert web_process.most_in_flight == 3 and len(web_process.events()) == 8


async def test_injected_duplicates_reach_two_urls_with_the_same_event_id(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    first, second, _ = receivers
    server.state.faults.configure(callback_duplicate_rate=1.0)
    push_to(server.state, first, second)
    await confirmed(server.state)
    ids = [server.state.inject_message(40 + n, "статус")["event_id"] for n in range(3)]
    await drained(server.state)
    assert sorted(first.event_ids()) == sorted(second.event_ids()) == sorted(ids)
    copies = [d for d in server.state.callbacks.deliveries() if d.copy == 1]
    assert len(copies) == 3
    stats = server.state.callbacks.stats()
    assert (stats["events"], stats["duplicated"], stats["ok"]) == (3, 3, 6)
    assert server.state.faults.injected["callback_duplicate"] == 3


def faulty(seed: int, **faults: Any) -> LocalVK:
    state = make_state()
    state.faults.configure(seed=seed, **faults)
    return state


def test_the_duplicate_rate_is_seeded_and_leaves_api_faults_alone() -> None:
    def draws(state: LocalVK) -> tuple[list[bool], list[Any]]:
        dups = [state.faults.duplicate_callback() for _ in range(50)]
        api = [state.faults.decide("messages.send") for _ in range(50)]
        return dups, api

    both = {"callback_duplicate_rate": 0.3, "error_rates": {6: 0.5}}
    dups, api = draws(faulty(7, **both))
    assert (dups, api) == draws(faulty(7, **both))
    assert 5 < sum(dups) < 30
    assert api == draws(faulty(7, error_rates={6: 0.5}))[1]


def test_fault_config_carries_the_duplicate_rate() -> None:
    config = FaultConfig.from_dict({"callback_duplicate_rate": 0.25})
    assert config.to_dict()["callback_duplicate_rate"] == 0.25
    assert not config.active  # API calls are not affected
    with pytest.raises(ValueError, match="callback_duplicate_rate"):
        FaultConfig(callback_duplicate_rate=1.5)


async def test_reconfiguring_asks_for_a_new_confirmation(
    server: RunningServer, receivers: list[Receiver]
) -> None:
    first, second, _ = receivers
    push_to(server.state, first)
    await confirmed(server.state)
    second.code = "other"
    push_to(server.state, second, confirmation_code="other")
    assert not server.state.callbacks.confirmed
    await confirmed(server.state)
    server.state.inject_message(42, "статус")
    await drained(server.state)
    assert first.events() == [] and len(second.events()) == 1

    server.state.callbacks.configure(None)
    server.state.inject_message(42, "статус")
    assert server.state.callbacks.pending == 0  # not queued, so it may not be posted:
    await asyncio.sleep(NOTHING_WINDOW)
    assert len(second.events()) == 1 and not server.state.callbacks.stats()["configured"]


async def test_control_endpoints(server: RunningServer, receivers: list[Receiver]) -> None:
    web_process = receivers[0]
    async with aiohttp.ClientSession() as http:
        status, body = await control(
            http, server, "callback",
            {"urls": [web_process.url], "confirmation_code": CODE, "secret": SECRET, **FAST},
        )  # fmt: skip
        assert status == 200 and body["configured"] and body["config"]["secret"] is True
        assert CODE not in json.dumps(body) and SECRET not in json.dumps(body)
        await confirmed(server.state)
        await control(http, server, "message_new", {"from_id": 42, "text": "статус"})
        await drained(server.state)
        status, body = await control(http, server, "callback")
        assert (body["confirmed"], body["ok"], body["per_url"]) == (
            True, 1, {web_process.url: {"posts": 1, "ok": 1}},
        )  # fmt: skip
        status, body = await control(http, server, "callback/deliveries")
        assert [d["type"] for d in body["deliveries"]] == ["confirmation", "message_new"]
        status, body = await control(http, server, "stats")
        assert body["callback"]["ok"] == 1
        for bad in ({"urls": "http://x/"}, {"urls": ["ftp://x/"], "confirmation_code": CODE},
                    {"urls": [web_process.url]}, {"urls": [web_process.url], "x": 1}):  # fmt: skip
            status, body = await control(http, server, "callback", bad)
            assert status == 400 and body["error"], bad
        async with http.delete(f"{server.url}/_test/callback") as response:
            assert (await response.json())["configured"] is False


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--callback-url", "http://127.0.0.1:8000/vk/callback/"], "confirmation code"),
        (["--callback-secret", "s"], "need --callback-url"),
        (["--callback-url", "nope", "--callback-confirmation", "c"], "not an http"),
        (["--callback-duplicate-rate", "0.5"], "needs --callback-url"),
        (
            [
                "--callback-url",
                "http://h/",
                "--callback-confirmation",
                "c",
                "--callback-concurrency",
                "0",
            ],
            "concurrency",
        ),  # fmt: skip
    ],
)
def test_bad_callback_options_are_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_callback_options_configure_the_pusher() -> None:
    args = build_parser().parse_args(
        ["--callback-url", "http://127.0.0.1:8001/vk/callback/",
         "--callback-url", "http://127.0.0.1:8002/vk/callback/",
         "--callback-confirmation", CODE, "--callback-secret", SECRET,
         "--callback-concurrency", "6", "--callback-duplicate-rate", "0.2"]
    )  # fmt: skip
    state = state_from_args(args)
    config = state.callbacks.config
    assert config is not None and config.urls == (
        "http://127.0.0.1:8001/vk/callback/", "http://127.0.0.1:8002/vk/callback/",
    )  # fmt: skip
    assert (config.confirmation_code, config.secret, config.concurrency) == (CODE, SECRET, 6)
    assert state.faults.config.callback_duplicate_rate == 0.2
    assert state_from_args(build_parser().parse_args([])).callbacks.config is None
