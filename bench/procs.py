"""The bot and worker processes of a run: started as an operator would, watched for memory,
stopped (or killed) on request."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .env import ROOT

#: The production commands (docs/operations.md), without Django's system checks at start (they
#: only make a start slower).
BOT = [sys.executable, "manage.py", "runbot", "--wait", "25", "--skip-checks"]
#: The worker: both queues, with the scheduler.
WORKER = [
    sys.executable,
    "manage.py",
    "rqworker",
    "default",
    "vk",
    "--with-scheduler",
    "--skip-checks",
]
NAIVE_WORKER = [sys.executable, "-m", "bench.naive_worker"]


class ProcessError(Exception):
    pass


def _status_kb(pid: int, field_name: str) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
        except OSError:
            continue
        found.extend(int(c) for c in text.split())
    return found


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and of its children it has waited for (user + system)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # After the command: state is field 3, so utime..cstime (fields 14-17) are [11:15].
    return sum(int(v) for v in fields[11:15]) / CLOCK_TICKS


def process_tree(pid: int) -> list[int]:
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(_children(current))
    return tree


@dataclass
class Managed:
    """One long-lived process (and the children it forks, e.g. rq's work horse)."""

    name: str
    command: Sequence[str]
    env: dict[str, str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None
    peak_rss_kb: int = 0
    restarts: int = 0
    _log: object = field(default=None, repr=False)
    #: What starts the process: :class:`subprocess.Popen`, or one with its interface (the tests
    #: fork theirs from a Python that has imported the libraries: tests/process_support.py).
    launcher: ClassVar[Callable[..., subprocess.Popen[Any]]] = subprocess.Popen

    def start(self) -> None:
        self._log = self.log_path.open("ab")
        self.popen = self.launcher(  # noqa: S603 - our own commands
            list(self.command),
            cwd=ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def sample(self) -> None:
        """Remember the largest resident set of the process or any of its children."""
        if not self.alive():
            return
        for pid in process_tree(self.pid):
            rss = max(_status_kb(pid, "VmHWM"), _status_kb(pid, "VmRSS"))
            self.peak_rss_kb = max(self.peak_rss_kb, rss)

    def cpu_seconds(self) -> float:
        """CPU time of the process tree so far."""
        if not self.alive():
            return 0.0
        return sum(cpu_seconds(pid) for pid in process_tree(self.pid))

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to the whole session, SIGKILL after ``timeout``."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.sample()
            self._signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.popen.wait(5)
        self._close_log()

    def kill(self) -> None:
        """SIGKILL to the process and everything it started (a crash)."""
        if self.popen is None:
            return
        self._signal(signal.SIGKILL)
        self.popen.wait(10)
        self._close_log()

    def restart(self) -> None:
        self.restarts += 1
        self.start()

    def _signal(self, sig: int) -> None:
        assert self.popen is not None
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()  # type: ignore[attr-defined]
            self._log = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Sampler:
    """Samples the memory of some processes every ``interval`` seconds in a thread."""

    def __init__(self, processes: Sequence[Managed], interval: float = 0.1) -> None:
        self.processes = processes
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        for process in self.processes:
            process.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for process in self.processes:
                process.sample()


def wait_for(
    condition: Callable[..., object],  # called with no arguments, for its truth
    *,
    timeout: float,
    what: str,
    interval: float = 0.05,
    processes: Sequence[Managed] = (),
) -> float:
    """Poll ``condition`` until true; returns the seconds it took. Raises
    :class:`ProcessError` on timeout or when one of ``processes`` died."""
    start = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - start
        for process in processes:
            if not process.alive():
                raise ProcessError(
                    f"{process.name} exited while waiting for {what}:\n{process.log_tail()}"
                )
        if time.monotonic() - start > timeout:
            raise ProcessError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
