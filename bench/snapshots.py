"""The databases every run starts from, built once per ``make bench``:

- ``empty``: migrated, nothing else;
- ``day``: ``games`` 26-player games started, Day 1 open, no vote yet;
- ``night``: the same games after a Day 1 in which everyone voted (a tie: nobody executed),
  Night 1 open, no action yet.

The messages the setup queued (role cards, prompts, announcements) are dropped, not sent:
every run measures only what its own events cause.
"""

from __future__ import annotations

import hashlib
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import django
from django.core.management import call_command
from django.db import connections, transaction

from gameplay import services
from gameplay.models import Actor, Source

from .env import ROOT, Databases
from .games import BenchGame, create_game, day_votes, drop_pending_outbox


def play_day(game: BenchGame) -> None:
    """Everyone votes (a tie), then the GM closes the day: Night 1 opens."""
    with transaction.atomic():
        for voter, target in sorted(day_votes().items()):
            services.vote_submit(
                game_id=game.game_id, voter=voter, target=target, source=Source.BOARD
            )
        services.day_close(game_id=game.game_id, by=Actor.gm("bench"))


def fingerprint(games: int) -> str:
    """What the snapshots depend on: the migrations, the bench's games, their number."""
    digest = hashlib.sha256(f"{games}:{django.get_version()}".encode())
    sources = sorted(ROOT.glob("*/migrations/*.py"))
    sources += [ROOT / "bench" / "games.py", Path(__file__)]
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return "vkmafia-bench " + digest.hexdigest()[:20]


def ensure(databases: Databases, games: int, *, rebuild: bool = False) -> dict[str, float]:
    """The snapshots for ``games`` games: kept from an earlier run when nothing they depend on
    changed (an empty dict is returned then), else built (the timings of the steps)."""
    label = fingerprint(games)
    if not rebuild and set(databases.labels().values()) == {label}:
        return {}
    timings = build(databases, games)
    for kind in databases.SNAPSHOTS:
        databases.label(kind, label)
    return timings


def build(databases: Databases, games: int) -> dict[str, float]:
    """Build the three snapshots; returns how long each step took (seconds)."""
    timings: dict[str, float] = {}
    start = time.monotonic()
    databases.recreate()
    call_command("migrate", verbosity=0, interactive=False)
    databases.snapshot("empty")
    timings["migrate"] = time.monotonic() - start

    start = time.monotonic()
    in_parallel(_create_games, games)
    drop_pending_outbox()
    databases.snapshot("day")
    timings["games"] = time.monotonic() - start

    start = time.monotonic()
    in_parallel(_play_days, games)
    drop_pending_outbox()
    databases.snapshot("night")
    timings["day_1"] = time.monotonic() - start
    return timings


def _create_games(numbers: range) -> None:
    for number in numbers:
        create_game(number)


def _play_days(numbers: range) -> None:
    from .e2e import bench_games

    for game in bench_games(max(numbers))[numbers.start - 1 :]:
        play_day(game)


def in_parallel(work: Callable[[range], None], games: int, processes: int = 2) -> None:
    """``work`` over games 1 … ``games`` split between forked processes (the machine's cores;
    each game is built by one process, its own database connection)."""
    connections.close_all()
    share = -(-games // processes)
    children = []
    for first in range(1, games + 1, share):
        numbers = range(first, min(first + share, games + 1))
        pid = os.fork()
        if pid == 0:  # the child: its own connections, then out without cleanup
            code = 0
            try:
                work(numbers)
            except BaseException:  # noqa: BLE001 - reported through the exit status
                traceback.print_exc()
                code = 1
            finally:
                connections.close_all()
                os._exit(code)
        children.append(pid)
    failed = [pid for pid in children if os.waitpid(pid, 0)[1] != 0]
    if failed:
        raise RuntimeError(f"building the games failed in {len(failed)} process(es)")
