"""outbox.ratelimit, the per-token rate limiter in Redis: it waits instead of failing, and two
processes share one budget (a real Redis with ``REDIS_URL``, else this process's fakeredis
served over TCP, ``tests.redis_support.shared_redis``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import redis

from outbox import ratelimit
from outbox.ratelimit import KEY_PREFIX, RateLimiter, free_many, limiter_for, token_key
from tests import forkserver
from tests.redis_support import shared_redis

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys, time
import redis
from outbox.ratelimit import RateLimiter
url, key, limit, window, count = sys.argv[1:6]
limiter = RateLimiter(redis.Redis.from_url(url), key, int(limit), float(window))
sys.stdout.write("ready\\n"); sys.stdout.flush()
start = float(sys.stdin.readline())
time.sleep(max(0.0, start - time.time()))
spans = []
for _ in range(int(count)):
    before = time.time()
    limiter.acquire(timeout=30)
    spans.append((before, time.time()))
print(json.dumps(spans))
"""


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis several processes can reach."""
    with shared_redis() as url:
        yield url


def test_the_budget_is_waited_for_not_failed(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    limiter = RateLimiter(redis.Redis.from_url(redis_url), "test:rl:wait", limit=3, window=0.3)
    limiter.reset()
    # Whether an acquire slept, not how long it took: a loaded machine may take longer than a
    # sleep's worth of time over a round trip to Redis.
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        time.sleep(seconds)

    # The module's own view of ``time`` (the process's other threads keep theirs).
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(monotonic=time.monotonic, sleep=sleep))
    started = time.monotonic()
    slept = []
    for _ in range(7):
        before = len(sleeps)
        limiter.acquire(timeout=5)
        slept.append(len(sleeps) > before)
    elapsed = time.monotonic() - started
    assert slept[:3] == [False, False, False]  # the budget's first three are taken at once
    assert any(slept[3:])
    assert elapsed >= 0.6  # 7 requests at 3 per 0.3 s need two more windows
    limiter.reset()
    assert [limiter.try_acquire() for _ in range(3)] == [0, 0, 0]
    assert 0 < limiter.try_acquire() <= 0.3  # full: how long until the oldest leaves
    with pytest.raises(TimeoutError):
        limiter.acquire(timeout=0.0)
    limiter.reset()


def test_the_free_requests_are_told_without_taking_one(redis_url: str) -> None:
    limiter = RateLimiter(redis.Redis.from_url(redis_url), "test:rl:free", limit=3, window=0.3)
    limiter.reset()
    assert limiter.free() == (3, 0.0)
    assert limiter.free() == (3, 0.0)  # asking took nothing
    limiter.try_acquire()
    assert limiter.free() == (2, 0.0)
    limiter.try_acquire()
    limiter.try_acquire()
    free, wait = limiter.free()
    assert free == 0 and 0 < wait <= 0.3
    time.sleep(wait + 0.02)
    assert limiter.free()[0] >= 1
    limiter.reset()


def surely_in_one_window(spans: list[tuple[float, float]], window: float) -> int:
    """The most acquisitions that surely fell within one window, each known only to lie between
    the clock's readings before and after it: those that began at or after a start and ended
    less than ``window`` after it."""
    return max(
        sum(1 for before, after in spans if before >= start and after - start < window)
        for start, _ in spans
    )


@pytest.mark.slow
def test_two_processes_share_one_budget(redis_url: str) -> None:
    key = token_key(f"cross-process-{os.getpid()}-{time.time()}")
    limit, window, count = 5, 0.4, 12
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [
        forkserver.Popen(
            [sys.executable, "-c", CHILD, redis_url, key, str(limit), str(window), str(count)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        start = time.time() + 0.2  # both start at the same moment
        outputs = [child.communicate(f"{start}\n", timeout=60)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    spans = sorted(tuple(s) for out in outputs for s in json.loads(out.strip().splitlines()[-1]))
    assert len(spans) == 2 * count
    # Never more than `limit` in any window (a little shorter: the clocks are read around each
    # acquire, in two processes, which a loaded machine may hold up), and the whole run took as
    # long as the budget demands.
    assert surely_in_one_window(spans, window * 0.9) <= limit
    moments = sorted(after for _, after in spans)
    assert moments[-1] - moments[0] >= (2 * count / limit - 1) * window * 0.9
    assert all(json.loads(out.strip().splitlines()[-1]) for out in outputs)
    redis.Redis.from_url(redis_url).delete(key)


def test_each_token_has_its_own_budget_at_vk_s_limit_keyed_by_its_hash(
    redis_url: str, settings: Any
) -> None:
    client = redis.Redis.from_url(redis_url)
    tokens = [f"community-{n}-{os.getpid()}-token" for n in range(3)]
    kinds = ["group", "group", "user"]
    defaults = [
        limiter_for(tok, kind, client=client) for tok, kind in zip(tokens, kinds, strict=True)
    ]
    # VK_GROUP_RPS and VK_USER_RPS in VK's second plus a margin (VK_RATE_WINDOW_SECONDS).
    windows = settings.VK_RATE_WINDOW_SECONDS
    assert [(lim.limit, lim.window) for lim in defaults] == [
        (20, windows["group"]),
        (20, windows["group"]),
        (3, windows["user"]),
    ]
    assert all(lim.window > 1 for lim in defaults)
    # What follows spends a budget and then asks again: with a window of a second, a process
    # starved of CPU in between would find the spent second over. A long window makes the
    # checks independent of the machine's speed; the keys and limits are the same.
    settings.VK_RATE_WINDOW_SECONDS = {"group": 300.0, "user": 300.0}
    group = [limiter_for(token, "group", client=client) for token in tokens[:2]]
    admin = limiter_for(tokens[2], "user", client=client)
    for limiter in (*group, admin):
        limiter.reset()
    try:
        assert [lim.limit for lim in (*group, admin)] == [20, 20, 3]
        assert [lim.key for lim in (*group, admin)] == [lim.key for lim in defaults]
        assert all(tok not in lim.key for lim, tok in zip((*group, admin), tokens, strict=True))
        assert len({lim.key for lim in (*group, admin)}) == 3
        while group[0].try_acquire() == 0:  # one community's token spends its budget
            pass
        assert group[0].free()[0] == 0
        before = group[0].free()[1]
        answers = free_many([*group, admin])
        after = group[0].free()[1]
        assert answers[1:] == [(20, 0.0), (3, 0.0)]
        assert answers[0][0] == 0 and after <= answers[0][1] <= before, (before, answers, after)
        # Another limiter of the same token (another worker) shares its budget.
        assert limiter_for(tokens[0], "group", client=client).try_acquire() > 0
        assert group[1].try_acquire() == 0 and admin.try_acquire() == 0
        stored = {k.decode() for k in cast("list[bytes]", client.keys(KEY_PREFIX + "*"))}
        assert {lim.key for lim in (*group, admin)} <= stored
        assert not any(tok.encode() in k for k in client.keys("*") for tok in tokens)
    finally:
        for limiter in (*group, admin):
            limiter.reset()
