"""``manage.py replay FILE.json [FILE.json …]``: play rule scenarios (docs/scenario-format.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from gameplay.management.database import DatabaseNotReady, prepare_database
from gameplay.replay import ScenarioError, parse_scenario, play


class Command(BaseCommand):
    help = "Play a scenario file through the game services and print the outcome as JSON."
    #: An offline tool on its own database: Django's system checks (which import the whole
    #: URLconf, the panel and vkbottle with it) add two seconds to every replay and check nothing
    #: a replay uses.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file",
            nargs="+",
            help="scenario JSON file ('-' for standard input); several are played in turn, "
            "one line of JSON each",
        )
        parser.add_argument(
            "--keep", action="store_true", help="keep the replayed game in the database"
        )
        parser.add_argument("--indent", type=int, default=None, help="pretty-print the output")

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[str] = options["file"]
        if paths.count("-") > 1:
            self._fail("standard input ('-') can be read only once")
        indent = options["indent"] if len(paths) == 1 else None
        for path in paths:
            output = self._replay(path, keep=options["keep"])
            self.stdout.write(json.dumps(output, ensure_ascii=False, indent=indent))

    def _replay(self, path: str, *, keep: bool) -> dict[str, Any]:
        """The outcome of the scenario in ``path``; a bad file ends the command (exit 2)."""
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            self._fail(f"cannot read {path}: {getattr(e, 'strerror', None) or e}")
        name = "Сценарий" if path == "-" else f"Сценарий {Path(path).stem}"
        try:
            scenario = parse_scenario(text)
        except ScenarioError as e:
            self._fail(f"{path}: {e}")
        try:
            prepare_database(note=lambda line: sys.stderr.write(f"replay: {line}\n"))
        except DatabaseNotReady as e:
            self._fail(str(e))
        try:
            return play(scenario, name=name[:200], keep=keep)
        except ScenarioError as e:
            self._fail(f"{path}: {e}")

    def _fail(self, message: str) -> NoReturn:
        sys.stderr.write(f"replay: {message}\n")
        sys.exit(2)
