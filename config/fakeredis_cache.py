"""An in-process Redis stand-in for the embedded default (``REDIS_URL`` unset).

django-rq builds its Redis connections itself and offers no setting for a client class, but a
queue configured with ``"USE_REDIS_CACHE": "<alias>"`` takes the client of that Django cache
(its ``_client`` attribute). :class:`FakeRedisCache` is Django's own Redis cache backend whose
client is a :class:`fakeredis.FakeStrictRedis` on one :class:`fakeredis.FakeServer` per
process, so queues, the cache and every thread of the process see the same data.

The data lives in the memory of one process: a separate ``rqworker`` process does not see it.
Several processes can share a fake Redis by running ``fakeredis.TcpFakeServer`` and pointing
``REDIS_URL`` at it.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import fakeredis
import redis
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

#: The process's fake Redis server; every client made here talks to it.
SERVER = fakeredis.FakeServer()


def fake_redis() -> redis.Redis:
    """A client of this process's fake Redis server (bytes replies, like ``redis.Redis``)."""
    return fakeredis.FakeStrictRedis(server=SERVER)


class _FakeRedisCacheClient(RedisCacheClient):
    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._fake = fake_redis()

    def get_client(self, key: Any = None, *, write: bool = False) -> redis.Redis:
        return self._fake


class FakeRedisCache(RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` on the in-process fake server."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server or "redis://fakeredis", params)
        self._class = _FakeRedisCacheClient

    @cached_property
    def _client(self) -> redis.Redis:
        # Read by django_rq.connection_utils.get_redis_connection for USE_REDIS_CACHE.
        return self._cache.get_client()
