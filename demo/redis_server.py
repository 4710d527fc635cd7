"""``python -m demo.redis_server --port N``: the Redis stand-in the demo's processes share.

fakeredis's :class:`~fakeredis.TcpFakeServer` serves the Redis protocol on a loopback port
from memory (no persistence: the database is the source of truth, and the worker schedules
the deadline tick again on start). Two adjustments make it fit for rq:

- ``CLIENT INFO`` / ``CLIENT LIST`` must show ``addr=host:port``; fakeredis 2.41 prints the
  Python tuple (``addr=('127.0.0.1', 40752)``), which redis-py cannot parse, and rq's worker
  reads its own address at start;
- connection threads are daemons, so the server exits on SIGTERM even while a client (a
  worker being killed) still holds a connection.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any, cast

from fakeredis import TcpFakeServer
from fakeredis._clients._tcp_server import TCPFakeRequestHandler


def _address(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) >= 2:
        return f"{value[0]}:{value[1]}"
    return value


class RequestHandler(TCPFakeRequestHandler):
    def setup(self) -> None:
        super().setup()
        info = self.current_client.get_socket()._client_info
        for key in ("addr", "laddr"):
            info[key] = _address(info.get(key))


class RedisStandIn(TcpFakeServer):
    daemon_threads = True

    def __init__(self, host: str, port: int) -> None:
        super().__init__((host, port))
        self.RequestHandlerClass = RequestHandler
        self.daemon_threads = True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m demo.redis_server", description="A Redis stand-in (fakeredis) on TCP."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6390)
    args = parser.parse_args(argv)
    try:
        server = RedisStandIn(args.host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever() to return: call it from another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = cast("tuple[str, int]", server.server_address[:2])  # a TCP server's
    print(f"Redis stand-in (fakeredis) listening on redis://{host}:{port}/0", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    print("Redis stand-in stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
