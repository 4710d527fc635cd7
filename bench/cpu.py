"""CPU seconds a run's processes spend, process by process: each managed process tree (bot,
runbots, web processes, worker), the PostgreSQL backends of the bench database, and the bench
itself (the local VK server, its polling and its own backend).

PostgreSQL backends come and go during a run (an rq work horse connects for its job): the
backends of the bench database are listed every :data:`INTERVAL` seconds in a thread and each
one's CPU is read while it lives, so a backend that lives less than that is missed and one's
last :data:`INTERVAL` before it exits is not counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from .env import Services
from .procs import Managed, cpu_seconds

INTERVAL = 0.1
BENCH = "bench"
POSTGRES = "postgres"


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
