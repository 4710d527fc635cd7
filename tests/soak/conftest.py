"""The soak test's cluster: a local VK server in this process, and ``manage.py runbot`` and two
``rqworker default vk --with-scheduler`` processes on the test database and the configured
Redis, as in production.

It needs PostgreSQL (``DATABASE_URL``) and a real Redis (``REDIS_URL``): separate processes
share neither SQLite writes at this rate nor the in-process fakeredis.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.e2e import make_vk, poll_position
from bench.procs import BOT, WORKER, Managed, wait_for
from tests.process_support import ForkedManaged, shared_database_url

GROUP_ID = 1
READY_TIMEOUT = 90.0


def soak_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else default


@dataclass
class Cluster:
    """The local VK, the bot and the workers; ``kill_*`` and ``restart_*`` as a crash would."""

    state: Any
    bot: Managed
    workers: list[Managed]

    def all(self) -> list[Managed]:
        return [self.bot, *self.workers]

    def ensure_running(self) -> None:
        for process in self.all():
            if not process.alive():
                raise AssertionError(f"{process.name} died:\n{process.log_tail()}")


@pytest.fixture
def cluster(settings: Any, tmp_path: Path, rq_queues: Any) -> Iterator[Any]:
    from localvk import ServerThread

    games = soak_int("SOAK_GAMES", 10)
    tokens = uuid.uuid4().hex[:8]
    group_token, user_token = f"soak-group-{tokens}", f"soak-user-{tokens}"
    state = make_vk(games, group_token=group_token, user_token=user_token)
    with ServerThread(state) as server:
        env = {
            **{k: v for k, v in os.environ.items()
               if not k.startswith(("VK_", "OUTBOX_", "DATABASE_", "REDIS_"))},
            "DATABASE_URL": shared_database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "VK_API_URL": server.api_url,
            "VK_GROUP_ID": str(GROUP_ID),
            "VK_GROUP_TOKEN": group_token,
            "VK_USER_TOKEN": user_token,
            # A killed worker's rows are taken over after 5 s, not a minute.
            "OUTBOX_LEASE_SECONDS": "5",
            "OUTBOX_RETRY_BASE_MS": "200",
            "DEBUG": "false",
            # The test process's own key: the secrets the bot stores (the environment's
            # community's tokens) must read back here, where the checks run.
            "SECRET_KEY": settings.SECRET_KEY,
            "ALLOWED_HOSTS": "127.0.0.1",
            "LOG_LEVEL": "WARNING",
        }  # fmt: skip
        settings.VK_GROUP_ID = GROUP_ID
        # Forked by the fork server (tests/forkserver.py): seven starts of the bot and the workers
        # in the short run, each of which would import vkbottle afresh.
        bot: Managed = ForkedManaged("bot", BOT, env, tmp_path / "bot.log")
        workers: list[Managed] = [
            ForkedManaged(f"worker{n}", WORKER, env, tmp_path / f"worker{n}.log") for n in (1, 2)
        ]
        for process in (*workers, bot):
            process.start()
        cluster = Cluster(state, bot, workers)
        try:
            wait_for(lambda: poll_position() > 0, timeout=READY_TIMEOUT,
                     what="the bot to poll", processes=cluster.all())  # fmt: skip
            yield cluster
        finally:
            for process in cluster.all():
                process.stop()
