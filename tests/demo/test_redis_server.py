"""The demo's Redis stand-in: a fakeredis TCP server that rq's worker can use, shared by
several processes, stopping promptly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from typing import cast

import pytest
import redis
from rq import Queue, SimpleWorker

from demo.redis_server import RedisStandIn, main
from tests.demo.conftest import PROJECT, free_port

pytestmark = pytest.mark.slow


def test_rq_works_across_clients_and_sigterm_stops_it() -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "demo.redis_server", "--port", str(port)],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert server.stdout is not None
        assert b"listening on" in server.stdout.readline()
        one = redis.Redis(port=port)
        two = redis.Redis(port=port)
        info = one.client_info()  # rq's worker reads its address this way
        assert cast(str, info["addr"]).startswith("127.0.0.1:")
        one.set("k", "v")
        assert two.get("k") == b"v"
        queue = Queue("default", connection=one)
        job = queue.enqueue(len, "abc")
        worker = SimpleWorker([Queue("default", connection=two)], connection=two)
        assert worker.work(burst=True)
        job.refresh()
        assert job.return_value() == 3
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)  # while clients are still connected
        assert server.wait(10) == 0
        assert time.monotonic() - started < 5
    finally:
        if server.poll() is None:
            server.kill()


def test_a_busy_port_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    # A stand-in made in this process holds the port; the second one is the module's main()
    # (the entry point is ``sys.exit(main())``), without the cost of another Python importing
    # fakeredis only to be refused. main() runs in a daemon thread joined with a timeout: were
    # the port taken after all, it would serve (or fail setting its signal handlers off the main
    # thread) rather than hold up the test.
    first = RedisStandIn("127.0.0.1", free_port())
    try:
        port = cast("tuple[str, int]", first.server_address)[1]
        returned: list[int] = []
        second = threading.Thread(
            target=lambda: returned.append(main(["--port", str(port)])), daemon=True
        )
        second.start()
        second.join(10)
        assert not second.is_alive(), "the second stand-in listened on the busy port"
        assert returned == [2]
        assert "cannot listen" in capsys.readouterr().err
    finally:
        first.server_close()
