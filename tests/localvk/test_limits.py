"""Rate limits, fault injection, request statistics and the threaded server."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections import Counter

import aiohttp
import pytest
from vkbottle import API, VKAPIError

from localvk import FaultConfig, RunningServer, ServerThread
from localvk.limits import SlidingWindowLimiter, max_in_window
from localvk.recording import CallLog, CallRecord
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, USER_TOKEN, control, make_state


async def error_codes(calls: list) -> list[int | None]:
    """Run calls concurrently; the VK error code of each (None for success)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    codes: list[int | None] = []
    for result in results:
        if isinstance(result, VKAPIError):
            codes.append(result.code)
        elif isinstance(result, BaseException):
            raise result
        else:
            codes.append(None)
    return codes


# --- rate limits --------------------------------------------------------------------------


async def test_21_quick_calls_on_the_community_token_hit_error_6(
    limited_server: RunningServer,
) -> None:
    api = limited_server.vk_api()
    codes = await error_codes([api.users.get(user_ids=[i]) for i in range(1, 22)])
    assert codes.count(6) >= 1
    assert codes.count(None) == 20
    state = limited_server.state
    assert state.max_requests_per_second("group") == 21
    assert state.log.max_per_second("group", accepted_only=True) == 20
    refused = [c for c in state.calls() if c.error_code == 6]
    assert refused[0].error == {"error_code": 6, "error_msg": "Too many requests per second"}


async def test_4_quick_calls_on_the_user_token_hit_error_6(limited_server: RunningServer) -> None:
    api = limited_server.vk_api(USER_TOKEN)
    codes = await error_codes([api.users.get(user_ids=[i]) for i in range(1, 5)])
    assert codes.count(None) == 3 and codes.count(6) == 1


async def test_the_window_slides(limited_server: RunningServer) -> None:
    api = limited_server.vk_api(USER_TOKEN)
    assert (await error_codes([api.users.get(user_ids=[1]) for _ in range(3)])) == [None] * 3
    await asyncio.sleep(1.05)
    assert (await error_codes([api.users.get(user_ids=[1]) for _ in range(3)])) == [None] * 3


async def test_execute_counts_as_one_request(limited_server: RunningServer) -> None:
    api = limited_server.vk_api(USER_TOKEN)
    code = "return [" + ", ".join(['API.users.get({"user_ids": [1]})'] * 20) + "];"
    answers = await asyncio.gather(*[api.execute(code=code) for _ in range(3)])
    assert all(len(a.response["response"]) == 20 for a in answers)
    assert limited_server.state.max_requests_per_second("user") == 3


def test_sliding_window_limiter_and_max_in_window() -> None:
    limiter = SlidingWindowLimiter(2, window=1.0, clock=lambda: 0.0)
    assert [limiter.try_acquire(t) for t in (0.0, 0.5, 0.9, 1.0, 1.4, 1.5)] == [
        True, True, False, True, False, True,
    ]  # fmt: skip
    assert max_in_window([0.0, 0.1, 0.99, 1.0, 1.5, 1.6, 1.7]) == 5  # [0.99, 1.99)
    assert max_in_window([]) == 0
    log = CallLog()
    for moment, kind in [(0.0, "group"), (0.2, "group"), (0.3, "user"), (2.0, "group")]:
        log.add(CallRecord(log.next_seq(), 0.0, moment, kind, "users.get", {}))
    assert log.max_per_second("group") == 2 and log.max_per_second() == 3


# --- fault injection ----------------------------------------------------------------------


async def run_series(api: API, count: int) -> list[int | None]:
    codes: list[int | None] = []
    for i in range(count):
        try:
            await api.users.get(user_ids=[i + 1])
            codes.append(None)
        except VKAPIError as exc:
            codes.append(exc.code)
    return codes


async def test_injected_errors_follow_the_rates_and_the_seed(
    server: RunningServer, api: API
) -> None:
    rates = {6: 0.2, 9: 0.1, 10: 0.1}
    server.state.faults.configure(FaultConfig(error_rates=rates, seed=7))
    first = await run_series(api, 400)
    counts = Counter(first)
    for code, rate in rates.items():
        assert abs(counts[code] / 400 - rate) < 0.06, counts
    server.state.faults.configure(FaultConfig(error_rates=rates, seed=7))
    assert await run_series(api, 400) == first  # same seed, same faults
    injected = server.state.faults.injected
    assert injected["error_6"] == 2 * counts[6]
    assert {c.fault for c in server.state.calls() if c.error_code == 9} == {"error_9"}


async def test_faults_only_for_chosen_methods(server: RunningServer, api: API) -> None:
    server.state.faults.configure(error_rates={10: 1.0}, methods=["messages.send"])
    assert await api.users.get(user_ids=[1])
    with pytest.raises(VKAPIError[10]):
        await api.messages.send(peer_id=1, message="x", random_id=1)
    assert server.state.sent_messages() == []


async def test_slow_answers(server: RunningServer, api: API) -> None:
    server.state.faults.configure(delay=0.3)
    started = time.monotonic()
    await api.users.get(user_ids=[1])
    assert time.monotonic() - started >= 0.3


async def test_dropped_connection_before_the_call(server: RunningServer, api: API) -> None:
    server.state.faults.configure(drop_rate=1.0)
    with pytest.raises(aiohttp.ClientConnectionError):
        await api.messages.send(peer_id=1, message="x", random_id=1)
    assert server.state.sent_messages() == []
    assert server.state.calls("messages.send")[0].fault == "drop_before"


async def test_dropped_answer_after_the_call_and_a_safe_retry(
    server: RunningServer, api: API
) -> None:
    server.state.faults.configure(drop_after_rate=1.0)
    with pytest.raises(aiohttp.ClientConnectionError):
        await api.messages.send(peer_id=1, message="итоги ночи", random_id=4242)
    [stored] = server.state.sent_messages(1)  # it was sent; only the answer was lost
    server.state.faults.clear()
    assert await api.messages.send(peer_id=1, message="итоги ночи", random_id=4242) == stored.id
    assert len(server.state.sent_messages(1)) == 1


async def test_bad_gateway_pages_for_api_calls_and_long_polls(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    """VK down: its front answers an HTML page with HTTP 502, and nothing happens."""
    server.state.faults.configure(bad_gateway_rate=1.0)
    form = {"peer_id": "1", "message": "x", "random_id": "1", "access_token": GROUP_TOKEN,
            "v": "5.199"}  # fmt: skip
    async with http.post(f"{server.api_url}messages.send", data=form) as response:
        assert response.status == 502 and "502 Bad Gateway" in await response.text()
    lp = f"{server.url}/lp/{GROUP_ID}"
    async with http.get(lp, params={"act": "a_check", "key": "k", "ts": "1", "wait": "1"}) as r:
        assert r.status == 502 and r.content_type == "text/html"
    assert server.state.sent_messages() == []
    assert server.state.faults.injected == {"bad_gateway": 1, "bad_gateway_longpoll": 1}
    server.state.faults.configure(bad_gateway_rate=1.0, methods=["messages.send"])
    async with http.get(lp, params={"act": "a_check", "key": "k", "ts": "1", "wait": "0"}) as r:
        assert r.status == 200  # the long poll is left out
    server.state.faults.clear()
    async with http.post(f"{server.api_url}messages.send", data=form) as response:
        assert response.status == 200


async def test_faults_over_http(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    config = {"error_rates": {"9": 1.0}, "seed": 3, "methods": ["users.get"]}
    status, body = await control(http, server, "faults", config)
    assert status == 200 and body["config"]["error_rates"] == {"9": 1.0}
    with pytest.raises(VKAPIError[9]):
        await api.users.get(user_ids=[1])
    status, body = await control(http, server, "faults")
    assert body["injected"] == {"error_9": 1}
    async with http.delete(f"{server.url}/_test/faults") as response:
        assert response.status == 200
    assert await api.users.get(user_ids=[1])


def test_fault_config_validation() -> None:
    with pytest.raises(ValueError):
        FaultConfig(error_rates={6: 0.7, 9: 0.5})
    with pytest.raises(ValueError):
        FaultConfig.from_dict({"drop_rate": 2})
    with pytest.raises(ValueError):
        FaultConfig.from_dict({"surprise": 1})
    assert FaultConfig.from_dict({"error_rates": {"6": 0.5}}).error_rates == {6: 0.5}


# --- the server in a thread, for synchronous callers ---------------------------------------


def test_server_thread_serves_synchronous_code() -> None:
    with ServerThread(make_state()) as srv:
        body = json.dumps({"from_id": 3, "text": "hi"}).encode()
        request = urllib.request.Request(
            f"{srv.url}/_test/message_new", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.load(response)["type"] == "message_new"
        url = f"{srv.api_url}users.get?access_token=test-group-token&v=5.199&user_ids=3"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert json.load(response)["response"][0]["id"] == 3
        assert len(srv.state.calls("users.get")) == 1
