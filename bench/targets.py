"""The scale-out targets (issue 26) beside the run's figures: one row per figure with the
value measured, the target, whether it is met, and for a figure that is not, the reason
measured in the same run — where the time goes (CPU seconds per process and per event, SQL
statements per event, VK requests beside their bound) — and what it would take, derived from
those numbers. Nothing here is a verdict of its own: every cell comes from ``results``.

What the CPU allows is :class:`bench.cpu.CpuBudget`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cpu import CpuBudget, whole

#: The targets (issue 26).
EVENTS_PER_SECOND = 1000.0
QUERIES_PER_EVENT = 8
REQUESTS_OVER_BOUND = 2.0
REPLY_P95_SECONDS = 2.0


@dataclass
class Target:
    figure: str
    measured: str
    target: str
    met: bool | None  # None: not measured in this run
    reason: str = ""
    would_take: str = ""

    def cells(self) -> tuple[str, ...]:
        met = {True: "met", False: "**NOT met**", None: "not measured (or not all)"}[self.met]
        return (self.figure, self.measured, self.target, met, self.reason or "—",
                self.would_take or "—")  # fmt: skip


def _one_community(results: dict[str, Any]) -> tuple[Target, float | None]:
    games = results.get("games", 100)
    figure = f"{games} games in one community, end to end (events/s)"
    target = f"≥ {whole(EVENTS_PER_SECOND)}"
    run = next(
        (r for r in results.get("e2e", []) if r["mode"] == "project" and r["games"] == games),
        None,
    )
    if run is None:
        return Target(figure, "not in this run (--only e2e)", target, None), None
    measured = float(run["events_per_second"])
    row = Target(figure, f"{whole(measured)} ({run['events']} events, {run['seconds']:.1f} s)",
                 target, measured >= EVENTS_PER_SECOND)  # fmt: skip
    if not row.met:
        phases = [p for p in results.get("e2e_phases", [])
                  if p["mode"] == "project" and p["games"] == games]  # fmt: skip
        cpu: dict[str, float] = {}
        for phase in phases:
            for name, spent in phase.get("cpu_seconds", {}).items():
                cpu[name] = cpu.get(name, 0.0) + spent
        cores = int(results.get("machine", {}).get("cpus") or 1)
        if cpu:
            budget = CpuBudget.of(cpu, run["events"], run["seconds"], cores)
            load = [v for p in phases for v in p.get("load_average", [])]
            row.reason = budget.reason(cores, load[:1] + load[-1:])
            row.would_take = budget.would_take(EVENTS_PER_SECOND, measured, cores)
    return row, measured


def _statements(counts: dict[str, int], top: int = 4) -> str:
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{what} ×{n}" for what, n in ordered[:top])


def _queries(results: dict[str, Any]) -> Target | None:
    counts = {c["event"]: c for c in results.get("queries", [])}
    figure = "SQL queries per vote / per night action"
    target = f"≤ {QUERIES_PER_EVENT}"
    if not counts:
        return Target(figure, "not in this run (--only queries)", target, None)
    vote = next(c for e, c in counts.items() if e.startswith("vote"))
    action = next(c for e, c in counts.items() if e.startswith("night"))
    worst = {name: max(c["one_game"], c["many_games"]) for name, c in
             (("vote", vote), ("night action", action))}  # fmt: skip
    row = Target(figure, f"{worst['vote']} / {worst['night action']}", target,
                 max(worst.values()) <= QUERIES_PER_EVENT)  # fmt: skip
    if row.met:
        return row
    reasons, needs = [], []
    for name, count in (("vote", vote), ("night action", action)):
        kinds = count.get("statements") or {}
        verbs: dict[str, int] = {}
        for what, n in kinds.items():
            verbs[what.split()[0]] = verbs.get(what.split()[0], 0) + n
        reasons.append(f"{name}: " + ", ".join(f"{n} {v}" for v, n in sorted(verbs.items())))
        if worst[name] > QUERIES_PER_EVENT:
            needs.append(f"{worst[name] - QUERIES_PER_EVENT} fewer per {name} (most: "
                         f"{_statements(kinds)})")  # fmt: skip
    hot = results.get("hot_path")
    if hot:
        reasons.append(f"a day's {hot['votes']} votes in one batch: {hot['burst_kept']:g} per vote")
    row.reason = "; ".join(reasons)
    row.would_take = "; ".join(needs)
    return row


def how(run: dict[str, Any]) -> str:
    if run["mode"] == "callback":
        return f"Callback API, {len(run['web_peak_rss_mb'])} web processes"
    runbots = run.get("runbots") or 1
    how = "one runbot" if runbots == 1 else f"{runbots} runbots"
    return how + (", one killed mid-burst" if run.get("killed") else "")


def _communities(run: dict[str, Any], reference: float | None, cores: int) -> list[Target]:
    title = f"{run['communities']} communities × 1 game, {how(run)}"
    if run.get("killed"):  # its throughput and latency include the handover: the kill's rows
        kill = run.get("kill") or {}
        if kill.get("killed"):
            return _kill(title, run, kill)
        return [Target(f"{title}: served again after the kill", "no kill (the run ended "
                       "before a third of its events)", "a kill", None)]  # fmt: skip
    rows: list[Target] = []
    # events/s: at least one community's figure of this run (or its target).
    measured = float(run["events_per_second"])
    if reference is not None:
        goal, target = reference, f"≥ {whole(reference)} (one community, this run)"
    else:
        goal, target = EVENTS_PER_SECOND, f"≥ {whole(EVENTS_PER_SECOND)} (one community's target)"
    row = Target(f"{title}: events/s", f"{whole(measured)} ({run['events']} votes, "
                 f"{run['seconds']:.1f} s)", target, measured >= goal)  # fmt: skip
    cpu = run.get("cpu_seconds") or {}
    lost = _leases_lost(run)
    if not row.met and cpu:
        budget = CpuBudget.of(cpu, run["events"], run["seconds"], cores)
        row.reason = budget.reason(cores, run.get("load_average", [])) + lost
        row.would_take = budget.would_take(goal, measured, cores)
        if lost:
            row.would_take += (
                f"; no lease lost while applying ({run['leases_lost']} long polls stopped "
                f"and their batches polled again here)"
            )
    rows.append(row)
    # VK requests per community beside the bound.
    ratio = float(run.get("requests_over_bound") or 0.0)
    requests, bound = run["requests"], run["bound"]
    row = Target(
        f"{title}: VK requests per community",
        f"{requests['median']:.0f} median, {requests['max']:.0f} max (bound "
        f"{bound['median']:.0f}); {ratio:.1f}× the bound at most",
        f"≤ {REQUESTS_OVER_BOUND:g}× the bound",
        ratio <= REQUESTS_OVER_BOUND,
    )
    worst_community = run.get("requests_worst") or {}
    if not row.met and worst_community:
        made = int(worst_community["requests"])
        methods = ", ".join(f"{m} {n}" for m, n in worst_community["methods"].items())
        rows_there = int(worst_community["rows"])
        per_request = rows_there / made if made else 0.0
        row.reason = (
            f"community {worst_community['community']}, the furthest over its bound: {made} "
            f"requests ({methods}) for {rows_there} Outbox rows, {per_request:.1f} rows per "
            f"request, bound {worst_community['bound']}; the median community "
            f"{requests['median']:.0f}"
        )
        allowed = REQUESTS_OVER_BOUND * int(worst_community["bound"])
        row.would_take = (
            f"≤ {allowed:.0f} requests there: ≥ {rows_there / allowed:.1f} rows per request "
            f"(now {per_request:.1f})"
            if allowed
            else "—"
        )
        timely = worst_community.get("bound_timely")
        if timely is not None and int(timely) > int(worst_community["bound"]):
            row.reason += (
                f"; its private replies, committed over the burst, need ≥ {int(timely)} "
                f"requests in all to go out within {REPLY_P95_SECONDS:g} s of their commit "
                f"(the bound under the reply target; {made / int(timely):.1f}× that)"
            )
            if allowed < int(timely):
                row.would_take += (
                    f"; not together with reply p95 < {REPLY_P95_SECONDS:g} s for these "
                    f"replies: holding them to share requests would break that target"
                )
    rows.append(row)
    # Reply p95 during the burst.
    latency, worst = run.get("latency_all") or {}, run.get("latency_worst") or {}
    p95 = float(latency.get("p95", 0.0))
    row = Target(
        f"{title}: reply p95 during the burst",
        f"{p95:.2f} s (least-served community {float(worst.get('p95', 0.0)):.2f} s, "
        f"{latency.get('n', 0)} probes)",
        f"< {REPLY_P95_SECONDS:g} s",
        bool(latency.get("n")) and p95 < REPLY_P95_SECONDS,
    )
    if not row.met:
        delivery = float((run.get("delivery_worst") or {}).get("p95", 0.0))
        row.reason = (
            f"delivery alone (commit → VK) p95 {delivery:.2f} s in the least-served "
            f"community; the rest, about {max(0.0, p95 - delivery):.1f} s, waiting to be "
            f"applied: the burst applied at {whole(measured)} events/s"
        ) + lost
        wait = max(0.0, p95 - delivery)
        if delivery >= REPLY_P95_SECONDS / 2:
            # The delivery takes half the target or more: both parts must shrink, each to
            # about half of it.
            half = REPLY_P95_SECONDS / 2
            row.would_take = (
                f"the delivery alone takes {delivery:.2f} s of the {REPLY_P95_SECONDS:g} s at "
                f"p95 in the least-served community: its rounds within about {half:g} s, and "
                f"the {wait:.1f} s of waiting to be applied within {half:g} s as well (the "
                f"events ahead of a reply applied at about {whole(measured * wait / half)} "
                f"events/s instead of {whole(measured)})"
            )
        else:
            room = REPLY_P95_SECONDS - delivery
            row.would_take = (
                f"the events ahead of a reply applied within {room:.1f} s instead of "
                f"{wait:.1f} s: about {whole(measured * wait / room)} events/s instead of "
                f"{whole(measured)}"
            )
    rows.append(row)
    return rows


def _leases_lost(run: dict[str, Any]) -> str:
    lost = int(run.get("leases_lost") or 0)
    if not lost:
        return ""
    return (
        f"; {lost} long polls stopped on a lease lost (their batch refused: the lease expired "
        f"unrenewed), each then polled again"
    )


def _kill(title: str, run: dict[str, Any], kill: dict[str, Any]) -> list[Target]:
    served, answered = kill["served_again"], kill["answered"]
    bound = float(kill["bound_seconds"])
    met = kill["unserved"] == 0 and float(served["max"]) <= bound
    row = Target(
        f"{title}: its {kill['communities']} communities served again after the kill "
        f"({kill['applied_before']} of {kill['events']} events applied before it)",
        f"next event applied {served['max']:.1f} s max ({served['p50']:.1f} s p50); reply "
        f"delivered {answered['max']:.1f} s max"
        + (f"; {kill['unserved']} never served" if kill["unserved"] else ""),
        f"≤ {bound:g} s (lease {kill['ttl_seconds']:g} s + renewal {kill['renew_seconds']:g} s)",
        met,
    )
    left, claimed = kill.get("lease_left") or {}, kill.get("claimed") or {}
    if not met and left and claimed:
        renew = float(kill["renew_seconds"])
        after_claim = float(served["max"]) - float(claimed["max"])
        late_claim = float(claimed["max"]) - max(0.0, float(left["max"]))
        expiry = float(left["max"])
        expired = (
            f"had expired {-expiry:.1f} s before the kill (its renewals late)"
            if expiry < 0
            else f"expired {expiry:.1f} s after the kill at the latest"
        )
        row.reason = (
            f"the killed runbot's leases {expired}; the survivors claimed them "
            f"{claimed['p50']:.1f} s (p50) to {claimed['max']:.1f} s after the kill, "
            f"{late_claim:.1f} s after the expiry, where their renewal rounds (every "
            f"{renew:g} s) would claim within {renew:g} s; the first event applied ≤ "
            f"{after_claim:.1f} s after the last claim" + _leases_lost(run)
        )
        parts = {
            f"the survivors' claim ({late_claim:.1f} s after the expiry, ≤ {renew:g} s by the "
            f"terms)": late_claim - renew,
            f"the first event after the claim ({after_claim:.1f} s)": after_claim,
        }
        slowest = max(parts, key=parts.__getitem__)
        row.would_take = (
            f"{float(served['max']) - bound:.1f} s less, most of it in {slowest}: the "
            f"survivors' renewal rounds on time while they apply"
            if slowest.startswith("the survivors")
            else f"{float(served['max']) - bound:.1f} s less, most of it in {slowest}"
        )
    once = run.get("exactly_once")
    exactly = Target(
        f"{title}: exactly once through the kill",
        {True: "yes", False: "NO", None: "unfinished"}[once],
        "yes: no event applied twice, no reply sent twice or lost",
        once is True,
        reason="; ".join(run.get("problems", [])[:3]) if once is not True else "",
    )
    return [row, exactly]


def _exactly_once(results: dict[str, Any]) -> Target:
    runs: list[tuple[str, bool | None]] = []
    for phase in results.get("e2e_phases", []):
        if not phase.get("projected"):
            runs.append((f"e2e {phase['mode']} {phase['games']} {phase['phase']}",
                         phase["exactly_once"]))  # fmt: skip
    if results.get("latency"):
        runs.append(("latency", results["latency"]["exactly_once"]))
    for run in results.get("communities", []):
        runs.append((how(run), run["exactly_once"]))
    failed = [name for name, once in runs if once is False]
    unfinished = [name for name, once in runs if once is None]
    checked = len(runs) - len(unfinished)
    measured = f"yes in {checked} of {len(runs)} runs" if not failed else f"NO: {', '.join(failed)}"
    if unfinished:
        measured += f"; not checked, unfinished: {', '.join(unfinished)}"
    return Target(
        "exactly once, every run (no event applied twice, no reply sent twice or lost)",
        measured,
        "every run",
        False if failed else (None if unfinished or not runs else True),
        reason="a run unfinished within its time limit is a problem of its own (exit 1)"
        if unfinished
        else "",
    )


def targets(results: dict[str, Any]) -> list[Target]:
    cores = int(results.get("machine", {}).get("cpus") or 1)
    rows: list[Target] = []
    one, reference = _one_community(results)
    rows.append(one)
    queries = _queries(results)
    if queries is not None:
        rows.append(queries)
    for run in results.get("communities", []):
        rows += _communities(run, reference, cores)
    rows.append(_exactly_once(results))
    return rows


def table(results: dict[str, Any]) -> str:
    header = ("figure", "measured", "target", "met", "where the time goes (measured)",
              "what it would take")  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in targets(results)]
    return "\n".join(lines)
