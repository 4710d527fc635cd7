"""``python -m bench.naive_worker``: the naive baseline's delivery process (the benchmark runs
it in place of ``rqworker``). Polls the Outbox every 20 ms and delivers with
:class:`bench.naive.NaiveDrainer` until SIGTERM/SIGINT; sets ``bench:naive:ready`` in Redis
once it is polling."""

from __future__ import annotations

import os
import signal
import sys
import time

READY_KEY = "bench:naive:ready"
POLL = 0.02


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import django_rq
    from django.db import close_old_connections

    from bench.naive import NaiveDrainer

    stopping = {"now": False}

    def stop(signum: int, frame: object) -> None:
        stopping["now"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    redis = django_rq.get_connection("vk")
    with NaiveDrainer() as drainer:
        redis.set(READY_KEY, str(os.getpid()))
        while not stopping["now"]:
            close_old_connections()
            drainer.run(max_seconds=5.0, wait_up_to=0.0, stop=lambda: stopping["now"])
            time.sleep(POLL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
