"""``manage.py demo_players``: play the demo community's players on their own.

Talks only to the local VK server (its player page's API), as the players' phones would; a
player a person has taken over on the player page is left alone. Runs until SIGINT/SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from typing import Any

import aiohttp
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo.sim.runner import Pace, Players, SandboxClient


def _seconds(value: str) -> float:
    number = float(value)
    if not 0 <= number <= 3600:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = "Play the demo community's players (except those a person has taken over)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--vk-url",
            default=os.environ.get("DEMO_VK_URL", "http://127.0.0.1:8081"),
            help="the local VK server (default: $DEMO_VK_URL or http://127.0.0.1:8081)",
        )
        parser.add_argument("--min-delay", type=_seconds, default=3.0,
                            help="seconds at least between a prompt and a move (default 3)")
        parser.add_argument("--max-delay", type=_seconds, default=150.0,
                            help="seconds at most between a prompt and a move (default 150)")
        parser.add_argument("--seed", type=int, default=None,
                            help="seed of the players' randomness (default: random)")
        parser.add_argument("--poll", type=_seconds, default=1.0,
                            help="seconds between two reads of the feed (default 1)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["min_delay"] > options["max_delay"]:
            raise CommandError("--min-delay must not exceed --max-delay.")
        pace = Pace(options["min_delay"], options["max_delay"])
        self.stdout.write(
            f"demo players: playing the community's players via {options['vk_url']} "
            f"(moves {pace.min_delay:g}-{pace.max_delay:g} s after a prompt)"
        )
        self.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.serve(options["vk_url"], pace, options["seed"], options["poll"]))

    async def serve(self, url: str, pace: Pace, seed: int | None, poll: float) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        timeout = aiohttp.ClientTimeout(total=15)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            players = Players(
                SandboxClient(url, session),
                rng=random.Random(seed),
                pace=pace,
                time_zone=settings.TIME_ZONE,
            )
            await players.run(stop, interval=poll)
        self.stdout.write(f"demo players: stopped after {players.moves} moves")
