"""One request-rate limiter per VK token, shared by every process through Redis.

A sliding-window log in a Lua script (atomic in Redis): a sorted set per token holds the
moments, by Redis's own clock, of the requests allowed in the last ``window`` seconds; a request
is allowed while fewer than ``limit`` are there. Otherwise the script answers how long until the
oldest leaves the window, and the caller sleeps that long and asks again — the budget is waited
for, never failed. The clock is Redis's (``TIME``), so workers on several hosts agree.

The window is VK's second plus a margin (``settings.VK_RATE_WINDOW_SECONDS``, per token kind):
our moment of asking and VK's moment of counting differ by the network and scheduling jitter.

No Django here (:func:`limiter_for` reads the settings lazily), so a plain process can share a
limiter with the workers.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
import uuid
from typing import Any

import redis

KEY_PREFIX = "vkmafia:ratelimit:"

_SCRIPT = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""

_PEEK = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used < limit then
  return {limit - used, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, math.max(1, tonumber(oldest[2]) + window - now)}
"""

#: A waiting caller asks again this much later than strictly needed (0..JITTER seconds), so
#: that processes waiting for the same slot do not all ask at the same instant.
JITTER = 0.005


def token_key(token: str) -> str:
    """The Redis key of a token's limiter (a hash: the token itself never goes to Redis)."""
    return KEY_PREFIX + hashlib.sha256(token.encode()).hexdigest()[:24]


class RateLimiter:
    """At most ``limit`` requests in any ``window`` seconds, across every process that uses the
    same Redis and ``key``."""

    def __init__(self, client: redis.Redis, key: str, limit: int, window: float = 1.0) -> None:
        if limit < 1:
            raise ValueError("limit must be positive")
        if window <= 0:
            raise ValueError("window must be positive")
        self.client = client
        self.key = key
        self.limit = limit
        self.window = window
        self._script = client.register_script(_SCRIPT)
        self._peek = client.register_script(_PEEK)

    def try_acquire(self) -> float:
        """Take a slot if there is one: 0.0; otherwise the seconds until one frees up."""
        waited_us = self._script(
            keys=[self.key],
            args=[self.limit, int(self.window * 1_000_000), uuid.uuid4().hex],
        )
        return int(waited_us) / 1_000_000

    def free(self) -> tuple[int, float]:
        """How many requests could go out now, taking no slot; when none, also the seconds
        until one frees up (else 0.0)."""
        free, wait_us = self._peek(keys=[self.key], args=[self.limit, int(self.window * 1_000_000)])
        return int(free), int(wait_us) / 1_000_000

    def acquire(self, timeout: float | None = None) -> float:
        """Block until a slot is taken; returns the seconds waited. ``TimeoutError`` if that
        would take longer than ``timeout``."""
        started = time.monotonic()
        while True:
            wait = self.try_acquire()
            if wait <= 0:
                return time.monotonic() - started
            if timeout is not None and time.monotonic() - started + wait > timeout:
                raise TimeoutError(f"no request slot within {timeout} s")
            time.sleep(wait + random.uniform(0, JITTER))

    async def acquire_async(self) -> float:
        """:meth:`acquire` for a coroutine: sleeps without blocking the event loop."""
        started = time.monotonic()
        while True:
            wait = self.try_acquire()
            if wait <= 0:
                return time.monotonic() - started
            await asyncio.sleep(wait + random.uniform(0, JITTER))

    def reset(self) -> None:
        self.client.delete(self.key)


def free_many(limiters: list[RateLimiter]) -> list[tuple[int, float]]:
    """:meth:`RateLimiter.free` of each limiter, asked in one round trip per Redis client."""
    answers: dict[int, tuple[int, float]] = {}
    by_client: dict[int, list[int]] = {}
    for index, limiter in enumerate(limiters):
        by_client.setdefault(id(limiter.client), []).append(index)
    for indexes in by_client.values():
        pipe = limiters[indexes[0]].client.pipeline(transaction=False)
        for index in indexes:
            limiter = limiters[index]
            limiter._peek(
                keys=[limiter.key], args=[limiter.limit, int(limiter.window * 1_000_000)],
                client=pipe,
            )  # fmt: skip
        for index, (free, wait_us) in zip(indexes, pipe.execute(), strict=True):
            answers[index] = (int(free), int(wait_us) / 1_000_000)
    return [answers[index] for index in range(len(limiters))]


def limiter_for(token: str, kind: str, client: redis.Redis | None = None) -> RateLimiter:
    """The shared limiter of a token: ``kind`` "group" (``VK_GROUP_RPS``) or "user"
    (``VK_USER_RPS``), on the delivery queue's Redis unless ``client`` is given."""
    from django.conf import settings

    limits: dict[str, Any] = {"group": settings.VK_GROUP_RPS, "user": settings.VK_USER_RPS}
    if kind not in limits:
        raise ValueError(f"unknown token kind {kind!r}")
    if client is None:
        import django_rq

        client = django_rq.get_connection(settings.OUTBOX_DELIVERY_QUEUE)
    window = float(settings.VK_RATE_WINDOW_SECONDS[kind])
    return RateLimiter(client, token_key(token), int(limits[kind]), window)
