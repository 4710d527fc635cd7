"""``manage.py demo`` (``make demo``): the whole project on the embedded default, in one
command — the GM panel, the local VK server with its player page, the bot, a worker with the
scheduler and simulated players, around two demo communities with a game each (26 players in
«Машина времени · демо», 12 in «Классика · демо») and a third community to connect from the
panel. Ctrl-C stops everything; the next run continues the same games (the SQLite file and
the local VK's state file in the data folder). See :mod:`demo.stack`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo.config import DemoLayout
from demo.stack import DemoOptions, run
from ops.probes import free_port
from ops.supervisor import Supervisor


def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise ValueError(value)
    return number


def _minutes(value: str) -> int:
    number = int(value)
    if not 5 <= number <= 24 * 60:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Run the demo: GM panel, local VK with the player page, bot, worker and simulated "
        "players around two communities' games (26 and 12 players) and a third community to "
        "connect (Ctrl-C stops; the next run continues the games)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data-dir",
            default=None,
            help="where the SQLite file and the local VK's state live "
            "(default: .demo in the project)",
        )
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="the address every server listens on (default 127.0.0.1)",
        )
        parser.add_argument(
            "--web-port",
            type=_port,
            default=8000,
            help="the GM panel's port (default 8000; 0: any free port)",
        )
        parser.add_argument(
            "--vk-port",
            type=_port,
            default=8081,
            help="the local VK's port, with the player page (default 8081)",
        )
        parser.add_argument(
            "--redis-port",
            type=_port,
            default=6390,
            help="the Redis stand-in's port (default 6390)",
        )
        parser.add_argument("--gm-user", default="gm")
        parser.add_argument("--gm-password", default="gm")
        parser.add_argument(
            "--day-minutes",
            type=_minutes,
            default=5,
            help="day length of a new demo game (default 5)",
        )
        parser.add_argument(
            "--night-minutes",
            type=_minutes,
            default=5,
            help="night length of a new demo game (default 5)",
        )
        parser.add_argument(
            "--auto-publish",
            action="store_true",
            help="a new game publishes nights without the GM's review",
        )
        parser.add_argument("--seed", default=None, help="the deal's seed of a new game")
        parser.add_argument(
            "--new-game", action="store_true", help="end the running demo games and start new ones"
        )
        parser.add_argument(
            "--no-players", action="store_true", help="do not run the simulated players"
        )
        parser.add_argument(
            "--min-delay",
            type=float,
            default=3.0,
            help="simulated players move at least this many seconds after a prompt (default 3)",
        )
        parser.add_argument(
            "--max-delay", type=float, default=150.0, help="… and at most this many (default 150)"
        )
        parser.add_argument(
            "--players-seed",
            type=int,
            default=None,
            help="seed of the simulated players' randomness",
        )
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="show every log line (rq's routine lines are hidden)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = Path(settings.BASE_DIR)
        data_dir = Path(options["data_dir"] or project / ".demo").resolve()
        host = options["host"]
        layout = DemoLayout(
            data_dir=data_dir,
            host=host,
            web_port=options["web_port"] or free_port(host),
            vk_port=options["vk_port"] or free_port(host),
            redis_port=options["redis_port"] or free_port(host),
        )
        if options["min_delay"] < 0 or options["min_delay"] > options["max_delay"]:
            raise CommandError("--min-delay must be between 0 and --max-delay.")
        demo = DemoOptions(
            layout=layout,
            project_dir=project,
            gm_user=options["gm_user"],
            gm_password=options["gm_password"],
            day_minutes=options["day_minutes"],
            night_minutes=options["night_minutes"],
            auto_publish=options["auto_publish"],
            seed=options["seed"],
            new_game=options["new_game"],
            players=not options["no_players"],
            min_delay=options["min_delay"],
            max_delay=options["max_delay"],
            players_seed=options["players_seed"],
        )
        env = {**os.environ, **layout.env()}
        supervisor = Supervisor(
            env=env, cwd=str(project), out=sys.stdout, verbose=options["verbose"], name="demo"
        )
        supervisor.install_signal_handlers()
        status = run(demo, supervisor)
        if status:
            raise SystemExit(status)
