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
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from .community_figures import (
    COMMUNITY_BASE,
    PROBE_BASE,
    RESCUE_BASE,
    Answers,
    CommunitiesRun,
    applied,
    check_applied,
    check_communities,
    community_id,
    latency_figures,
    request_figures,
    votes_logged,
)
from .cpu import CpuMeter
from .e2e import READY_TIMEOUT, bench_games, pending_rows, worker_ready
from .env import ADMIN_ID, GROUP_ID, GROUP_TOKEN, USER_TOKEN, Databases, Services, flush_redis
from .env import process_env as make_env
from .games import BenchGame, day_votes, vote_text
from .procs import BOT, WORKER, Managed, ProcessError, Sampler, wait_for
from .runbots import SETTLED_RENEWALS, Kill, lease_map, leases_lost, log_size

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
#: The runbots of the scaled-out runs.
RUNBOTS = 3


def tokens(number: int) -> tuple[str, str]:
    """Community ``number``'s community token and its admin's user token."""
    return f"bench-community-{number}-group", f"bench-community-{number}-admin"


def secret(number: int) -> str:
    return f"bench-community-{number}-secret"


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
        votes_before = votes_logged(games)
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
        kill = Kill(victim, len(events), PROBE_TEXT) if victim is not None else None
        meter = CpuMeter(self.services, processes)
        logged = {front.name: log_size(front.log_path) for front in fronts}  # before the burst
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
        latency_figures(result, answers, sent_at, states)
        request_figures(result, states, since)
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
                leases_lost(front.log_path, logged[front.name]) for front in fronts
            )
            rss = [round(f.peak_rss_kb / 1024, 1) for f in fronts]
            result.bot_peak_rss_mb = max(rss)
            result.runbot_peak_rss_mb = rss if self.runbots > 1 else []
        else:
            result.web_peak_rss_mb = [round(f.peak_rss_kb / 1024, 1) for f in fronts]
        result.worker_peak_rss_mb = round(worker.peak_rss_kb / 1024, 1)
        return result


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
