"""Delivery end to end: against the real PostgreSQL and Redis, 1,000 messages to 300
players with 20% injected errors and a worker killed mid-run are all delivered exactly once, and
the local server never sees more than 20 requests in any second on the community token or 3 on
the user token.

The local VK runs in a thread of this process; the workers are separate processes on the
test's database: first ``manage.py rqworker vk --burst`` running the drain job the commit
enqueued — killed with SIGKILL (with rq's work horse) while it has rows in flight — then two
``manage.py deliver --once`` side by side.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.db import transaction
from django.utils import timezone
from rq import Queue

from gameplay.models import Outbox, OutboxChannel, OutboxStatus
from gameplay.services.common import post_board, send_message
from localvk import ServerThread
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY
from outbox.ratelimit import token_key
from tests import forkserver
from tests.process_support import shared_database_url
from tests.redis_support import private_redis
from tests.vkbot.delivery_support import (
    GROUP_ID,
    GROUP_TOKEN,
    USER_TOKEN,
    make_game,
    make_vk,
    received,
)

ROOT = Path(__file__).resolve().parents[3]
PLAYERS = [10_001 + n for n in range(300)]
E2E_REDIS_DB = 9
#: The wait for the first worker to get to 100 rows sent fails after this long without progress.
STALL = 40.0
#: The replacements' delivery of the rest, from their first request to their last (seconds).
DELIVERY_BOUND = 40.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and its descendants (rq's work horse runs in a session of its own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo, family = [pid], []
    while todo:
        current = todo.pop()
        family.append(current)
        todo.extend(children.get(current, []))
    for member in family:
        try:
            os.kill(member, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _worker(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return forkserver.Popen(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


@pytest.fixture
def private_redis_url(tmp_path: Path) -> Iterator[str]:
    """A Redis of the test's own (tests/redis_support.py)."""
    with private_redis(tmp_path, E2E_REDIS_DB) as url:
        yield url


def test_1000_messages_with_errors_and_a_killed_worker(
    tmp_path: Path, settings: Any, private_redis_url: str
) -> None:
    settings.OUTBOX_DELIVERY_ENABLED = False  # the job is enqueued below, on the workers' Redis
    redis_url = private_redis_url
    private = redis.Redis.from_url(redis_url)
    queue = Queue(settings.OUTBOX_DELIVERY_QUEUE, connection=private)
    queue.empty()
    private.delete(
        DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY, token_key(GROUP_TOKEN), token_key(USER_TOKEN)
    )
    state = make_vk()
    # 20% errors 6/9/10, some answers lost after VK acted, some slow answers.
    state.faults.configure(
        error_rates={6: 0.07, 9: 0.07, 10: 0.06},
        drop_after_rate=0.03,
        delay=0.25,
        delay_rate=0.4,
        seed=11,
    )
    rng = random.Random(2024)
    with ServerThread(state) as server:
        topics = [state.create_topic("Игра 1").id, state.create_topic("Игра 2").id]
        games = [make_game(topic_id=t) for t in topics]
        expected: Counter[tuple[int, str]] = Counter()
        with transaction.atomic():
            for n in range(400):
                peer = PLAYERS[n % 300]
                text = f"Личное сообщение №{n}"
                send_message(game=games[n % 2], peer_ids=[peer], text=text, kind="private")
                expected[(peer, text)] += 1
            for n in range(560):
                text = f"Рассылка {n % 14}: день {n % 14 + 1} открыт."
                audience = rng.sample(PLAYERS, rng.randint(1, 60))
                send_message(game=games[n % 2], peer_ids=audience, text=text, kind="broadcast")
                expected.update((peer, text) for peer in audience)
            for n in range(40):
                post_board(game=games[n % 2], text=f"Пост №{n} в обсуждении.", kind="post")
        total = Outbox.objects.count()
        assert total == 1000
        queue.enqueue(settings.OUTBOX_DELIVERY_JOB)  # what the commit does (tests/outbox)

        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": shared_database_url(),
            "REDIS_URL": redis_url,
            "VK_API_URL": server.api_url,
            "VK_GROUP_TOKEN": GROUP_TOKEN,
            "VK_USER_TOKEN": USER_TOKEN,
            "VK_GROUP_ID": str(GROUP_ID),
            "OUTBOX_LEASE_SECONDS": "4",
            "OUTBOX_RETRY_BASE_MS": "100",
            "OUTBOX_RETRY_MAX_SECONDS": "2",
            "LOG_LEVEL": "WARNING",
        }
        first = _worker(["rqworker", "vk", "--burst"], env, tmp_path / "rqworker.log")
        try:
            # Until the worker has sent 100 rows and has some in flight: as long as it takes
            # a loaded machine to start it, but not once it has stopped getting on.
            in_flight, seen, moved = 0, (-1, -1), time.monotonic()
            while time.monotonic() - moved < STALL:
                sent = Outbox.objects.filter(status=OutboxStatus.SENT).count()
                in_flight = Outbox.objects.filter(
                    status=OutboxStatus.PENDING,
                    locked_until__gt=timezone.now(),
                    result__isnull=False,
                ).count()
                if sent >= 100 and in_flight:
                    break
                assert first.poll() is None, (tmp_path / "rqworker.log").read_text()[-3000:]
                if (sent, in_flight) != seen:
                    seen, moved = (sent, in_flight), time.monotonic()
                time.sleep(0.02)
            _kill_tree(first.pid)
            first.wait(10)
        finally:
            if first.poll() is None:
                _kill_tree(first.pid)
        assert first.returncode == -signal.SIGKILL
        sent_at_kill = Outbox.objects.filter(status=OutboxStatus.SENT).count()
        assert 100 <= sent_at_kill < total and in_flight > 0, (sent_at_kill, in_flight)
        killed_at = time.monotonic()

        replacements = [
            _worker(
                ["deliver", "--once", "--wait", "15", "--max-seconds", "90"],
                env,
                tmp_path / f"deliver{n}.log",
            )
            for n in range(2)
        ]
        try:
            for n, worker in enumerate(replacements):
                assert worker.wait(100) == 0, (tmp_path / f"deliver{n}.log").read_text()[-3000:]
        finally:
            for worker in replacements:
                if worker.poll() is None:
                    _kill_tree(worker.pid)
        for n in range(len(replacements)):  # each stopped for want of work, not of time
            assert "nothing pending." in (tmp_path / f"deliver{n}.log").read_text()

        statuses = Counter(Outbox.objects.values_list("status", flat=True))
        assert statuses == Counter({OutboxStatus.SENT: total}), statuses
        assert received(server) == expected  # every (row, player) exactly once
        for topic, game in zip(topics, games, strict=True):
            comments = "\n\n".join(c.text for c in state.topic(topic).comments)
            for post in Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD):
                assert comments.count(post.text) == 1
        injected = state.faults.injected
        assert sum(injected.get(f"error_{code}", 0) for code in (6, 9, 10)) >= 5
        assert state.max_requests_per_second("group") <= 20
        assert state.max_requests_per_second("user") <= 3
        # The replacements delivered the rest (the killed worker's rows once their 4 s lease
        # ran out, the retries backing off at most 2 s) at about the pace the limits allow:
        # from their first request to their last, not counting the seconds a loaded machine
        # takes to start them.
        after = [call.monotonic for call in state.calls() if call.monotonic > killed_at]
        span = after[-1] - after[0]
        print(f"the replacements delivered the rest in {span:.1f} s")
        assert span < DELIVERY_BOUND, span
