"""``manage.py deliver``: drain the Outbox to VK from the command line (operators, tests).

``--once`` delivers what is due (waiting up to ``--wait`` seconds for retries and for leases
of a dead worker to expire) and exits; ``--forever`` keeps delivering until SIGTERM/SIGINT,
as an alternative to the rq worker. Both can run beside rq workers: rows are leased, and the
rate limiter is shared through Redis. Every row goes out as its community (the environment's,
or one connected in the panel), with that community's tokens.
"""

from __future__ import annotations

import signal
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections, connection

from vkbot.delivery.drain import Drainer, DrainReport


class Command(BaseCommand):
    help = "Deliver pending Outbox rows to VK (batched, rate-limited, retried)."

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--once", action="store_true", help="deliver what is due, then exit")
        mode.add_argument("--forever", action="store_true", help="keep delivering until stopped")
        parser.add_argument(
            "--wait",
            type=float,
            default=10.0,
            help="--once: wait this many seconds at most for rows that fall due soon (10)",
        )
        parser.add_argument(
            "--max-seconds",
            type=float,
            default=600.0,
            help="--once: stop after this many seconds even if rows remain (600)",
        )
        parser.add_argument(
            "--poll",
            type=float,
            default=2.0,
            help="--forever: seconds between two looks when nothing is due (2)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for name in ("wait", "max_seconds", "poll"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must not be negative.")
        stopping = {"now": False}

        def stop(signum: int, frame: object) -> None:
            stopping["now"] = True

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            with Drainer() as drainer:
                if not drainer.channels:
                    raise CommandError(
                        "No VK token is configured (VK_GROUP_TOKEN, VK_USER_TOKEN with "
                        "VK_GROUP_ID) and no community is connected: nothing can be delivered."
                    )
                if options["once"]:
                    report = drainer.run(
                        max_seconds=options["max_seconds"],
                        wait_up_to=options["wait"],
                        stop=lambda: stopping["now"],
                    )
                else:
                    report = self._forever(drainer, options["poll"], lambda: stopping["now"])
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self.stdout.write(self._summary(report))

    def _forever(self, drainer: Drainer, poll: float, stop: Any) -> DrainReport:
        while not stop():
            if not connection.in_atomic_block:  # drop a broken or too old connection
                close_old_connections()
            report = drainer.run(max_seconds=60.0, wait_up_to=poll, stop=stop)
            if stop():
                break
            due = report.next_due_in
            pause = poll if due is None else min(max(due, 0.05), poll)
            deadline = time.monotonic() + pause
            while not stop() and time.monotonic() < deadline:
                time.sleep(min(0.2, pause))
        drainer.report.stopped = "asked to stop"
        return drainer.report

    @staticmethod
    def _summary(report: DrainReport) -> str:
        due = report.next_due_in
        pending = (
            "nothing pending"
            if due is None
            else ("rows are due now" if due <= 0 else f"the next row is due in {due:.1f} s")
        )
        return (
            f"Delivered {report.sent} rows, {report.retried} to retry, {report.failed} failed "
            f"({report.rounds} rounds, {report.requests} VK requests); {pending}."
        )
