"""vkbot.vkapi: every client goes to VK_API_URL with VK_API_VERSION, per instance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from vkbottle import API
from vkbottle.http import SingleAiohttpClient

from config.env import EnvError
from localvk import RunningServer, running_server
from tests.localvk.support import ADMIN_ID, GROUP_ID, USER_TOKEN, make_state
from tests.vkbot.ingest_support import (
    close_db_thread_connections,  # noqa: F401
    configure,
)
from vkbot.vkapi import group_api, make_api, normalise_api_url, user_api


@pytest_asyncio.fixture
async def server(settings: Any) -> AsyncIterator[RunningServer]:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        settings.VK_USER_TOKEN = USER_TOKEN
        yield srv
        await SingleAiohttpClient().close()


async def test_the_group_client_uses_the_configured_url_and_version(
    server: RunningServer, settings: Any
) -> None:
    settings.VK_API_VERSION = "5.131"
    api = group_api()
    answer = await api.request("groups.getById", {})
    assert answer["response"]["groups"][0]["id"] == GROUP_ID
    [call] = server.state.calls("groups.getById")
    assert (call.token_kind, call.version) == ("group", "5.131")
    assert API.API_URL == "https://api.vk.ru/method/"  # the class is untouched
    assert "group-token" not in repr(api) and server.api_url in repr(api)


async def test_the_user_client_uses_the_user_token(server: RunningServer) -> None:
    topic = server.state.create_topic("Игра", "правила")
    await user_api().request(
        "board.createComment", {"group_id": GROUP_ID, "topic_id": topic.id, "message": "Привет"}
    )
    [call] = server.state.calls("board.createComment")
    assert (call.token_kind, call.user_id) == ("user", ADMIN_ID)


async def test_clients_with_different_urls_do_not_interfere(server: RunningServer) -> None:
    elsewhere = make_api("x", api_url="http://127.0.0.1:9/method/")
    here = make_api("test-group-token")
    assert elsewhere.API_URL != here.API_URL == server.api_url
    await here.request("groups.getById", {})
    assert len(server.state.calls("groups.getById")) == 1


def test_missing_tokens_are_configuration_errors(settings: Any) -> None:
    settings.VK_GROUP_TOKEN = ""
    settings.VK_USER_TOKEN = ""
    with pytest.raises(EnvError, match="VK_GROUP_TOKEN"):
        group_api()
    with pytest.raises(EnvError, match="VK_USER_TOKEN"):
        user_api()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8081/method", "http://127.0.0.1:8081/method/"),
        (" https://api.vk.ru/method/ ", "https://api.vk.ru/method/"),
    ],
)
def test_the_url_ends_with_a_slash(url: str, expected: str) -> None:
    assert normalise_api_url(url) == expected


def test_an_empty_url_is_refused() -> None:
    with pytest.raises(EnvError):
        normalise_api_url("  ")
