"""Helpers for the local VK server tests: the test community, raw HTTP calls, and what the
server's long poll has been asked."""

from __future__ import annotations

from typing import Any

import aiohttp

from localvk import LocalVK, RunningServer

GROUP_ID = 77
GROUP_TOKEN = "test-group-token"
USER_TOKEN = "test-user-token"
ADMIN_ID = 500


def make_state(**overrides: Any) -> LocalVK:
    """The test community; generous rate limits unless a test asks for VK's own."""
    options: dict[str, Any] = {
        "group_id": GROUP_ID,
        "group_token": GROUP_TOKEN,
        "user_tokens": {USER_TOKEN: ADMIN_ID},
        "group_rps": 10_000,
        "user_rps": 10_000,
    }
    options.update(overrides)
    return LocalVK(**options)


async def raw_call(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    method: str,
    params: dict[str, Any],
    *,
    token: str | None = GROUP_TOKEN,
    version: str | None = "5.199",
) -> tuple[int, dict[str, Any]]:
    """POST a form to ``/method/<method>`` as VK clients do; (HTTP status, JSON answer)."""
    query = {}
    if token is not None:
        query["access_token"] = token
    if version is not None:
        query["v"] = version
    form = {key: str(value) for key, value in params.items()}
    async with http.post(f"{srv.api_url}{method}", params=query, data=form) as response:
        return response.status, await response.json()


async def control(
    http: aiohttp.ClientSession, srv: RunningServer, path: str, body: Any = None
) -> tuple[int, Any]:
    """Call a ``/_test/`` endpoint: POST with a JSON body, or GET without one."""
    url = f"{srv.url}/_test/{path}"
    if body is None:
        async with http.get(url) as response:
            return response.status, await response.json()
    async with http.post(url, json=body) as response:
        return response.status, await response.json()


class LongPollWatch:
    """Records every ``a_check`` the local VK's long poll receives (by wrapping its queue's
    ``poll``): for each, how many ``groups.getLongPollServer`` calls had been made by then.

    A poller that has sent an ``a_check`` has fixed its position (the ts it polls from is
    stored by then): whatever is injected afterwards reaches it. That is what a test waits for
    before it injects, instead of sleeping on the assumption that the poller got that far."""

    def __init__(self, state: LocalVK) -> None:
        self.state = state
        #: Per ``a_check`` received: the number of ``groups.getLongPollServer`` calls before it.
        self.servers_before: list[int] = []
        original = state.longpoll.poll

        async def poll(key: str, ts: str, wait: float) -> dict[str, Any]:
            self.servers_before.append(len(state.calls("groups.getLongPollServer")))
            return await original(key, ts, wait)

        poll.watch = self  # type: ignore[attr-defined]  # for long_polls()
        state.longpoll.poll = poll  # type: ignore[method-assign]

    def polled(self, servers: int = 1) -> bool:
        """Whether an ``a_check`` came after the ``servers``-th ``groups.getLongPollServer``."""
        return any(n >= servers for n in self.servers_before)


def long_polls(state: LocalVK) -> LongPollWatch:
    """The :class:`LongPollWatch` of ``state`` (started on the first call: call it before the
    poller starts, or its first ``a_check`` goes unseen)."""
    watch = getattr(state.longpoll.poll, "watch", None)
    return watch if isinstance(watch, LongPollWatch) else LongPollWatch(state)
