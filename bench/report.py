"""The benchmark's results: ``bench/results.json`` and the tables printed at the end
(Markdown, so that they can go into bench/README.md as they are): every figure, then the
targets beside them (:mod:`bench.targets`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import targets

PHASE_TITLES = {
    "start": "start: roster, role cards, Day 1 opens",
    "day": "a day: 26 votes, the close, Night 1 opens",
    "night": "a night: 12 actions, the close",
    "publication": "publication: the night's result, Day 2 opens",
}


def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}".replace(",", " ")


def _e2e(results: dict[str, Any], mode: str, games: int) -> dict[str, Any] | None:
    for run in results.get("e2e", []):
        if run["mode"] == mode and run["games"] == games:
            return run
    return None


def table(results: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str, str]] = []
    for phase in results.get("requests", []):
        rows.append(
            (
                f"VK requests — {PHASE_TITLES.get(phase['phase'], phase['phase'])}",
                str(phase["project"]),
                str(phase["naive"]),
                f"lower bound {phase['bound']}",
            )
        )
    for count in results.get("queries", []):
        rows.append(
            (
                f"SQL queries per {count['event']}",
                f"{count['one_game']} (1 game) / {count['many_games']} ({count['games']} games)",
                "—",
                "the baseline differs in delivery only",
            )
        )
    hot = results.get("hot_path")
    if hot:
        rows.append(
            (
                f"SQL queries per vote, a day's {hot['votes']} votes in one batch / one alone",
                f"{hot['burst_kept']:g} / {hot['alone_kept']}",
                "—",
                f"without the unit of work: {hot['burst_unkept']:g} / {hot['alone_unkept']}",
            )
        )
    for games in sorted({run["games"] for run in results.get("e2e", [])}):
        project, naive = _e2e(results, "project", games), _e2e(results, "naive", games)
        if project is None:
            continue
        label = f"{games} game" + ("s at once" if games > 1 else "")
        note = "targets: below" if games >= 100 else ""
        rows.append(
            (
                f"end-to-end events/s, {label} ({project['events']} events)",
                _fmt(project["events_per_second"]),
                _fmt(naive["events_per_second"]) + (" (projected)" if naive["projected"] else "")
                if naive
                else "—",
                note,
            )
        )
        rows.append(
            (
                f"end-to-end time, {label}",
                f"{project['seconds']:.1f} s",
                f"{naive['seconds']:.1f} s" + (" (projected)" if naive["projected"] else "")
                if naive
                else "—",
                f"requests: {project['requests']} vs {naive['requests']}" if naive else "",
            )
        )
    rows += _latency(results.get("latency"))
    rows += _communities(results.get("communities"))
    night = results.get("night_resolution")
    if night:
        rows.append(
            (
                f"night resolution, {night['players']} players (pure rules)",
                f"{night['median_us']:.0f} µs median, {night['p95_us']:.0f} µs p95",
                "—",
                f"{night['runs']} runs",
            )
        )
    texts = results.get("gmtext")
    if texts:
        slowest = max(texts["slots"], key=lambda f: f["slot_ms"])
        rows.append(
            (
                f"worst accepted GM text, {texts['players']} players, one slot (cold)",
                f"{slowest['slot_ms']:.1f} ms ({slowest['slot']}, {slowest['kind']})",
                "—",
                f"slowest message {max(m['ms'] for m in texts['messages']):.1f} ms",
            )
        )
    memory = results.get("memory")
    if memory:
        for process in ("bot", "worker"):
            rows.append(
                (
                    f"peak memory (RSS) of the {process}, e2e with {memory['games']} games",
                    f"{memory['project'][process]:.0f} MB",
                    f"{memory['naive'][process]:.0f} MB" if memory.get("naive") else "—",
                    "",
                )
            )
    header = ("figure", "project", "naive baseline", "note")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n### Targets\n\n" + targets.table(results)


def _latency(run: dict[str, Any] | None) -> list[tuple[str, str, str, str]]:
    if not run:
        return []

    def figure(q: dict[str, float]) -> str:
        return f"{q['p50']:.2f} s p50, {q['p95']:.2f} s p95, {q['max']:.2f} s max"

    title = f"reply latency, {run['probes']} probe players in other games"
    return [
        (f"{title}, idle", figure(run["idle"]), "—", "target < 0.2 s"),
        (
            f"{title}, during {run['games']} games' votes ({run['burst_events']} events)",
            figure(run["burst"]),
            "—",
            f"target p95 < 2 s; the burst took {run['burst_seconds']:.1f} s",
        ),
    ]


def _cpu(run: dict[str, Any]) -> tuple[str, str, str, str] | None:
    """CPU seconds per process of a run, and per event in all."""
    cpu = run.get("cpu_seconds") or {}
    if not cpu or not run["events"]:
        return None
    names = {"postgres": "PostgreSQL", "bench": "bench and local VK"}
    spent = ", ".join(f"{names.get(name, name)} {seconds:.1f}" for name, seconds in cpu.items())
    deployment = sum(seconds for name, seconds in cpu.items() if name != "bench")
    loads = " → ".join(f"{value:g}" for value in run.get("load_average", []))
    return (
        f"{run['communities']} communities × 1 game, {targets.how(run)}: CPU seconds until "
        f"applied and delivered",
        spent,
        "—",
        f"{1000 * deployment / run['events']:.2f} ms per event without the bench"
        + (f"; load average {loads}" if loads else ""),
    )


def _communities(runs: list[dict[str, Any]] | None) -> list[tuple[str, str, str, str]]:
    """The many-communities rows: one runbot, several (one killed), the Callback API."""
    rows: list[tuple[str, str, str, str]] = []
    for run in runs or ():
        title = f"{run['communities']} communities × 1 game, {targets.how(run)}"
        worst, best = run["latency_worst"] or {"p95": 0.0}, run["latency_best"] or {"p95": 0.0}
        ratio = worst["p95"] / best["p95"] if best.get("p95") else 0.0
        once = {True: "yes", False: "NO", None: "unfinished"}[run["exactly_once"]]
        if run["mode"] == "callback":
            memory = "web " + " + ".join(f"{m:.0f}" for m in run["web_peak_rss_mb"]) + " MB"
        elif run.get("runbot_peak_rss_mb"):
            memory = "runbots " + " + ".join(f"{m:.0f}" for m in run["runbot_peak_rss_mb"])
            memory += " MB"
        else:
            memory = f"bot {run['bot_peak_rss_mb']:.0f} MB"
        rows += [
            (
                f"{title}: end-to-end events/s ({run['events']} votes)",
                _fmt(run["events_per_second"]),
                "—",
                f"{run['seconds']:.1f} s; exactly once: {once}"
                + (f"; {run['leases_lost']} leases lost" if run.get("leases_lost") else ""),
            ),
            (
                f"{title}: VK requests per community (median, max)",
                f"{run['requests']['median']:.0f}, {run['requests']['max']:.0f}",
                "—",
                f"lower bound {run['bound']['median']:.0f}, {run['bound']['max']:.0f}"
                + (
                    f"; with each reply within 2 s of its commit "
                    f"{run['bound_timely']['median']:.0f}, {run['bound_timely']['max']:.0f}"
                    if run.get("bound_timely")
                    else ""
                ),
            ),
            (
                f"{title}: reply latency p95, least- / best-served community",
                f"{worst['p95']:.2f} s / {best['p95']:.2f} s",
                "—",
                f"{ratio:.1f}× (target ≤ 2×); all probes "
                f"{run['latency_all']['p50']:.2f} s p50, {run['latency_all']['p95']:.2f} s p95",
            ),
            (
                f"{title}: delivery alone (commit → VK) p95, least- / best-served community",
                f"{run['delivery_worst'].get('p95', 0):.2f} s / "
                f"{run['delivery_best'].get('p95', 0):.2f} s",
                "—",
                f"max {run['delivery_worst'].get('max', 0):.2f} s",
            ),
            (
                f"{title}: peak memory (RSS)",
                memory,
                "—",
                f"worker {run['worker_peak_rss_mb']:.0f} MB",
            ),
        ]
        cpu = _cpu(run)
        if cpu:
            rows.append(cpu)
    return rows


def write(results: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n")
