"""Helpers for the local VK server tests: the test community and raw HTTP calls."""

from __future__ import annotations

from typing import Any

import aiohttp

from vkbot.localvk import LocalVK, RunningServer

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
