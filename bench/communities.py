"""Many communities, one deployment: ``games`` communities with one game each, all voting a
whole Day 1 at once, through one ``runbot`` (a long poll per community) and the worker — and
the same with the Callback API behind two web processes (gunicorn, one worker each; no
``runbot``).

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
  Callback run), and of the worker.

Every community's messages and comments are then checked to be its Outbox rows, once each,
sent with its own tokens (the local VK attributes each call to a community by its token).
"""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bound import lower_bound
from .community_figures import (
    COMMUNITY_BASE,
    PROBE_BASE,
    Answers,
    check_communities,
    community_id,
    delivery_lags,
    spread,
)
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
RUN_TIMEOUT = 300.0
CALLBACK_CODE = "bench-confirm"
#: gunicorn servers of the Callback run (one worker each: two web processes).
WEB_PROCESSES = 2
#: Each community's pusher: one post in flight (a hundred communities keep two web processes
#: busy already; four each would only queue posts past their timeout), patient retries.
PUSH_CONCURRENCY = 1
PUSH_RETRIES = 8
PUSH_TIMEOUT = 30.0


def tokens(number: int) -> tuple[str, str]:
    """Community ``number``'s community token and its admin's user token."""
    return f"bench-community-{number}-group", f"bench-community-{number}-admin"


def secret(number: int) -> str:
    return f"bench-community-{number}-secret"


@dataclass
class CommunitiesRun(EventsFigures):
    mode: str  # "longpoll" or "callback"
    communities: int
    events: int = 0
    seconds: float = 0.0
    #: Delivery requests per community (their median and largest), and the lower bound's.
    requests: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    latency_all: dict[str, float] = field(default_factory=dict)
    latency_worst: dict[str, Any] = field(default_factory=dict)
    latency_best: dict[str, Any] = field(default_factory=dict)
    #: The delivery's share alone: an Outbox row's commit to its answer from VK (``sent_at``),
    #: p95 per community, the least- and best-served community's.
    delivery_worst: dict[str, Any] = field(default_factory=dict)
    delivery_best: dict[str, Any] = field(default_factory=dict)
    bot_peak_rss_mb: float = 0.0
    web_peak_rss_mb: list[float] = field(default_factory=list)
    worker_peak_rss_mb: float = 0.0
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


class Run:
    """One run of ``count`` communities in ``mode`` ("longpoll" or "callback")."""

    def __init__(
        self, services: Services, databases: Databases, logs: Path, *, mode: str, count: int
    ) -> None:
        self.services, self.databases, self.logs = services, databases, logs
        self.mode, self.count = mode, count

    def execute(self) -> CommunitiesRun:
        from localvk import ServerThread

        self.databases.restore("day")
        flush_redis(self.services)
        games = move_games(self.count, callback=self.mode == "callback")
        registry, states = make_communities(self.count)
        with ServerThread(registry) as server:
            env = make_env(self.services, server.api_url, OUTBOX_DELIVERY_ENABLED="true")
            log = self.logs / f"communities-{self.mode}-worker.log"
            worker = Managed("worker", WORKER, env, log)
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
        """What takes the events in: one ``runbot``, or two gunicorn servers."""
        tag = f"communities-{self.mode}"
        if self.mode == "longpoll":
            return [Managed("bot", BOT, env, self.logs / f"{tag}-bot.log")]
        self.urls: list[str] = []
        fronts = []
        for n in range(WEB_PROCESSES):
            port = free_port()
            command = [
                sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
                "--workers", "1", "--no-control-socket",
            ]  # fmt: skip
            fronts.append(Managed(f"web-{n + 1}", command, env, self.logs / f"{tag}-web{n}.log"))
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

    def _measure(
        self, games: list[BenchGame], states: dict[int, Any], fronts: list[Managed],
        worker: Managed,
    ) -> CommunitiesRun:  # fmt: skip
        self._ready(states, fronts, worker)
        processes = [*fronts, worker]
        answers = Answers(states)
        plan = sorted(day_votes().items())
        events = [(game.number, game.vk(voter), game.topic_id, vote_text(target))
                  for voter, target in plan for game in games]  # fmt: skip
        since = {n: state.log.next_seq() for n, state in states.items()}
        result = CommunitiesRun(mode=self.mode, communities=self.count, events=len(events))
        step = PROBE_SPAN / max(1, PROBES_PER_COMMUNITY - 1)
        schedule = sorted(
            (PROBE_START + k * step + (n - 1) * step / self.count, n, k)
            for n in states
            for k in range(PROBES_PER_COMMUNITY)
        )
        sent_at: dict[tuple[int, int], float] = {}
        with Sampler(processes):
            started = time.monotonic()
            for number, user, topic, text in events:
                states[number].inject_board_post(user, topic, text)
            targets = {n: state.longpoll.ts for n, state in states.items()}
            done: float | None = None
            while True:
                now = time.monotonic()
                while schedule and started + schedule[0][0] <= now:
                    _, number, k = schedule.pop(0)
                    sent_at[(number, k)] = time.monotonic()
                    states[number].inject_message(PROBE_BASE + number, PROBE_TEXT)
                injected = len(events) + len(sent_at)
                if (
                    done is None
                    and applied(self.mode, states, targets, injected)
                    and (pending_rows() == 0)
                ):
                    done = time.monotonic()
                if done is not None and not schedule:
                    targets = {n: state.longpoll.ts for n, state in states.items()}
                    if (
                        applied(self.mode, states, targets, injected)
                        and pending_rows() == 0
                        and all(answers.count(n) >= PROBES_PER_COMMUNITY for n in states)
                    ):
                        break
                for process in processes:
                    if not process.alive():
                        raise ProcessError(f"{process.name} died:\n{process.log_tail()}")
                if now - started > RUN_TIMEOUT:  # the figures so far, marked unfinished
                    break
                time.sleep(0.01)
        finished = done is not None
        result.seconds = round((done or time.monotonic()) - started, 2)
        self._latency(result, answers, sent_at, states)
        self._requests(result, states, since)
        result.problems = [] if finished else [
            f"the {self.mode} run of {self.count} communities did not finish within "
            f"{RUN_TIMEOUT:.0f} s"
        ]  # fmt: skip
        if finished:
            result.problems = check_communities(states)
        result.exactly_once = not result.problems if finished else None
        if self.mode == "longpoll":
            result.bot_peak_rss_mb = round(fronts[0].peak_rss_kb / 1024, 1)
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

        made, bounds = [], []
        for number, state in states.items():
            made.append(sum(
                1 for record in state.calls(since=since[number], include_inner=False)
                if record.method in DELIVERY_METHODS
            ))  # fmt: skip
            rows = Outbox.objects.filter(group_id=community_id(number))
            bounds.append(lower_bound(rows))
        result.requests = spread(made)
        result.bound = spread(bounds)


def measure(
    services: Services, databases: Databases, logs: Path, count: int
) -> list[CommunitiesRun]:
    return [
        Run(services, databases, logs, mode=mode, count=count).execute()
        for mode in ("longpoll", "callback")
    ]
