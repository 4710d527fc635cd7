"""Many communities, one deployment: ``games`` communities with one game each, all voting a
whole Day 1 at once, through one ``runbot`` (a long poll per community) and the worker; through
:data:`RUNBOTS` runbots sharing the communities by lease (:mod:`vkbot.sharing`), started
together and measured once the leases are spread; the same with one of them killed (SIGKILL)
once a third of the burst is applied; and through the Callback API behind two web processes
(gunicorn, one worker each; no ``runbot``).

The ``day`` snapshot's game ``g`` is moved into community ``g`` (VK id ``COMMUNITY_BASE + g``,
tokens of its own, connected); the local VK hosts every community in one server (game ``g``
posts in topic ``g`` of its community). Then every player of every game votes at once, and
while the burst is applied and delivered, a probe user per community (not a player) asks
«статус» privately :data:`PROBES_PER_COMMUNITY` times, spread over the burst; a probe's
latency is the time from its message reaching the local VK to the community's answer reaching
it. Figures:

- events/s end to end (the votes, the probes not counted), as the end-to-end runs;
- VK requests per community made by the delivery (its community token and its admin's user
  token; the bot's own calls — long poll, ``users.get`` — not counted), beside the lower bound
  of :mod:`bench.bound` for that community's Outbox rows: what VK's limits alone demand
  (``peer_ids`` up to 100, ``execute`` of up to 25 calls, a board comment of up to 9000
  characters per topic), whatever the timing;
- reply latency: p95 of the least-served community (the largest per-community p95) beside the
  best-served one's (the issue's bar: within 2×), and of all probes;
- peak resident memory of the bot (the long-poll run) or of the two web processes (the
  Callback run), and of the worker;
- CPU seconds per process from the burst's injection until it is applied and delivered
  (:mod:`bench.cpu`), and the load average around the run (the machine may be shared).

The kill: a probe of another user (not counted in the latency) writes to each community of
the killed runbot at once; how long after the kill each of them has its next event applied
and that reply delivered, beside what the leases promise (``RUNBOT_LEASE_TTL_SECONDS`` +
``RUNBOT_LEASE_RENEW_SECONDS``), and where that time went: the lease's remaining life at the
kill, its claim by a survivor, the survivor's first event applied.

Every run is then checked: every event applied once (one ``VkEvent`` per injected event of
each community, one vote in the log per voter of each game, one reply row per probe message)
and every community's messages and comments its Outbox rows, once each, sent with its own
tokens (the local VK attributes each call to a community by its token).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .bound import lower_bound
from .community_figures import (
    COMMUNITY_BASE,
    PROBE_BASE,
    RESCUE_BASE,
    Answers,
    check_applied,
    check_communities,
    community_id,
    delivery_lags,
    spread,
)
from .cpu import CpuMeter
from .e2e import (
    DELIVERY_METHODS,
    READY_TIMEOUT,
    EventsFigures,
    bench_games,
    pending_rows,
    worker_ready,
)
from .env import ADMIN_ID, GROUP_ID, GROUP_TOKEN, USER_TOKEN, Databases, Services, flush_redis
from .env import process_env as make_env
from .games import BenchGame, day_votes, vote_text
from .latency import quantiles
from .procs import BOT, WORKER, Managed, ProcessError, Sampler, wait_for

#: Probes: each community's probe user asks this many times, the first after PROBE_START s,
#: the others spread over PROBE_SPAN s (the communities' probes staggered between them).
PROBES_PER_COMMUNITY = 5
PROBE_START = 0.3
PROBE_SPAN = 8.0
PROBE_TEXT = "статус"
#: The longest a run may take before it is reported unfinished (a problem): the Callback run
#: of 100 communities takes minutes on a loaded machine.
RUN_TIMEOUT = 600.0
CALLBACK_CODE = "bench-confirm"
#: gunicorn servers of the Callback run (one worker each: two web processes).
WEB_PROCESSES = 2
#: Each community's pusher: one post in flight (a hundred communities keep two web processes
#: busy already; four each would only queue posts past their timeout), patient retries.
PUSH_CONCURRENCY = 1
PUSH_RETRIES = 8
PUSH_TIMEOUT = 30.0
#: The runbots of the scaled-out runs, and the share of the burst's events applied when one of
#: them is killed.
RUNBOTS = 3
KILL_AT = 1 / 3
#: How long the leases must stay where they are before the burst (the runbots have started
#: their loops), in lease renewals.
SETTLED_RENEWALS = 2
#: How a runbot's log tells that a long poll stopped on a lost lease (``LeaseLost``'s text).
LEASE_LOST = "no longer holds the lease"


def tokens(number: int) -> tuple[str, str]:
    """Community ``number``'s community token and its admin's user token."""
    return f"bench-community-{number}-group", f"bench-community-{number}-admin"


def secret(number: int) -> str:
    return f"bench-community-{number}-secret"


@dataclass
class CommunitiesRun(EventsFigures):
    mode: str  # "longpoll" or "callback"
    communities: int
    #: The runbots of a long-poll run, and whether one of them was killed mid-burst.
    runbots: int = 0
    killed: bool = False
    events: int = 0
    seconds: float = 0.0
    #: Delivery requests per community (their median and largest), and the lower bound's;
    #: the largest ratio of a community's requests to its bound; the requests per method
    #: (median per community) and the Outbox rows per community.
    requests: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    requests_over_bound: float = 0.0
    #: The community furthest over its bound: its requests, bound, Outbox rows and methods.
    requests_worst: dict[str, Any] = field(default_factory=dict)
    methods: dict[str, float] = field(default_factory=dict)
    outbox_rows: dict[str, float] = field(default_factory=dict)
    latency_all: dict[str, float] = field(default_factory=dict)
    latency_worst: dict[str, Any] = field(default_factory=dict)
    latency_best: dict[str, Any] = field(default_factory=dict)
    #: The delivery's share alone: an Outbox row's commit to its answer from VK (``sent_at``),
    #: p95 per community, the least- and best-served community's.
    delivery_worst: dict[str, Any] = field(default_factory=dict)
    delivery_best: dict[str, Any] = field(default_factory=dict)
    bot_peak_rss_mb: float = 0.0
    runbot_peak_rss_mb: list[float] = field(default_factory=list)
    web_peak_rss_mb: list[float] = field(default_factory=list)
    worker_peak_rss_mb: float = 0.0
    #: CPU seconds per process (bot or runbot-N or web-N, worker, postgres, bench) from the
    #: injection until the burst was applied and delivered; the load average (1 min) before
    #: and after the run.
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    load_average: list[float] = field(default_factory=list)
    #: Long polls a runbot stopped during the run because it had lost the community's lease
    #: (its batch refused: the lease expired unrenewed, or another runbot took it), from the
    #: runbots' logs (``gameplay.services.longpoll_leases.LeaseLost``).
    leases_lost: int = 0
    #: The kill (a killed run): when, which communities, how long until served again.
    kill: dict[str, Any] = field(default_factory=dict)
    exactly_once: bool | None = None
    problems: list[str] = field(default_factory=list)


def make_communities(count: int) -> Any:
    """The local VK: the environment's community (``bench.env.GROUP_ID``, no games) and
    ``count`` communities, community ``g`` with topics 1 … ``g`` (its game posts in ``g``)."""
    from localvk import LocalVK
    from localvk.communities import Communities

    default = LocalVK(
        group_id=GROUP_ID,
        group_token=GROUP_TOKEN,
        user_tokens={USER_TOKEN: ADMIN_ID},
        history_size=1_000_000,
    )
    registry = Communities(default)
    states: dict[int, Any] = {}
    for number in range(1, count + 1):
        group_token, user_token = tokens(number)
        state = registry.create(
            group_id=community_id(number),
            group_token=group_token,
            user_tokens=[user_token],
            group_name=f"Бенчмарк-сообщество {number}",
        )
        for n in range(1, number + 1):
            state.create_topic(f"Бенчмарк {n}")
        states[number] = state
    return registry, states


def move_games(count: int, *, callback: bool) -> list[BenchGame]:
    """Games 1 … ``count`` of the snapshot into communities of their own (connected)."""
    from gameplay.models import Community, Game

    games = bench_games(count)
    for game in games:
        group_token, user_token = tokens(game.number)
        Community.objects.create(
            vk_id=community_id(game.number),
            name=f"Бенчмарк-сообщество {game.number}",
            group_token=group_token,
            user_token=user_token,
            callback_secret=secret(game.number) if callback else "",
            confirmation_code=CALLBACK_CODE if callback else "",
            connected=True,
        )
        Game.objects.filter(pk=game.game_id).update(vk_group_id=community_id(game.number))
    return games


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _confirmed(url: str, group_id: int) -> bool:
    body = json.dumps({"type": "confirmation", "group_id": group_id}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=READY_TIMEOUT) as response:
            return response.read().decode() == CALLBACK_CODE
    except (urllib.error.HTTPError, OSError):
        return False


def applied(mode: str, states: dict[int, Any], targets: dict[int, int], events: int) -> bool:
    """Every injected event applied: the long poll's position of every community at its
    target (long poll), or every event recorded and the pushers idle (Callback)."""
    from gameplay.models import PollState, VkEvent

    if mode == "callback":
        return VkEvent.objects.filter(group_id__gte=COMMUNITY_BASE).count() >= events and all(
            state.callbacks.pending == 0 for state in states.values()
        )
    positions = dict(
        PollState.objects.filter(group_id__gte=COMMUNITY_BASE).values_list("group_id", "ts")
    )
    for number, target in targets.items():
        ts = positions.get(community_id(number))
        if not ts or not str(ts).isdigit() or int(ts) < target:
            return False
    return True


def events_applied(groups: list[int] | None = None) -> Counter[int]:
    """Events applied (``VkEvent``) per community, of ``groups`` or of every bench
    community."""
    from django.db.models import Count

    from gameplay.models import VkEvent

    rows = VkEvent.objects.filter(group_id__gte=COMMUNITY_BASE)
    if groups is not None:
        rows = rows.filter(group_id__in=groups)
    counted = rows.values("group_id").annotate(n=Count("id")).values_list("group_id", "n")
    return Counter({int(group): int(n) for group, n in counted})


def holder_pid(holder: str) -> int | None:
    """The process id in a runbot's holder name (``host:pid:random``)."""
    parts = holder.rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def lease_map(pids: list[int]) -> dict[int, int] | None:
    """Which of ``pids`` holds each bench community's live lease, while every runbot alive is
    one of ``pids`` and each holds a fair share (the shares within one of each other); else
    None."""
    from django.db.models.functions import Now

    from gameplay.models import LongPollLease, RunbotProcess

    alive = {holder_pid(h) for h in RunbotProcess.objects.values_list("holder", flat=True)}
    if alive != set(pids):
        return None
    live = LongPollLease.objects.filter(expires_at__gt=Now()).exclude(holder="")
    held = {int(g): holder_pid(h) for g, h in live.values_list("group_id", "holder")}
    shares = Counter(held.values())
    if set(shares) != set(pids) or max(shares.values()) - min(shares.values()) > 1:
        return None
    return {g: pid for g, pid in held.items() if g >= COMMUNITY_BASE and pid is not None}


class Run:
    """One run of ``count`` communities in ``mode`` ("longpoll" or "callback"); a long-poll
    run with ``runbots`` runbots, one of them killed mid-burst if ``kill``."""

    def __init__(
        self, services: Services, databases: Databases, logs: Path, *, mode: str, count: int,
        runbots: int = 1, kill: bool = False,
    ) -> None:  # fmt: skip
        self.services, self.databases, self.logs = services, databases, logs
        self.mode, self.count = mode, count
        self.runbots = runbots if mode == "longpoll" else 0
        self.kill = kill and self.runbots > 1
        self.tag = f"communities-{mode}" + (f"-{self.runbots}" if self.runbots > 1 else "")
        self.tag += "-kill" if self.kill else ""
        #: Bench communities per runbot (by pid) once the leases are spread.
        self.shares: Counter[int] = Counter()

    def execute(self) -> CommunitiesRun:
        from localvk import ServerThread

        self.databases.restore("day")
        flush_redis(self.services)
        games = move_games(self.count, callback=self.mode == "callback")
        registry, states = make_communities(self.count)
        with ServerThread(registry) as server:
            env = make_env(self.services, server.api_url, OUTBOX_DELIVERY_ENABLED="true")
            worker = Managed("worker", WORKER, env, self.logs / f"{self.tag}-worker.log")
            fronts = self._fronts(env, states)
            worker.start()
            for front in fronts:
                front.start()
            try:
                return self._measure(games, states, fronts, worker)
            finally:
                for front in fronts:
                    front.stop()
                worker.stop()
                if self.mode == "callback":
                    for state in states.values():
                        state.callbacks.configure(None)

    def _fronts(self, env: dict[str, str], states: dict[int, Any]) -> list[Managed]:
        """What takes the events in: the runbots, or two gunicorn servers."""
        if self.mode == "longpoll":
            if self.runbots == 1:
                return [Managed("bot", BOT, env, self.logs / f"{self.tag}-bot.log")]
            return [
                Managed(f"runbot-{n}", BOT, env, self.logs / f"{self.tag}-runbot{n}.log")
                for n in range(1, self.runbots + 1)
            ]
        self.urls: list[str] = []
        fronts = []
        for n in range(WEB_PROCESSES):
            port = free_port()
            command = [
                sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
                "--workers", "1", "--no-control-socket",
            ]  # fmt: skip
            fronts.append(
                Managed(f"web-{n + 1}", command, env, self.logs / f"{self.tag}-web{n}.log")
            )
            self.urls.append(f"http://127.0.0.1:{port}/vk/callback/")
        return fronts

    def _ready(self, states: dict[int, Any], fronts: list[Managed], worker: Managed) -> None:
        processes = [*fronts, worker]
        if self.mode == "longpoll":
            from gameplay.models import PollState

            wait_for(
                lambda: PollState.objects.filter(group_id__gte=COMMUNITY_BASE).count()
                >= self.count,
                timeout=READY_TIMEOUT * 2, what="the bot to poll every community",
                processes=processes,
            )  # fmt: skip
            if self.runbots > 1:
                self._spread(fronts, processes)
        else:
            from localvk.callback_config import CallbackConfig

            for url in self.urls:
                wait_for(lambda url=url: _confirmed(url, community_id(1)),
                         timeout=READY_TIMEOUT, what=f"{url} to answer", interval=0.2,
                         processes=processes)  # fmt: skip
            for number, state in states.items():
                state.callbacks.configure(
                    CallbackConfig(
                        urls=tuple(self.urls),
                        confirmation_code=CALLBACK_CODE,
                        secret=secret(number),
                        concurrency=PUSH_CONCURRENCY,
                        retries=PUSH_RETRIES,
                        timeout=PUSH_TIMEOUT,
                    )  # fmt: skip
                )
            # Until a community's server answered its confirmation, VK pushes nothing.
            wait_for(lambda: all(state.callbacks.confirmed for state in states.values()),
                     timeout=READY_TIMEOUT, what="every community's Callback server confirmed",
                     processes=processes)  # fmt: skip
        wait_for(lambda: worker_ready("project"), timeout=READY_TIMEOUT,
                 what="the worker to start", processes=processes)  # fmt: skip

    def _spread(self, fronts: list[Managed], processes: list[Managed]) -> None:
        """Wait until the runbots hold fair shares of the leases, every community's, and have
        kept them for :data:`SETTLED_RENEWALS` renewals (their loops are polling)."""
        from django.conf import settings

        pids = [front.pid for front in fronts]
        settle = SETTLED_RENEWALS * float(settings.RUNBOT_LEASE_RENEW_SECONDS)
        seen: dict[str, Any] = {"map": None, "since": 0.0}

        def settled() -> bool:
            now = lease_map(pids)
            if now is None or len(now) < self.count or now != seen["map"]:
                seen.update(map=now, since=time.monotonic())
                return False
            return time.monotonic() - seen["since"] >= settle

        wait_for(settled, timeout=READY_TIMEOUT * 2, interval=0.2, processes=processes,
                 what=f"the {self.runbots} runbots to share the leases")  # fmt: skip
        self.shares = Counter(seen["map"].values())

    def _measure(
        self, games: list[BenchGame], states: dict[int, Any], fronts: list[Managed],
        worker: Managed,
    ) -> CommunitiesRun:  # fmt: skip
        self._ready(states, fronts, worker)
        processes = [*fronts, worker]
        live = list(processes)
        answers = Answers(states)
        plan = sorted(day_votes().items())
        events = [(game.number, game.vk(voter), game.topic_id, vote_text(target))
                  for voter, target in plan for game in games]  # fmt: skip
        since = {n: state.log.next_seq() for n, state in states.items()}
        votes_before = _votes(games)
        result = CommunitiesRun(mode=self.mode, communities=self.count, runbots=self.runbots,
                                killed=self.kill, events=len(events),
                                load_average=[round(os.getloadavg()[0], 2)])  # fmt: skip
        step = PROBE_SPAN / max(1, PROBES_PER_COMMUNITY - 1)
        schedule = sorted(
            (PROBE_START + k * step + (n - 1) * step / self.count, n, k)
            for n in states
            for k in range(PROBES_PER_COMMUNITY)
        )
        sent_at: dict[tuple[int, int], float] = {}
        #: The event ids injected into each community (checked to be applied once each).
        injected_ids: dict[int, list[str]] = {community_id(n): [] for n in states}
        # The runbot killed: the one holding the most communities.
        victim = max(fronts, key=lambda front: self.shares.get(front.pid, 0)) if self.kill else None
        kill = Kill(self, victim, len(events)) if victim is not None else None
        meter = CpuMeter(self.services, processes)
        logged = {front.name: _log_size(front.log_path) for front in fronts}  # before the burst
        with Sampler(processes):
            meter.start()
            started = time.monotonic()
            for number, user, topic, text in events:
                update = states[number].inject_board_post(user, topic, text)
                injected_ids[community_id(number)].append(update["event_id"])
            targets = {n: state.longpoll.ts for n, state in states.items()}
            done: float | None = None
            complete = False  # the burst, every probe and the kill's rescues answered
            while True:
                now = time.monotonic()
                while schedule and started + schedule[0][0] <= now:
                    _, number, k = schedule.pop(0)
                    sent_at[(number, k)] = time.monotonic()
                    update = states[number].inject_message(PROBE_BASE + number, PROBE_TEXT)
                    injected_ids[community_id(number)].append(update["event_id"])
                if kill is not None:
                    kill.watch(meter, states, live, injected_ids)
                injected = sum(len(ids) for ids in injected_ids.values())
                if (
                    done is None
                    and applied(self.mode, states, targets, injected)
                    and (pending_rows() == 0)
                ):
                    done = time.monotonic()
                    result.cpu_seconds = meter.read()
                if done is not None and not schedule and (kill is None or kill.over(answers)):
                    targets = {n: state.longpoll.ts for n, state in states.items()}
                    if (
                        applied(self.mode, states, targets, injected)
                        and pending_rows() == 0
                        and all(answers.count(n) >= PROBES_PER_COMMUNITY for n in states)
                    ):
                        complete = True
                        break
                for process in live:
                    if not process.alive():
                        raise ProcessError(f"{process.name} died:\n{process.log_tail()}")
                if now - started > RUN_TIMEOUT:  # the figures so far, marked unfinished
                    break
                time.sleep(0.01)
            if done is None:
                result.cpu_seconds = meter.read()
            meter.stop()
        result.seconds = round((done or time.monotonic()) - started, 2)
        result.load_average.append(round(os.getloadavg()[0], 2))
        self._latency(result, answers, sent_at, states)
        self._requests(result, states, since)
        result.problems = [] if complete else [
            f"the {self.tag} run of {self.count} communities did not finish within "
            f"{RUN_TIMEOUT:.0f} s"
        ]  # fmt: skip
        if kill is not None:
            result.kill = kill.figures(answers)
        if done is not None:  # the burst is applied: an unanswered probe shows as a problem
            probes = Counter({PROBE_BASE + n: 0 for n in states})
            probes.update(PROBE_BASE + number for number, _ in sent_at)
            probes.update(RESCUE_BASE + n for n in (kill.rescued if kill else ()))
            voters = len(plan)
            votes = {g.game_id: votes_before.get(g.game_id, 0) + voters for g in games}
            result.problems += check_applied(injected_ids, probes, votes)
            result.problems += check_communities(states)
        result.exactly_once = not result.problems if done is not None else None
        if self.mode == "longpoll":
            result.leases_lost = sum(
                _leases_lost(front.log_path, logged[front.name]) for front in fronts
            )
            rss = [round(f.peak_rss_kb / 1024, 1) for f in fronts]
            result.bot_peak_rss_mb = max(rss)
            result.runbot_peak_rss_mb = rss if self.runbots > 1 else []
        else:
            result.web_peak_rss_mb = [round(f.peak_rss_kb / 1024, 1) for f in fronts]
        result.worker_peak_rss_mb = round(worker.peak_rss_kb / 1024, 1)
        return result

    def _latency(
        self, result: CommunitiesRun, answers: Answers, sent_at: dict[tuple[int, int], float],
        states: dict[int, Any],
    ) -> None:  # fmt: skip
        per: dict[int, list[float]] = {n: [] for n in states}
        for (number, k), at in sent_at.items():
            answered = answers.at(number, k)
            if answered is not None:
                per[number].append(answered - at)
        result.latency_all = quantiles([v for values in per.values() for v in values])
        p95 = {n: quantiles(values)["p95"] for n, values in per.items() if values}
        if not p95:
            return
        worst = max(p95, key=lambda n: p95[n])
        best = min(p95, key=lambda n: p95[n])
        result.latency_worst = {"community": community_id(worst), **quantiles(per[worst])}
        result.latency_best = {"community": community_id(best), **quantiles(per[best])}
        result.delivery_worst, result.delivery_best = delivery_lags()

    def _requests(
        self, result: CommunitiesRun, states: dict[int, Any], since: dict[int, int]
    ) -> None:
        from gameplay.models import Outbox

        made, bounds, rows, ratios = [], [], [], []
        methods: dict[str, list[int]] = {}
        per_method: dict[int, Counter[str]] = {}
        for number, state in states.items():
            calls = Counter(
                record.method
                for record in state.calls(since=since[number], include_inner=False)
                if record.method in DELIVERY_METHODS
            )
            made.append(sum(calls.values()))
            per_method[number] = calls
            for method in DELIVERY_METHODS:
                methods.setdefault(method, []).append(calls[method])
            community_rows = Outbox.objects.filter(group_id=community_id(number))
            bounds.append(lower_bound(community_rows))
            rows.append(community_rows.count())
            ratios.append(made[-1] / bounds[-1] if bounds[-1] else float(made[-1]))
        result.requests = spread(made)
        result.bound = spread(bounds)
        result.outbox_rows = spread(rows)
        result.requests_over_bound = round(max(ratios, default=0.0), 2)
        if ratios:
            worst = max(range(len(ratios)), key=ratios.__getitem__)
            number = list(states)[worst]
            result.requests_worst = {
                "community": community_id(number), "requests": made[worst],
                "bound": bounds[worst], "rows": rows[worst],
                "methods": dict(sorted(per_method[number].items())),
            }  # fmt: skip
        result.methods = {
            method: statistics.median(counts)
            for method, counts in sorted(methods.items())
            if any(counts)
        }


def _log_size(log: Path) -> int:
    try:
        return log.stat().st_size
    except OSError:
        return 0


def _leases_lost(log: Path, since: int) -> int:
    """The lost leases a runbot's log tells of from byte ``since`` on (its warning quotes
    ``LeaseLost``)."""
    try:
        with log.open("rb") as text:
            text.seek(since)
            return text.read().decode(errors="replace").count(LEASE_LOST)
    except OSError:
        return 0


def _votes(games: list[BenchGame]) -> dict[int, int]:
    """Votes in each game's log."""
    from django.db.models import Count

    from gameplay.models import EventKind, GameEvent

    rows = GameEvent.objects.filter(game_id__in=[g.game_id for g in games], kind=EventKind.VOTE)
    counted = rows.values("game_id").annotate(n=Count("id")).values_list("game_id", "n")
    return {int(game): int(n) for game, n in counted}


class Kill:
    """One runbot killed (SIGKILL) once :data:`KILL_AT` of the burst's events are applied;
    then a rescue probe writes to each of its communities, and each community's next event
    applied and that probe's answer are timed from the kill."""

    def __init__(self, run: Run, victim: Managed, events: int) -> None:
        from django.conf import settings

        self.run, self.victim, self.events = run, victim, events
        self.renew = float(settings.RUNBOT_LEASE_RENEW_SECONDS)
        self.ttl = float(settings.RUNBOT_LEASE_TTL_SECONDS)
        self.at: float | None = None  # monotonic
        self.wall: float = 0.0
        self.applied_before = 0
        self.orphans: dict[int, datetime | None] = {}  # community → its lease's expiry
        self.counts: Counter[int] = Counter()
        self.served: dict[int, float] = {}  # community → seconds after the kill
        self.rescued: set[int] = set()  # community numbers written to after the kill

    def watch(
        self, meter: CpuMeter, states: dict[int, Any], live: list[Managed],
        injected: dict[int, list[str]],
    ) -> None:  # fmt: skip
        """Kill when it is time (then write to the orphans: their ids into ``injected``);
        after it, note the orphans served again."""
        if self.at is None:
            applied_now = sum(events_applied().values())
            if applied_now >= self.events * KILL_AT:
                self._kill(meter, states, live, applied_now)
                for group in self.orphans:
                    number = group - COMMUNITY_BASE
                    update = states[number].inject_message(RESCUE_BASE + number, PROBE_TEXT)
                    injected[group].append(update["event_id"])
                    self.rescued.add(number)
            return
        pending = [g for g in self.orphans if g not in self.served]
        if pending:
            now = events_applied(pending)
            for group in pending:
                if now[group] > self.counts[group]:
                    self.served[group] = time.monotonic() - self.at

    def _kill(
        self, meter: CpuMeter, states: dict[int, Any], live: list[Managed], applied_now: int
    ) -> None:
        from gameplay.models import LongPollLease

        meter.freeze(self.victim)
        self.victim.kill()
        self.at, self.wall = time.monotonic(), time.time()
        live.remove(self.victim)
        self.applied_before = applied_now
        leases = LongPollLease.objects.filter(group_id__gte=COMMUNITY_BASE)
        for group, holder, expires in leases.values_list("group_id", "holder", "expires_at"):
            if holder_pid(holder) == self.victim.pid:
                self.orphans[int(group)] = expires
        self.counts = events_applied(list(self.orphans))

    def over(self, answers: Answers) -> bool:
        """Killed, and every orphan served again and its rescue probe answered."""
        return self.at is not None and all(
            group in self.served and answers.rescue_at(group - COMMUNITY_BASE) is not None
            for group in self.orphans
        )

    def figures(self, answers: Answers) -> dict[str, Any]:
        from gameplay.models import LongPollLease

        if self.at is None:
            return {"killed": False}
        kill_at = self.at
        answered = {
            group: at - kill_at
            for group in self.orphans
            if (at := answers.rescue_at(group - COMMUNITY_BASE)) is not None
        }
        claims = dict(
            LongPollLease.objects.filter(group_id__in=list(self.orphans)).values_list(
                "group_id", "claimed_at"
            )
        )

        def after_kill(moment: datetime | None) -> float | None:
            return None if moment is None else round(moment.timestamp() - self.wall, 2)

        lease_left = [after_kill(e) for e in self.orphans.values()]
        claimed = [after_kill(claims.get(g)) for g in self.orphans]
        return {
            "killed": True,
            "runbot": self.victim.name,
            "applied_before": self.applied_before,
            "events": self.events,
            "communities": len(self.orphans),
            "served_again": quantiles(list(self.served.values())),
            "answered": quantiles(list(answered.values())),
            "unserved": len(self.orphans) - len(self.served),
            "unanswered": len(self.orphans) - len(answered),
            "lease_left": quantiles([v for v in lease_left if v is not None]),
            "claimed": quantiles([v for v in claimed if v is not None]),
            "renew_seconds": self.renew,
            "ttl_seconds": self.ttl,
            "bound_seconds": self.ttl + self.renew,
        }


def measure(
    services: Services, databases: Databases, logs: Path, count: int
) -> list[CommunitiesRun]:
    """One runbot, :data:`RUNBOTS` runbots, the same with one killed, the Callback API."""
    runs = [("longpoll", 1, False), ("longpoll", RUNBOTS, False), ("longpoll", RUNBOTS, True),
            ("callback", 0, False)]  # fmt: skip
    return [
        Run(services, databases, logs, mode=mode, count=count, runbots=n, kill=kill).execute()
        for mode, n, kill in runs
    ]
