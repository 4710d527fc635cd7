"""``python -m bench`` (``make bench``): every figure of the benchmark, the project beside the
naive baseline, measured in one run. Writes ``bench/results.json`` and prints the table, then
the targets beside the figures (:mod:`bench.targets`).

The games every run starts from are kept as database snapshots (PostgreSQL templates) and
reused while the migrations and the bench's games are unchanged.

Options: ``--games N`` (default 100: the "many games at once" of the end-to-end run and of the
query counts), ``--naive-cap S`` (seconds a naive end-to-end phase may run before its time is
projected; default 15), ``--rebuild`` (build the snapshots even if they could be reused),
``--keep`` (leave the working database behind too), ``--clean`` (drop the snapshots at the
end), ``--only PART`` (repeatable: ``requests``, ``queries``, ``nightres``, ``e2e``,
``latency``, ``communities``, ``gmtext``; default all). ``communities``: ``--games``
communities with one game each (:mod:`bench.communities`); ``gmtext``: the worst GM texts the
panel accepts (:mod:`bench.gmtext`).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .env import (
    ROOT,
    Databases,
    ServiceError,
    check_services,
    services_from_env,
    setup_django,
)

RESULTS = ROOT / "bench" / "results.json"
PARTS = ("requests", "queries", "nightres", "e2e", "latency", "communities", "gmtext")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--naive-cap", type=float, default=15.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--clean", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--only", action="append", choices=PARTS, help="run only these parts")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    try:
        services = services_from_env()
        check_services(services)
    except ServiceError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 2
    setup_django(services)

    from . import (
        communities,
        e2e,
        gmtext,
        latency,
        nightres,
        queries,
        report,
        snapshots,
        vkrequests,
    )

    parts = set(args.only or PARTS)

    started = time.monotonic()
    databases = Databases(services)
    logs = Path(tempfile.mkdtemp(prefix="vkmafia-bench-"))
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "games": args.games,
        "logs": str(logs),
    }

    def step(title: str) -> None:
        print(f"bench: {title} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    try:
        step(f"the snapshots of {args.games} games (and {latency.PROBES} probe games)")
        built = snapshots.ensure(databases, args.games + latency.PROBES, rebuild=args.rebuild)
        results["setup_seconds"] = {k: round(v, 1) for k, v in built.items()} or "reused"
        if "requests" in parts:
            step("VK requests per phase")
            results["requests"] = [r.as_dict() for r in vkrequests.measure(services, databases)]
        if "queries" in parts:
            step("SQL queries per event")
            results["queries"] = [q.as_dict() for q in queries.measure(databases, args.games)]
            results["hot_path"] = queries.hot_path(databases).as_dict()
        if "nightres" in parts:
            step("night resolution")
            results["night_resolution"] = nightres.measure().as_dict()
        if "gmtext" in parts:
            step("the GM texts' worst case")
            results["gmtext"] = gmtext.measure().as_dict()
        runs: list[e2e.PhaseRun] = []
        for mode in ("project", "naive") if "e2e" in parts else ():
            for games in sorted({1, args.games}):
                for phase in ("day", "night"):
                    step(f"end to end: {mode}, {games} game(s), {phase}")
                    runs.append(
                        e2e.Run(
                            services,
                            databases,
                            logs,
                            mode=mode,
                            phase=phase,
                            games=games,
                            snapshot_games=args.games,
                            cap_seconds=args.naive_cap if mode == "naive" else None,
                        ).execute()
                    )
        if runs:
            results["e2e_phases"] = [r.as_dict() for r in runs]
            results["e2e"] = e2e.combine(runs)
            results["memory"] = e2e.memory(runs, args.games)
        if "latency" in parts:
            step(f"reply latency: {latency.PROBES} probes, idle and during {args.games} games")
            results["latency"] = latency.measure(services, databases, logs, args.games).as_dict()
        if "communities" in parts:
            step(
                f"{args.games} communities × 1 game: one runbot, {communities.RUNBOTS} runbots "
                f"(then one killed mid-burst), the Callback API"
            )
            results["communities"] = [
                r.as_dict() for r in communities.measure(services, databases, logs, args.games)
            ]
    except Exception as error:
        print(f"bench: failed: {error}\n(process logs in {logs})", file=sys.stderr)
        raise
    finally:
        if args.clean:
            databases.drop_all()
        elif not args.keep:
            databases.drop_working()
    results["seconds"] = round(time.monotonic() - started, 1)
    report.write(results, args.out)
    print(report.table(results))
    print(f"\n{results['seconds']:.0f} s; results in {args.out}")
    problems = [p for run in results.get("e2e_phases", []) for p in run["problems"]]
    problems += results.get("latency", {}).get("problems", [])
    problems += [p for run in results.get("communities", []) for p in run["problems"]]
    if problems:
        print("bench: delivery problems:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
