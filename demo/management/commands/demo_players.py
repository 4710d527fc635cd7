"""``manage.py demo_players``: play the demo communities' players on their own.

Talks only to the local VK server (its player page's API), as the players' phones would; a
player a person has taken over on the player page is left alone. Every game community of the
demo (:data:`demo.config.GAME_COMMUNITIES`, or those ``--group-id`` names) is played by its
own set of players, side by side. Runs until SIGINT/SIGTERM.
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

from demo import config
from demo.sim.runner import Pace, Players, SandboxClient


def _seconds(value: str) -> float:
    number = float(value)
    if not 0 <= number <= 3600:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = "Play the demo communities' players (except those a person has taken over)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--vk-url",
            default=os.environ.get("DEMO_VK_URL", "http://127.0.0.1:8081"),
            help="the local VK server (default: $DEMO_VK_URL or http://127.0.0.1:8081)",
        )
        parser.add_argument(
            "--min-delay",
            type=_seconds,
            default=3.0,
            help="seconds at least between a prompt and a move (default 3)",
        )
        parser.add_argument(
            "--max-delay",
            type=_seconds,
            default=150.0,
            help="seconds at most between a prompt and a move (default 150)",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=None,
            help="seed of the players' randomness (default: random)",
        )
        parser.add_argument(
            "--poll",
            type=_seconds,
            default=1.0,
            help="seconds between two reads of the feed (default 1)",
        )
        parser.add_argument(
            "--group-id",
            type=int,
            action="append",
            dest="group_ids",
            default=None,
            metavar="ID",
            help="a community whose players to play (repeatable; default: the demo's game "
            f"communities, {', '.join(str(c.group_id) for c in config.GAME_COMMUNITIES)})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["min_delay"] > options["max_delay"]:
            raise CommandError("--min-delay must not exceed --max-delay.")
        group_ids = options["group_ids"] or [c.group_id for c in config.GAME_COMMUNITIES]
        if any(group_id < 1 for group_id in group_ids):
            raise CommandError("--group-id must be a positive community id.")
        group_ids = list(dict.fromkeys(group_ids))
        pace = Pace(options["min_delay"], options["max_delay"])
        self.stdout.write(
            f"demo players: playing the players of group {', '.join(map(str, group_ids))} "
            f"via {options['vk_url']} "
            f"(moves {pace.min_delay:g}-{pace.max_delay:g} s after a prompt)"
        )
        self.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                self.serve(options["vk_url"], pace, options["seed"], options["poll"], group_ids)
            )

    async def serve(
        self, url: str, pace: Pace, seed: int | None, poll: float, group_ids: list[int]
    ) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        timeout = aiohttp.ClientTimeout(total=15)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            rng = random.Random(seed)
            several = len(group_ids) > 1
            teams = [
                Players(
                    SandboxClient(url, session, group_id=group_id),
                    rng=random.Random(rng.getrandbits(64)) if several else rng,
                    pace=pace,
                    time_zone=settings.TIME_ZONE,
                    label=f"[group {group_id}] " if several else "",
                )
                for group_id in group_ids
            ]
            await asyncio.gather(*(team.run(stop, interval=poll) for team in teams))
        moves = sum(team.moves for team in teams)
        self.stdout.write(f"demo players: stopped after {moves} moves")
