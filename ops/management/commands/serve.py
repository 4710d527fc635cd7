"""``manage.py serve`` (``make run``): the whole deployment against VK, in one command.

Checks the configuration (the environment's VK community, when VK_GROUP_ID is set: its tokens,
and the Callback API's secret and code in callback mode; PostgreSQL and Redis; each problem is
one line on stderr and exit status 2, with nothing started), migrates, collects the static
files, then runs the web (gunicorn), the workers and the bot under one supervisor
(:mod:`ops.serve`). A process that exits is restarted with back-off; one that exits with
status 2 (a configuration error) stops everything. Ctrl-C or SIGTERM stops it all, the bot
first. Without VK_GROUP_ID the deployment serves the communities connected in the panel; with
none yet, it says where to connect one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config import env
from ops import serve
from ops.supervisor import Supervisor


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Run the deployment against VK: migrate, collectstatic, then the web (gunicorn), the "
        "workers and the bot (long poll) under one supervisor; Ctrl-C stops everything."
    )

    # The configuration is checked first (one line when it cannot work), Django's system
    # checks after it, in handle(); the steps and services skip them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--bind",
            default=None,
            help=f"where the web listens: HOST:PORT or unix:PATH (default: "
            f"$BIND or {serve.DEFAULT_BIND})",
        )
        parser.add_argument(
            "--web-concurrency",
            type=_positive,
            default=None,
            help="gunicorn worker processes (default: $WEB_CONCURRENCY or "
            f"{serve.DEFAULT_WEB_CONCURRENCY})",
        )
        parser.add_argument(
            "--workers",
            type=_positive,
            default=None,
            help="rq workers, each on the default and vk queues with the "
            f"scheduler (default: $RUN_WORKERS or {serve.DEFAULT_WORKERS})",
        )
        parser.add_argument(
            "--callback",
            action="store_true",
            default=None,
            help="VK pushes the events to /vk/callback/ (Callback API): no "
            "long-poll bot (default: $RUN_CALLBACK or off)",
        )
        parser.add_argument(
            "--no-migrate", action="store_true", help="do not run the migrations first"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        bind = serve.parse_bind(options["bind"] or env.get_str("BIND", serve.DEFAULT_BIND))
        callback = options["callback"] or env.get_bool("RUN_CALLBACK", False)
        workers = options["workers"] or env.get_int("RUN_WORKERS", serve.DEFAULT_WORKERS, minimum=1)
        web_concurrency = options["web_concurrency"] or env.get_int(
            "WEB_CONCURRENCY", serve.DEFAULT_WEB_CONCURRENCY, minimum=1
        )
        # Each raises EnvError: one line on stderr and exit status 2 (manage.py), nothing run.
        serve.check_config(settings, callback=callback)
        serve.check_bind(bind)
        serve.check_services(settings)
        self.check()
        plan = serve.ServeOptions(
            project_dir=Path(settings.BASE_DIR),
            bind=bind,
            web_concurrency=int(web_concurrency or serve.DEFAULT_WEB_CONCURRENCY),
            workers=int(workers or serve.DEFAULT_WORKERS),
            callback=callback,
            migrate=not options["no_migrate"],
        )
        supervisor = Supervisor(
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=str(plan.project_dir),
            out=sys.stdout,
            name="run",
            max_restarts=serve.MAX_RESTARTS,
            restart_window=serve.RESTART_WINDOW,
        )
        supervisor.install_signal_handlers()
        status = serve.run(plan, supervisor, settings)
        if status:
            raise SystemExit(status)
