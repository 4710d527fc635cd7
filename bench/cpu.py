"""CPU seconds a run's processes spend, process by process: each managed process tree (bot,
runbots, web processes, worker), the PostgreSQL backends of the bench database, and the bench
itself (the local VK server, its polling and its own backend).

PostgreSQL backends come and go during a run (an rq work horse connects for its job): the
backends of the bench database are listed every :data:`INTERVAL` seconds in a thread and each
one's CPU is read while it lives, so a backend that lives less than that is missed and one's
last :data:`INTERVAL` before it exits is not counted.

What that CPU allows (:class:`CpuBudget`): a process spends at most one core, so a component of
``k`` processes that spends ``c`` ms of CPU per event can apply at most ``k · 1000 / c``
events/s; every process of the deployment together (the bench's own process and the local VK
apart) at most ``cores · 1000 / Σc``. The smallest of those is what the CPU allows; a run slower
than that waited rather than computed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .env import Services
from .procs import Managed, cpu_seconds

INTERVAL = 0.1
BENCH = "bench"
POSTGRES = "postgres"
#: A run below this share of what its CPU allows is said to have waited as well.
WAITED = 0.8

#: The processes of a run by component (the bench's own process is reported beside them).
COMPONENTS = (
    ("bot", "bot"),
    ("runbot-", "runbots"),
    ("web-", "web"),
    ("worker", "worker"),
    ("postgres", "PostgreSQL"),
)


def _backend_pid() -> int:
    """This thread's PostgreSQL backend (Django's connection)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    return int(row[0]) if row else 0


class CpuMeter:
    """CPU seconds from :meth:`start` to each :meth:`read`, keyed by process name, plus
    ``postgres`` and ``bench``. A process about to be killed is :meth:`freeze` d first (the
    CPU of a dead process cannot be read)."""

    def __init__(self, services: Services, processes: Sequence[Managed]) -> None:
        self.services = services
        self.processes = list(processes)
        self._before: dict[str, float] = {}
        self._frozen: dict[str, float] = {}
        self._backends_before: dict[int, float] = {}
        self._backends: dict[int, float] = {}
        self._own = 0
        self._own_before = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> CpuMeter:
        self._own = _backend_pid()
        self._own_before = cpu_seconds(self._own) + time.process_time()
        self._before = {p.name: p.cpu_seconds() for p in self.processes}
        import psycopg

        self._conn = psycopg.connect(
            self.services.database_url.replace("postgres://", "postgresql://", 1),
            autocommit=True,
        )
        for pid, cpu in self._sample().items():
            self._backends_before[pid] = cpu
            self._backends[pid] = cpu
        self._thread = threading.Thread(target=self._run, name="pg-cpu", daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> dict[int, float]:
        rows = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND pid <> %s",
            [self._own],
        ).fetchall()
        found = {}
        for (pid,) in rows:
            cpu = cpu_seconds(int(pid))
            if cpu:
                found[int(pid)] = cpu
        return found

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            try:
                sample = self._sample()
            except Exception:  # noqa: BLE001 - the database restarts or ends: stop sampling
                return
            with self._lock:
                for pid, cpu in sample.items():
                    self._backends[pid] = max(cpu, self._backends.get(pid, 0.0))

    def freeze(self, process: Managed) -> None:
        """Keep ``process``'s CPU so far as its figure (it is about to be killed)."""
        self._frozen[process.name] = process.cpu_seconds()

    def read(self) -> dict[str, float]:
        """CPU seconds since :meth:`start`, per process (rounded to 10 ms)."""
        spent = {}
        for process in self.processes:
            now = self._frozen.get(process.name)
            if now is None:
                now = process.cpu_seconds()
            spent[process.name] = now - self._before.get(process.name, 0.0)
        with self._lock:
            spent[POSTGRES] = sum(
                cpu - self._backends_before.get(pid, 0.0) for pid, cpu in self._backends.items()
            )
        spent[BENCH] = cpu_seconds(self._own) + time.process_time() - self._own_before
        return {name: round(max(0.0, value), 2) for name, value in spent.items()}

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self._conn.close()


def whole(value: float) -> str:
    """``value`` rounded, thousands apart (``1 000``)."""
    return f"{value:,.0f}".replace(",", " ")


def components(cpu: dict[str, float]) -> list[tuple[str, int, float]]:
    """(component, processes, CPU seconds) of a run's ``cpu_seconds``, the bench's apart."""
    found = []
    for prefix, label in COMPONENTS:
        names = [name for name in cpu if name == prefix or name.startswith(prefix)]
        if names:
            # PostgreSQL runs a backend per connection: it may use every core.
            processes = 0 if prefix == "postgres" else len(names)
            found.append((label, processes, sum(cpu[name] for name in names)))
    return found


@dataclass
class CpuBudget:
    """What a run's CPU says about its throughput."""

    per_event_ms: dict[str, float]
    processes: dict[str, int]
    bench_ms: float
    caps: dict[str, float]  # component (or "all") → events/s the CPU allows
    busy: float  # share of the cores the run's processes kept busy

    @classmethod
    def of(cls, cpu: dict[str, float], events: int, seconds: float, cores: int) -> CpuBudget:
        parts = components(cpu)
        per = {label: 1000 * spent / events for label, _, spent in parts}
        processes = {label: n for label, n, _ in parts}
        caps = {label: n * 1000 / per[label] for label, n, _ in parts if n and per[label] > 0}
        total = sum(per.values())
        if total > 0:
            caps["all"] = cores * 1000 / total
        spent = sum(cpu.values())
        busy = spent / (seconds * cores) if seconds else 0.0
        return cls(per, processes, 1000 * cpu.get(BENCH, 0.0) / events, caps, busy)

    @property
    def limit(self) -> tuple[str, float] | None:
        if not self.caps:
            return None
        name = min(self.caps, key=self.caps.__getitem__)
        return name, self.caps[name]

    def reason(self, cores: int, load: list[float]) -> str:
        spent = ", ".join(f"{label} {ms:.2f}" for label, ms in self.per_event_ms.items())
        caps = "; ".join(
            (f"{cores} cores allow {whole(cap)}" if label == "all" else
             f"{label} ({self.processes[label]} process{'es' * (self.processes[label] > 1)}) "
             f"{whole(cap)}")
            for label, cap in sorted(self.caps.items(), key=lambda item: item[1])
        )  # fmt: skip
        loads = " → ".join(f"{value:g}" for value in load)
        return (
            f"CPU ms per event: {spent} (bench and local VK {self.bench_ms:.2f}); events/s the "
            f"CPU allows: {caps}; the run kept {100 * self.busy:.0f} % of {cores} cores busy"
            + (f" (load average {loads})" if load else "")
        )

    def would_take(self, target: float, measured: float, cores: int) -> str:
        limit = self.limit
        if limit is None:
            return "no CPU figures in this run"
        name, cap = limit
        if cap >= target:
            return (
                f"the CPU allows {whole(cap)} events/s ≥ {whole(target)}, the run made "
                f"{whole(measured)}: it waited ({100 * (1 - self.busy):.0f} % of the cores idle "
                f"to it); re-measure on a quiet machine, then shorten the waits"
            )
        needs = []
        for label, component_cap in sorted(self.caps.items(), key=lambda item: item[1]):
            if component_cap >= target:
                break
            if label == "all":
                total = sum(self.per_event_ms.values())
                needs.append(
                    f"all processes {total:.2f} ms/event: {cores} cores allow "
                    f"{whole(component_cap)} events/s; ≥ {whole(target)} needs ≤ "
                    f"{cores * 1000 / target:.2f} ms/event in total"
                )
                continue
            ms, n = self.per_event_ms[label], self.processes[label]
            needs.append(
                f"{label} CPU {ms:.2f} ms/event caps {n} process{'es' * (n > 1)} at "
                f"{whole(component_cap)} events/s; ≥ {whole(target)} needs ≤ "
                f"{n * 1000 / target:.2f} ms/event or {math.ceil(target * ms / 1000)} processes"
            )
        if measured < WAITED * cap:
            needs.append(
                f"and the run made {whole(measured)} of the {whole(cap)} events/s its CPU allows: "
                f"it also waited ({100 * (1 - self.busy):.0f} % of the cores idle to it)"
            )
        return "; ".join(needs)
