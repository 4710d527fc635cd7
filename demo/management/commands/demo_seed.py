"""``manage.py demo_seed``: set up (or continue) the demo games against the local VK server.

Idempotent; ``manage.py demo`` runs it after starting the local VK server and before the
other processes. See :mod:`demo.seed`.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo import seed as demo_seed
from demo.vk import LocalVkClient, VkCallError
from gameplay.rules import RuleViolation


def _minutes(value: str) -> int:
    number = int(value)
    if not 5 <= number <= 24 * 60:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Set up the demo games (26 players in group 1, 12 in group 2) on the local VK "
        "server, or continue them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--vk-url",
            default=os.environ.get("DEMO_VK_URL", "http://127.0.0.1:8081"),
            help="the local VK server (default: $DEMO_VK_URL or http://127.0.0.1:8081)",
        )
        parser.add_argument("--gm-user", default="gm")
        parser.add_argument("--gm-password", default="gm")
        parser.add_argument(
            "--day-minutes",
            type=_minutes,
            default=5,
            help="length of a day in a new demo game (5-1440, default 5)",
        )
        parser.add_argument(
            "--night-minutes",
            type=_minutes,
            default=5,
            help="length of a night in a new demo game (5-1440, default 5)",
        )
        parser.add_argument(
            "--auto-publish",
            action="store_true",
            help="a new game publishes each night without the GM's review",
        )
        parser.add_argument(
            "--seed", default=None, help="round 1's seed of the deal (default: the server's)"
        )
        parser.add_argument(
            "--new-game", action="store_true", help="end the running demo games and start new ones"
        )
        parser.add_argument(
            "--migrate", action="store_true", help="apply the database migrations first"
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="wait up to this long for the local VK server and Redis",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not django_settings.DEBUG:
            # It creates a superuser with a known password: never on a real site.
            raise CommandError(
                "demo_seed: refused: DEBUG is off (the demo game and its gm/gm superuser are "
                "for a development machine; run it through `make demo`).",
                returncode=2,
            )
        settings = demo_seed.SeedOptions(
            gm_user=options["gm_user"],
            gm_password=options["gm_password"],
            day_minutes=options["day_minutes"],
            night_minutes=options["night_minutes"],
            auto_publish=options["auto_publish"],
            seed=options["seed"],
            new_game=options["new_game"],
        )
        if options["migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("demo_seed: the database is migrated")
        try:
            report = demo_seed.seed(
                settings, LocalVkClient(options["vk_url"]), wait=options["wait"]
            )
        except (demo_seed.SeedError, VkCallError) as exc:
            raise CommandError(f"demo_seed: {exc}") from exc
        except RuleViolation as exc:
            raise CommandError(f"demo_seed: the game refused a step: {exc.reason}") from exc
        for game in report.games:
            where = f"group {game.community.group_id}"
            for note in game.notes:
                self.stdout.write(f"demo_seed: {where}: {note}")
            verb = "created" if game.created else "continues"
            self.stdout.write(
                f"demo_seed: {where}: demo game {verb}: {demo_seed.describe(game.game)}"
            )
