"""``manage.py verify``: check a finished game's deal from what the board published.

The whole chain (the form the end-of-game post prints)::

    manage.py verify --round 1:COMMITMENT:SEED [--round 2:COMMITMENT:SEED …] \\
        --roster VK_ID,VK_ID,… [--deal DEAL_HASH] [--mafia 6 --civilian 17 …]

checks each round's commitment against its revealed seed (rounds 1, 2, … in order), recomputes
the deal from the last round's seed and the roster (gameplay/rules/deal.py documents the
algorithm), prints it and compares its hash with the one posted at the start. A forged or
broken chain, or bad arguments, get one English line on stderr and exit status 2; a deal that
does not match the hash exits 1.

A game dealt before rounds existed (``sha256-stream-v1``) is checked with ``verify SEED
COMMITMENT`` and the counts.

``verify --post FILE`` (``-`` for standard input) reads all of that from the end-of-game post
itself, copied from the board into a file: its «Раунд N: хеш …, зерно …» lines, «VK id по
местам», «Хеш, опубликованный на старте» and «Состав» (the role counts). This is what the
players' page (docs/players.md) tells players to run: the post holds facts, not a command.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from gameplay.rules import ChainError, RevealedRound, RoleCounts, RuleViolation, deal, verify_chain
from gameplay.rules.deal import Deal


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"verify: {message}\n")
    sys.exit(2)


def _round(text: str) -> RevealedRound:
    parts = text.split(":", 2)
    if len(parts) != 3 or not parts[0].strip().isdigit() or not parts[2]:
        _fail(f"--round takes NUMBER:COMMITMENT:SEED, got {text!r}")
    return RevealedRound(int(parts[0]), parts[1].strip(), parts[2])


def _roster(text: str) -> list[int]:
    ids = [p.strip() for p in text.split(",")]
    if not ids or not all(p.isdigit() for p in ids):
        _fail("--roster takes the players' VK ids separated by commas")
    return [int(p) for p in ids]


#: The post's lines (templates/messages/board/game_over.txt) that carry the deal's facts.
_POST_ROUND = re.compile(r"^Раунд (\d+): хеш ([0-9a-f]{64}), зерно (\S+)$", re.M)
_POST_ROSTER = re.compile(r"^VK id по местам: ([\d,]+)$", re.M)
_POST_DEAL = re.compile(r"^Хеш, опубликованный на старте: ([0-9a-f]{64})$", re.M)
_POST_SEED = re.compile(r"^Зерно раздачи: (\S+)$", re.M)
_POST_COUNTS = re.compile(r"^Состав: (.+)$", re.M)
#: The counts as the post names them («мафия — 6, …, мирный житель — 17»: the roles' names,
#: which every theme keeps, gameplay/themes.py); «мирные жители» is how older posts read.
POST_COUNT_NAMES = {
    "мафия": "mafia",
    "комиссар": "commissar",
    "доктор": "doctor",
    "маньяк": "maniac",
    "мирный житель": "civilian",
    "мирные жители": "civilian",
}


def _post_counts(text: str) -> dict[str, int]:
    m = _POST_COUNTS.search(text)
    if not m:
        _fail("the post has no «Состав: …» line (the role counts)")
    counts = {}
    for part in m.group(1).split(","):
        name, _, number = part.strip().rpartition(" — ")
        if name not in POST_COUNT_NAMES or not number.isdigit():
            _fail(f"cannot read the role counts in the post: {m.group(1)!r}")
        counts[POST_COUNT_NAMES[name]] = int(number)
    return counts


def read_post(path: str) -> dict[str, Any]:
    """The verify options an end-of-game post holds (``-``: standard input)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        _fail(f"cannot read the post from {path}: {e}")
    options: dict[str, Any] = {"seed": None, "commitment": None, "rounds": [], "roster": None}
    options.update(_post_counts(text))
    deal_hash = _POST_DEAL.search(text)
    if not deal_hash:
        _fail("the post has no «Хеш, опубликованный на старте: …» line")
    rounds = _POST_ROUND.findall(text)
    if not rounds:
        seed = _POST_SEED.search(text)
        if not seed:
            _fail("the post has neither «Раунд N: …» lines nor «Зерно раздачи: …»")
        options.update(seed=seed.group(1), commitment=deal_hash.group(1))
        return options
    roster = _POST_ROSTER.search(text)
    if not roster:
        _fail("the post has no «VK id по местам: …» line (a deal set by hand cannot be checked)")
    options.update(
        rounds=[f"{n}:{c}:{s}" for n, c, s in rounds],
        roster=roster.group(1),
        deal=deal_hash.group(1),
    )
    return options


class Command(BaseCommand):
    help = "Check a game's chain of deal rounds and recompute its deal from the revealed seeds."
    #: Pure arithmetic on its arguments: no system check (they import the URLconf) is needed.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("seed", nargs="?", help="a v1 game: the seed revealed at the end")
        parser.add_argument(
            "commitment", nargs="?", help="a v1 game: the SHA-256 hash published at the start"
        )
        parser.add_argument(
            "--round",
            action="append",
            default=[],
            dest="rounds",
            metavar="N:COMMITMENT:SEED",
            help="a round as revealed at the end (repeat for every round, 1 first)",
        )
        parser.add_argument("--roster", help="the players' VK ids, by seat, comma-separated")
        parser.add_argument(
            "--post",
            metavar="FILE",
            help="read everything from the end-of-game post saved to FILE (- for stdin)",
        )
        parser.add_argument("--deal", help="the deal's hash published at the start")
        defaults = RoleCounts()
        for role in ("mafia", "commissar", "doctor", "maniac", "civilian"):
            parser.add_argument(
                f"--{role}",
                type=int,
                default=getattr(defaults, role),
                help=f"number of {role} roles (default {getattr(defaults, role)})",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["post"]:
            if options["rounds"] or options["roster"] or options["seed"] or options["deal"]:
                _fail("--post reads everything from the post: give no other arguments")
            options.update(read_post(options["post"]))
        counts = RoleCounts(**{r: options[r] for r in RoleCounts().as_dict()})
        if options["rounds"] or options["roster"]:
            self._chain(options, counts)
        else:
            self._legacy(options, counts)

    def _chain(self, options: dict[str, Any], counts: RoleCounts) -> None:
        if options["seed"] or options["commitment"]:
            _fail("give either --round/--roster (a chain of rounds) or SEED COMMITMENT, not both")
        if not options["rounds"] or not options["roster"]:
            _fail("a chain needs every --round and the --roster")
        rounds = [_round(r) for r in options["rounds"]]
        roster = _roster(options["roster"])
        if roster != sorted(roster):
            _fail("the roster lists VK ids by seat, in ascending order")
        try:
            result = verify_chain(rounds, counts, roster)
        except ChainError as e:
            _fail(str(e))
        except RuleViolation as e:
            _fail(f"impossible role counts or roster: {e.reason}")
        for r in rounds:
            self.stdout.write(f"round {r.number}: OK, the seed matches its commitment")
        self._print(result, roster)
        published = options["deal"]
        if published is None:
            self.stdout.write(
                f"OK: the chain of {len(rounds)} round(s) holds; the deal above comes from "
                f"round {rounds[-1].number}'s seed and the roster (hash {result.commitment})."
            )
            return
        self._compare(result, published)

    def _legacy(self, options: dict[str, Any], counts: RoleCounts) -> None:
        if not options["seed"] or not options["commitment"]:
            _fail("give SEED COMMITMENT, or the chain: --round N:COMMITMENT:SEED … --roster IDS")
        try:
            result = deal(options["seed"], counts)
        except RuleViolation as e:
            _fail(f"impossible role counts: {e.reason}")
        self._print(result, None)
        self._compare(result, options["commitment"])

    def _print(self, result: Deal, roster: list[int] | None) -> None:
        items = result.item_by_seat
        for seat, role in enumerate(result.roles, start=1):
            who = f"  {roster[seat - 1]}" if roster else ""
            item = f"  {items[seat].value}" if seat in items else ""
            self.stdout.write(f"{seat:>3}{who}  {role.value}{item}")
        self.stdout.write(f"item draws: {len(result.draws)}")

    def _compare(self, result: Deal, published: str) -> None:
        if result.commitment == published.strip().lower():
            self.stdout.write("OK: the deal matches the published commitment.")
            return
        self.stdout.write(f"MISMATCH: this seed and these counts give {result.commitment}.")
        sys.exit(1)
