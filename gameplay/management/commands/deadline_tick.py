"""``manage.py deadline_tick``: run one deadline tick now, without Redis (operators, cron)."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from gameplay.services.deadlines import deadline_tick


class Command(BaseCommand):
    help = (
        "Close every phase whose deadline passed and send the reminders that are due, once, "
        "and print what was done as JSON. The worker does this by itself every "
        "DEADLINE_TICK_SECONDS; this command is for catching up by hand."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--indent", type=int, default=None, help="pretty-print the output")

    def handle(self, *args: Any, **options: Any) -> None:
        report = deadline_tick()
        output = json.dumps(report.as_dict(), ensure_ascii=False, indent=options["indent"])
        self.stdout.write(output)
        if report.failures:
            sys.exit(1)  # the failures are in the output and the log; let cron notice
