"""The environment's community is recorded when a process starts: the web's entry
points (``config.wsgi``, ``config.asgi``) and the rq worker's ``work()`` call
``gameplay.startup.sync_env_community``; a database that cannot be used is one warning, not a
process that fails to start."""

from __future__ import annotations

import asyncio
import importlib

import django_rq
import pytest
from django.db import OperationalError

import gameplay.startup as startup
from gameplay.models import Community
from gameplay.worker import SimpleWorker


@pytest.fixture
def env_community(settings) -> None:
    settings.VK_GROUP_ID, settings.VK_GROUP_TOKEN, settings.VK_USER_TOKEN = 4100, "g1", "u1"


def recorded() -> list[tuple[int, str, str, bool, bool]]:
    return [(c.vk_id, c.group_token, c.user_token, c.from_env, c.connected)
            for c in Community.objects.all()]  # fmt: skip


@pytest.mark.django_db
def test_the_web_records_the_environments_community_when_it_starts(
    env_community: None, settings
) -> None:
    importlib.reload(importlib.import_module("config.wsgi"))
    assert recorded() == [(4100, "g1", "u1", True, True)]

    settings.VK_GROUP_TOKEN = "g2"  # the token rotated in the environment, the web restarted
    importlib.reload(importlib.import_module("config.wsgi"))
    assert recorded() == [(4100, "g2", "u1", True, True)]


@pytest.mark.django_db(transaction=True)
def test_the_asgi_entry_point_records_it_from_inside_an_event_loop(
    env_community: None,
) -> None:
    async def import_as_a_server_would() -> None:  # inside its event loop: no query allowed
        importlib.reload(importlib.import_module("config.asgi"))

    asyncio.run(import_as_a_server_would())

    assert recorded() == [(4100, "g1", "u1", True, True)]


@pytest.mark.django_db
def test_the_worker_records_it_when_it_starts(env_community: None, rq_queues: dict) -> None:
    worker = django_rq.get_worker("default", worker_class=SimpleWorker)

    worker.work(burst=True)

    assert recorded() == [(4100, "g1", "u1", True, True)]


def test_without_vk_group_id_nothing_is_recorded_and_no_query_is_made(settings) -> None:
    settings.VK_GROUP_ID = None
    startup.sync_env_community("web")  # no django_db mark: a query would fail the test


def test_a_database_that_cannot_be_used_is_one_warning(
    env_community: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def down() -> None:
        raise OperationalError('relation "gameplay_community" does not exist\nLINE 1: ...')

    monkeypatch.setattr(startup, "community_sync_env", down)
    with caplog.at_level("WARNING", logger="gameplay.startup"):
        startup.sync_env_community("worker")

    assert [r.getMessage() for r in caplog.records] == [
        "worker: could not record the environment's community (VK_GROUP_ID): "
        'relation "gameplay_community" does not exist'
    ]
