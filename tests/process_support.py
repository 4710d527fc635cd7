"""Helpers for tests that run the project's launchers (``manage.py demo``, ``manage.py serve``)
as real subprocesses: their logged output, Ctrl-C, and the processes they leave; and for the
tests that share their database with the processes they start (:func:`shared_database_url`,
:class:`ForkedManaged`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench.procs import Managed
from ops import probes
from tests import forkserver

PROJECT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port nothing listens on now."""
    return probes.free_port("127.0.0.1")


@dataclass
class LoggedProcess:
    """A launcher running in a session of its own, its output going to ``log``."""

    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        """The first match of ``pattern`` (``^`` and ``$`` match at lines) in the output."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output(), re.MULTILINE)
            if match:
                return match
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(
            f"{pattern!r} not in the output of {self.process.args!r} after {timeout:.0f} s "
            f"(exit status {self.process.poll()}):\n{self.output()[-6000:]}"
        )

    def stop(self, timeout: float = 60.0) -> int:
        """Ctrl-C, as a person stops it; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
                raise
        return int(self.process.returncode)


def child_pids(pid: int) -> list[int]:
    """The direct children of ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class ForkedManaged(Managed):
    """bench's :class:`~bench.procs.Managed` process (``[sys.executable, …]``), forked by the fork
    server (tests/forkserver.py) rather than started afresh: the same command, environment,
    log and session of its own."""

    launcher = forkserver.Popen


def shared_database_url() -> str:
    """The test database as a ``DATABASE_URL``, for the processes a test starts to share it: the
    worker's own PostgreSQL test database (pytest-django's ``test_…_gwN``) or, on the embedded
    default, its SQLite file (tests/settings.py)."""
    from urllib.parse import quote

    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = quote(db.get("USER") or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return f"postgres://{user}{password}@{host}/{db['NAME']}"
