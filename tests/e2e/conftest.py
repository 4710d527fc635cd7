"""Fixtures of the end-to-end tests: the local VK on a free port with VK's own request limits,
the project's settings aimed at it, and ``runbot`` running against it."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from django.db import connections
from vkbottle.http import SingleAiohttpClient

from localvk import LocalVK, running_server
from tests.e2e.harness import World, db

GROUP_ID = 77
#: The community admin whose user token posts in the board.
ADMIN_ID = 100


@pytest_asyncio.fixture
async def world(settings: Any) -> AsyncIterator[World]:
    # Tokens of this run only: the delivery's rate limiters live in Redis under the token's
    # hash, and a real Redis may be shared with other runs.
    run = secrets.token_hex(4)
    group_token, user_token = f"e2e-group-{run}", f"e2e-user-{run}"
    state = LocalVK(
        group_id=GROUP_ID,
        group_token=group_token,
        user_tokens={user_token: ADMIN_ID},
        group_rps=20,  # VK's limits (VK.md)
        user_rps=3,
    )
    async with running_server(state) as srv:
        settings.VK_API_URL = srv.api_url
        settings.VK_API_VERSION = "5.199"
        settings.VK_GROUP_ID = GROUP_ID
        settings.VK_GROUP_TOKEN = group_token
        settings.VK_USER_TOKEN = user_token
        settings.VK_GROUP_RPS = 20
        settings.VK_USER_RPS = 3
        # The test drains the Outbox itself after each step (no rq worker runs here).
        settings.OUTBOX_DELIVERY_ENABLED = False
        world = World(srv, GROUP_ID)
        await world.start_bot()
        try:
            yield world
        finally:
            await world.stop()
            await SingleAiohttpClient().close()  # vkbottle's shared session, bound to this loop
            # The database thread's connections (PostgreSQL could not drop the test database).
            await db(connections.close_all)
