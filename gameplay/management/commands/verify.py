"""``manage.py verify SEED COMMITMENT``: check a finished game's deal from its published seed.

Recomputes the deal (gameplay/rules/deal.py documents the algorithm) from the seed and the role
counts, prints it, and compares its SHA-256 commitment with the one published at the start.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from gameplay.rules import RoleCounts, RuleViolation, deal


class Command(BaseCommand):
    help = "Recompute a game's deal from its revealed seed and check the published commitment."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("seed", help="the seed revealed at the end of the game")
        parser.add_argument("commitment", help="the SHA-256 hash published at the start")
        defaults = RoleCounts()
        for role in ("mafia", "commissar", "doctor", "maniac", "civilian"):
            parser.add_argument(
                f"--{role}", type=int, default=getattr(defaults, role),
                help=f"number of {role} roles (default {getattr(defaults, role)})",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        counts = RoleCounts(**{r: options[r] for r in RoleCounts().as_dict()})
        try:
            result = deal(options["seed"], counts)
        except RuleViolation as e:
            sys.stderr.write(f"verify: impossible role counts: {e.reason}\n")
            sys.exit(2)
        items = result.item_by_seat
        for seat, role in enumerate(result.roles, start=1):
            item = f"  {items[seat].value}" if seat in items else ""
            self.stdout.write(f"{seat:>3}  {role.value}{item}")
        self.stdout.write(f"item draws: {len(result.draws)}")
        if result.commitment == options["commitment"].strip().lower():
            self.stdout.write("OK: the deal matches the published commitment.")
            return
        self.stdout.write(f"MISMATCH: this seed and these counts give {result.commitment}.")
        sys.exit(1)
