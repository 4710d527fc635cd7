"""Reply latency: how long a player waits for the bot's answer, idle and during a burst.

The snapshot holds :data:`PROBES` games beyond the bench's games (numbers ``games + 1`` …);
one player of each is a probe. A probe writes «статус» privately and the figure is the time
from the update reaching the local VK's long poll to the answer reaching the local VK
(``messages.send`` or ``execute``), measured in this process on one clock.

1. Idle: the bot and a worker run, nothing else happens; the probes write one after another,
   each once the previous one was answered.
2. Burst: every player of the ``games`` bench games votes at once (a whole Day 1, as the
   end-to-end day run), and the probes write while it is being applied: one every
   :data:`PROBE_EVERY` seconds from :data:`PROBE_START` seconds after the burst was injected.
   The run ends when the burst is applied and delivered and every probe answered; delivery is
   then checked to be exactly once, as in the end-to-end runs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from .e2e import (
    PhaseRun,
    Run,
    bench_games,
    check_delivery,
    day_scenario,
    inject,
    pending_rows,
    poll_position,
)
from .games import BenchGame
from .procs import Managed, ProcessError

#: Probe players, each in a game of their own that takes no part in the burst.
PROBES = 20
PROBE_SEAT = 13
PROBE_TEXT = "статус"
#: During the burst: the first probe this long after the burst was injected, then one every …
PROBE_START = 0.5
PROBE_EVERY = 0.1
#: The most a probe may wait before the run is declared broken.
PROBE_TIMEOUT = 60.0


def quantiles(values: list[float]) -> dict[str, float]:
    """p50, p95 and max (seconds, nearest rank) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0, "n": 0}

    def rank(q: float) -> float:
        index = max(0, min(len(ordered) - 1, -(-int(q * 100) * len(ordered) // 100) - 1))
        return round(ordered[index], 3)

    return {"p50": rank(0.50), "p95": rank(0.95), "max": round(ordered[-1], 3),
            "n": len(ordered)}  # fmt: skip


@dataclass
class LatencyRun:
    games: int
    probes: int
    idle: dict[str, float] = field(default_factory=dict)
    burst: dict[str, float] = field(default_factory=dict)
    burst_events: int = 0
    burst_seconds: float = 0.0
    exactly_once: bool | None = None
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Answers:
    """When the community's messages to the probes reached the local VK: a hook on its
    message store (it runs in the server's thread)."""

    def __init__(self, state: Any, peers: set[int]) -> None:
        self.peers = peers
        self.times: dict[int, list[float]] = {peer: [] for peer in peers}
        self._lock = threading.Lock()
        original = state.store_message

        def store_message(**fields: Any) -> Any:
            message = original(**fields)
            if fields.get("out") and message.peer_id in self.peers and message.from_id < 0:
                with self._lock:
                    self.times[message.peer_id].append(time.monotonic())
            return message

        state.store_message = store_message

    def count(self, peer: int) -> int:
        with self._lock:
            return len(self.times[peer])

    def first_after(self, peer: int, index: int) -> float | None:
        """When answer number ``index`` (from 0) to ``peer`` arrived, if it has."""
        with self._lock:
            times = self.times[peer]
            return times[index] if len(times) > index else None


def probe_games(games: int) -> list[BenchGame]:
    return bench_games(games + PROBES)[games:]


class LatencyBench(Run):
    """The latency run: the ``day`` snapshot, the project's bot and worker."""

    def _measure(self, state: Any, bot: Managed, worker: Managed) -> PhaseRun:
        self._wait_ready(bot, worker)
        probes = [game.vk(PROBE_SEAT) for game in probe_games(self.games)]
        answers = Answers(state, set(probes))
        result = LatencyRun(games=self.games, probes=len(probes))
        idle = []
        for peer in probes:
            sent = time.monotonic()
            state.inject_message(peer, PROBE_TEXT)
            idle.append(self._answered(answers, peer, 0, sent, [bot, worker]) - sent)
        result.idle = quantiles(idle)
        scenario = day_scenario(bench_games(self.games))
        sent_at: dict[int, float] = {}
        started = time.monotonic()
        inject(state, scenario)
        target_ts = state.longpoll.ts
        schedule = [
            (started + PROBE_START + i * PROBE_EVERY, peer) for i, peer in enumerate(probes)
        ]
        burst_done: float | None = None
        while True:
            now = time.monotonic()
            while schedule and schedule[0][0] <= now:
                _, peer = schedule.pop(0)
                sent_at[peer] = time.monotonic()
                state.inject_message(peer, PROBE_TEXT)
            if burst_done is None and poll_position() >= target_ts and pending_rows() == 0:
                burst_done = time.monotonic()
            if burst_done is not None and not schedule:
                target_ts = state.longpoll.ts
                if (
                    poll_position() >= target_ts
                    and pending_rows() == 0
                    and all(answers.count(peer) >= 2 for peer in probes)
                ):
                    break
            self._check(now - started, [bot, worker])
            time.sleep(0.01)
        result.burst = quantiles(
            [answers.first_after(peer, 1) - sent_at[peer] for peer in probes]  # type: ignore[operator]
        )
        result.burst_events = len(scenario.events)
        result.burst_seconds = round(burst_done - started, 2)
        result.problems = check_delivery(state)
        result.exactly_once = not result.problems
        self.result = result
        return PhaseRun(mode=self.mode, phase="latency", games=self.games,
                        events=len(scenario.events), seconds=burst_done - started)  # fmt: skip

    def _wait_ready(self, bot: Managed, worker: Managed) -> None:
        from .e2e import READY_TIMEOUT, wait_for, worker_ready

        processes = [bot, worker]
        wait_for(lambda: poll_position() > 0, timeout=READY_TIMEOUT, what="the bot to poll",
                 processes=processes)  # fmt: skip
        wait_for(lambda: worker_ready(self.mode), timeout=READY_TIMEOUT,
                 what="the worker to start", processes=processes)  # fmt: skip

    def _answered(
        self, answers: Answers, peer: int, index: int, sent: float, processes: list[Managed]
    ) -> float:
        while (at := answers.first_after(peer, index)) is None:
            self._check(time.monotonic() - sent, processes)
            time.sleep(0.005)
        return at

    def _check(self, elapsed: float, processes: list[Managed]) -> None:
        for process in processes:
            if not process.alive():
                raise ProcessError(f"{process.name} died:\n{process.log_tail()}")
        if elapsed > PROBE_TIMEOUT:
            raise ProcessError("the latency run did not finish in time")


def measure(services: Any, databases: Any, logs: Any, games: int) -> LatencyRun:
    bench = LatencyBench(services, databases, logs, mode="project", phase="day", games=games,
                         snapshot_games=games + PROBES)  # fmt: skip
    bench.execute()
    return bench.result
