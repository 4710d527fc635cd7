"""Fixtures for the local VK server tests: a server per test, real vkbottle clients, raw HTTP.

The vkbottle clients are unpatched: the only change is the API URL, set on the ``API``
instance (``api.API_URL``; vkbottle reads ``self.API_URL`` for every request), see
:func:`localvk.point_api_at`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from vkbottle import API
from vkbottle.http import SingleAiohttpClient

from localvk import RunningServer, running_server
from tests.localvk.support import USER_TOKEN, make_state


@pytest_asyncio.fixture
async def server() -> AsyncIterator[RunningServer]:
    async with running_server(make_state()) as srv:
        yield srv
        await SingleAiohttpClient().close()  # vkbottle's shared session, bound to this loop


@pytest_asyncio.fixture
async def limited_server() -> AsyncIterator[RunningServer]:
    """VK's real limits: 20 requests/s for the community token, 3/s for the user token."""
    async with running_server(make_state(group_rps=20, user_rps=3)) as srv:
        yield srv
        await SingleAiohttpClient().close()


@pytest.fixture
def api(server: RunningServer) -> API:
    return server.vk_api()


@pytest.fixture
def user_api(server: RunningServer) -> API:
    return server.vk_api(USER_TOKEN)


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session
