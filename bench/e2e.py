"""End to end: the local VK server → ``manage.py runbot`` (the real long-poll pipeline) → the
database → the Outbox → a worker → the local VK server, on PostgreSQL and Redis.

A run restores a snapshot (100 games at Day 1, or at Night 1), starts a local VK server in
this process, the bot and a worker as processes (``rqworker default vk --with-scheduler`` for
the project; :mod:`bench.naive_worker` for the baseline), waits until both are ready, then
injects every event of the phase at once — all players of every game act in the same moment —
and times until the bot has applied the last one and the Outbox has nothing pending. The
local server then holds everything that was sent: it is checked to be every Outbox row, once
per recipient.

A naive run that cannot finish within its cap (it is held to VK's 20 requests per second, one
request per message) is stopped there; its time is projected from the requests it still needed
and the rate it kept (``projected`` is then true).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from .cpu import CpuMeter
from .env import ADMIN_ID, GROUP_ID, GROUP_TOKEN, USER_TOKEN, Databases, Services, flush_redis
from .env import process_env as make_env
from .games import BenchGame, day_votes, night_messages, vote_text
from .procs import (
    BOT,
    NAIVE_WORKER,
    WORKER,
    Managed,
    ProcessError,
    Sampler,
    wait_for,
)

#: Methods the delivery calls (the bot's own calls — long poll, users.get — are not counted).
DELIVERY_METHODS = frozenset({
    "messages.send", "execute", "board.createComment", "messages.sendMessageEventAnswer",
    "messages.getInviteLink", "messages.removeChatUser",
})  # fmt: skip

READY_TIMEOUT = 60.0
RUN_TIMEOUT = 240.0


class EventsFigures:
    """What a run of events reports besides its fields: events per second, and the fields with
    it as the dict results.json stores (a dataclass with ``events`` and ``seconds``)."""

    events: int
    seconds: float

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        data["events_per_second"] = round(self.events_per_second, 1)
        return data


@dataclass
class PhaseRun(EventsFigures):
    mode: str
    phase: str
    games: int
    events: int
    seconds: float
    projected: bool = False
    requests: dict[str, int] = field(default_factory=dict)
    messages: int = 0
    board_comments: int = 0
    outbox_rows: int = 0
    failed_rows: int = 0
    exactly_once: bool | None = None
    problems: list[str] = field(default_factory=list)
    bot_peak_rss_mb: float = 0.0
    worker_peak_rss_mb: float = 0.0
    #: CPU seconds spent during the run (:mod:`bench.cpu`): bot, worker, PostgreSQL backends
    #: of the bench database, and the bench (the local VK server, its polling and its own
    #: backend); the load average (1 min) before and after the run.
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    load_average: list[float] = field(default_factory=list)


@dataclass
class Scenario:
    """What is injected: (kind, vk user, topic, text) per event, games interleaved."""

    events: list[tuple[str, int, int, str]]


def day_scenario(games: list[BenchGame]) -> Scenario:
    plan = sorted(day_votes().items())
    events = [
        ("board", game.vk(voter), game.topic_id, vote_text(target))
        for voter, target in plan
        for game in games
    ]
    return Scenario(events)


def night_scenario(games: list[BenchGame]) -> Scenario:
    events = [("pm", game.vk(seat), 0, text) for seat, text in night_messages() for game in games]
    return Scenario(events)


def bench_games(count: int) -> list[BenchGame]:
    """The games of a snapshot (built by :func:`bench.snapshots.build`): game ``g`` has the
    database id ``g`` in a fresh database, and topic ``g``."""
    from gameplay.models import Game

    ids = dict(Game.objects.filter(topic_id__lte=count).values_list("topic_id", "id"))
    return [BenchGame(n, ids[n], n) for n in range(1, count + 1)]


def make_vk(topics: int, *, group_token: str = GROUP_TOKEN, user_token: str = USER_TOKEN) -> Any:
    """A local VK community with board topics 1 … ``topics`` (game ``g`` posts in topic ``g``)."""
    from localvk import LocalVK

    state = LocalVK(
        group_id=GROUP_ID,
        group_token=group_token,
        user_tokens={user_token: ADMIN_ID},
        history_size=1_000_000,
    )
    for n in range(1, topics + 1):
        state.create_topic(f"Бенчмарк {n}")
    return state


def inject(state: Any, scenario: Scenario) -> None:
    for kind, user, topic, text in scenario.events:
        if kind == "board":
            state.inject_board_post(user, topic, text)
        else:
            state.inject_message(user, text)


def poll_position() -> int:
    from gameplay.models import PollState

    ts = PollState.objects.filter(group_id=GROUP_ID).values_list("ts", flat=True).first()
    return int(ts) if ts and ts.isdigit() else 0


def pending_rows() -> int:
    from gameplay.models import Outbox, OutboxStatus

    return Outbox.objects.filter(status=OutboxStatus.PENDING).count()


def worker_ready(mode: str) -> bool:
    import django_rq
    from rq import Worker

    redis = django_rq.get_connection("vk")
    if mode == "naive":
        return bool(redis.exists("bench:naive:ready"))
    return any("vk" in w.queue_names() for w in Worker.all(connection=redis))


class Run:
    """One phase of ``games`` games in ``mode`` ("project" or "naive")."""

    def __init__(
        self,
        services: Services,
        databases: Databases,
        logs: Path,
        *,
        mode: str,
        phase: str,
        games: int,
        snapshot_games: int,
        cap_seconds: float | None = None,
    ) -> None:
        self.services = services
        self.databases = databases
        self.logs = logs
        self.mode = mode
        self.phase = phase
        self.games = games
        self.snapshot_games = snapshot_games
        self.cap_seconds = cap_seconds

    def execute(self) -> PhaseRun:
        from localvk import ServerThread

        self.databases.restore(self.phase)
        flush_redis(self.services)
        state = make_vk(self.snapshot_games)
        with ServerThread(state) as server:
            env = make_env(
                self.services,
                server.api_url,
                OUTBOX_DELIVERY_ENABLED="true" if self.mode == "project" else "false",
            )
            tag = f"{self.mode}-{self.phase}-{self.games}"
            bot = Managed("bot", BOT, env, self.logs / f"{tag}-bot.log")
            worker_cmd = WORKER if self.mode == "project" else NAIVE_WORKER
            worker = Managed("worker", worker_cmd, env, self.logs / f"{tag}-worker.log")
            worker.start()
            bot.start()
            try:
                return self._measure(state, bot, worker)
            finally:
                bot.stop()
                worker.stop()

    def _measure(self, state: Any, bot: Managed, worker: Managed) -> PhaseRun:
        processes = [bot, worker]
        wait_for(lambda: poll_position() > 0, timeout=READY_TIMEOUT, what="the bot to poll",
                 processes=processes)  # fmt: skip
        wait_for(lambda: worker_ready(self.mode), timeout=READY_TIMEOUT,
                 what="the worker to start", processes=processes)  # fmt: skip
        games = bench_games(self.games)
        scenario = (day_scenario if self.phase == "day" else night_scenario)(games)
        since = state.log.next_seq()
        load = [round(os.getloadavg()[0], 2)]
        meter = CpuMeter(self.services, processes)
        with Sampler(processes):
            meter.start()
            started = time.monotonic()
            inject(state, scenario)
            target_ts = state.longpoll.ts
            projected = False
            while True:
                if poll_position() >= target_ts and pending_rows() == 0:
                    break
                for process in processes:
                    if not process.alive():
                        raise ProcessError(f"{process.name} died:\n{process.log_tail()}")
                elapsed = time.monotonic() - started
                if self.cap_seconds is not None and elapsed > self.cap_seconds:
                    projected = True
                    break
                if elapsed > RUN_TIMEOUT:
                    raise ProcessError(f"{self.mode} {self.phase} run did not finish in time")
                time.sleep(0.02)
            seconds = time.monotonic() - started
            cpu = meter.read()
            meter.stop()
        run = PhaseRun(
            mode=self.mode,
            phase=self.phase,
            games=self.games,
            events=len(scenario.events),
            seconds=seconds,
            bot_peak_rss_mb=round(bot.peak_rss_kb / 1024, 1),
            worker_peak_rss_mb=round(worker.peak_rss_kb / 1024, 1),
            cpu_seconds=cpu,
            load_average=[*load, round(os.getloadavg()[0], 2)],
        )
        self._count(state, since, run)
        if projected:
            self._project(run)
        else:
            run.problems = check_delivery(state)
            run.exactly_once = not run.problems
        return run

    def _count(self, state: Any, since: int, run: PhaseRun) -> None:
        from gameplay.models import Outbox, OutboxStatus

        requests: Counter[str] = Counter()
        for record in state.calls(since=since, include_inner=False):
            if record.method in DELIVERY_METHODS:
                requests[record.token_kind] += 1
        run.requests = dict(requests)
        run.messages = len(state.sent_messages())
        run.board_comments = sum(
            1 for t in state.topics.values() for c in t.comments if c.from_id < 0
        )
        run.outbox_rows = Outbox.objects.count()
        run.failed_rows = Outbox.objects.filter(status=OutboxStatus.FAILED).count()

    def _project(self, run: PhaseRun) -> None:
        """Time a capped naive run would have needed, at the request rate it kept."""
        from gameplay.models import Outbox

        from .naive import naive_calls

        needed = sum(len(naive_calls(row, GROUP_ID)) for row in Outbox.objects.all())
        done = sum(run.requests.values())
        if done:
            run.seconds = run.seconds * max(needed, done) / done
        run.projected = True


def check_delivery(state: Any, group_id: int | None = None) -> list[str]:
    """Every Outbox row reached the local VK once per recipient (messages) or once in its
    topic (board posts, possibly merged with others into one comment); nothing else was
    sent. ``group_id``: only that community's rows, checked against ``state``, that
    community's local VK (each problem then names it). Returns the problems found (empty:
    exactly once)."""
    from gameplay.models import Outbox, OutboxChannel, OutboxStatus

    problems: list[str] = []
    expected: Counter[tuple[int, str]] = Counter()
    board: dict[int, list[str]] = {}
    rows = Outbox.objects.order_by("id")
    if group_id is not None:
        rows = rows.filter(group_id=group_id)
    for row in rows:
        if row.status != OutboxStatus.SENT:
            problems.append(f"Outbox #{row.pk} ({row.kind}) is {row.status}: {row.last_error}")
            continue
        if row.channel in (OutboxChannel.MESSAGE, OutboxChannel.CHAT):
            for peer in row.peer_ids:
                expected[(int(peer), row.text)] += 1
        elif row.channel == OutboxChannel.BOARD:
            board.setdefault(int(cast(int, row.topic_id)), []).append(row.text)  # a board row's
    got: Counter[tuple[int, str]] = Counter(
        (m.peer_id, m.text) for m in state.sent_messages() if m.from_id < 0
    )
    if got != expected:
        missing = expected - got
        extra = got - expected
        problems.append(
            f"messages: {sum(missing.values())} missing, {sum(extra.values())} extra or repeated"
            + (f"; e.g. {next(iter(extra))}" if extra else "")
        )
    for topic_id, texts in board.items():
        comments = [
            c.text for c in state.topic(topic_id).comments if c.from_id < 0 and not c.deleted
        ]
        if "\n\n".join(comments) != "\n\n".join(texts):
            problems.append(f"board topic {topic_id}: the comments are not the posts, once each")
    if group_id is not None:
        problems = [f"community {group_id}: {problem}" for problem in problems]
    return problems


def combine(runs: list[PhaseRun]) -> list[dict[str, Any]]:
    """Day and night of one mode and game count, as one run: events over the time of both."""
    combined: dict[tuple[str, int], dict[str, Any]] = {}
    for run in runs:
        entry = combined.setdefault(
            (run.mode, run.games),
            {"mode": run.mode, "games": run.games, "events": 0, "seconds": 0.0,
             "projected": False, "requests": 0, "exactly_once": True},
        )  # fmt: skip
        entry["events"] += run.events
        entry["seconds"] += run.seconds
        entry["projected"] = entry["projected"] or run.projected
        entry["requests"] += sum(run.requests.values())
        entry["exactly_once"] = entry["exactly_once"] and run.exactly_once is not False
    for entry in combined.values():
        entry["seconds"] = round(entry["seconds"], 2)
        entry["events_per_second"] = round(entry["events"] / entry["seconds"], 1)
    return list(combined.values())


def memory(runs: list[PhaseRun], games: int) -> dict[str, Any]:
    """Peak RSS (MB) of the bot and the worker over the runs with ``games`` games."""
    out: dict[str, Any] = {"games": games}
    for mode in ("project", "naive"):
        mine = [r for r in runs if r.mode == mode and r.games == games]
        if mine:
            out[mode] = {
                "bot": max(r.bot_peak_rss_mb for r in mine),
                "worker": max(r.worker_peak_rss_mb for r in mine),
            }
    return out
