"""Redis for the processes a test starts.

- :func:`private_redis`: a Redis of a test's own for the worker processes it starts, so that no
  other worker (a demo, another test run on the same machine) takes its jobs: a private
  ``redis-server`` on a free loopback port when one is installed (CI), else a database of
  ``REDIS_URL``'s server that the test names and the project leaves unused (flushed before use).
- :func:`shared_redis`: the very Redis the test's own process uses, for processes that must
  share what lives there with it (the VK rate limiters above all)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis


@contextlib.contextmanager
def private_redis(data_dir: Path, fallback_db: int) -> Iterator[str]:
    """The private Redis's URL, for the ``with`` block."""
    binary = shutil.which("redis-server")
    if binary is None:
        parts = urlsplit(os.environ["REDIS_URL"])
        url = urlunsplit(parts._replace(path=f"/{fallback_db}"))
        redis.Redis.from_url(url).flushdb()
        yield url
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(data_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                assert time.monotonic() < deadline, "the private redis-server did not start"
                time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait(10)


@contextlib.contextmanager
def shared_redis() -> Iterator[str]:
    """A ``REDIS_URL`` that reaches the Redis this process uses, for the ``with`` block: the
    test's ``REDIS_URL`` on a real Redis; on the embedded default, this process's in-process
    fakeredis (``config.fakeredis_cache.SERVER``) served over TCP on a loopback port.

    Without it each process a test starts has a fakeredis of its own (docs/operations.md: the
    in-process one is one process's), and with it a rate limiter of its own per VK token:
    together they would send a token more requests than VK allows, a setup no deployment runs
    (``make run`` needs a Redis, ``make demo`` shares its stand-in)."""
    from django.conf import settings

    if settings.REDIS_URL:
        yield settings.REDIS_URL
        return
    from fakeredis import TcpFakeServer

    from config.fakeredis_cache import SERVER

    server = TcpFakeServer(("127.0.0.1", 0))
    server.daemon_threads = True
    server.fake_server = SERVER  # this process's data, not the fresh server's it made
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
    )
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"redis://{host}:{port}/0"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
