"""``manage.py demo_seed`` on an empty database: it reports what it did, and what a second run
did (the service-level runs are test_seed's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from demo import config
from demo.vk import LocalVkClient
from gameplay.models import Game
from localvk import LocalVK, ServerThread
from tests.demo.seed_support import debug_on, drain_flags, local_vk  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture
def vk(rq_queues: Any) -> Iterator[tuple[LocalVK, LocalVkClient]]:
    with ServerThread(local_vk()) as srv:
        yield srv.state, LocalVkClient(srv.url)


def test_the_command_reports_what_it_did(vk: tuple[LocalVK, LocalVkClient]) -> None:
    _, client = vk
    out = StringIO()
    call_command(
        "demo_seed", "--vk-url", client.base_url, "--day-minutes", "7", "--auto-publish", stdout=out
    )
    assert "group 1: demo game created" in out.getvalue() and "День 1 until" in out.getvalue()
    assert "group 2: demo game created: «Классика (демо)»" in out.getvalue()
    game = Game.objects.get(vk_group_id=config.GROUP_ID)
    assert game.day_length == timedelta(minutes=7) and game.auto_publish
    out = StringIO()
    call_command("demo_seed", "--vk-url", client.base_url, stdout=out)
    assert "group 1: demo game continues" in out.getvalue()
    assert "group 2: demo game continues" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("demo_seed", "--day-minutes", "2")
