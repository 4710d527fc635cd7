"""A Redis of a test's own for the worker processes it starts, so that no other worker (a demo,
another test run on the same machine) takes its jobs: a private ``redis-server`` on a free
loopback port when one is installed (CI), else a database of ``REDIS_URL``'s server that the
test names and the project leaves unused (flushed before use)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
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
