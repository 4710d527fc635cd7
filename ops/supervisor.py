"""A small process supervisor (``make demo`` and ``make run``): one-shot steps, then
long-running services started in order, each waited for until ready; their output prefixed with
their name; a service that exits restarted with back-off (1 s, doubling up to 30 s) until it
keeps failing, except after a configuration error (exit status 2), which stops everything; and
on SIGINT/SIGTERM every service stopped in reverse order (SIGTERM to its process group, SIGKILL
after its timeout). No orphans: each service runs in its own process group through
:mod:`ops.launch`, which also has the kernel end it if the supervisor itself dies.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from config.env import ENV_ERROR_EXIT_STATUS

Probe = Callable[[], bool]

COLORS = ("36", "33", "35", "32", "34", "31", "96", "93")
#: Restarts allowed within RESTART_WINDOW seconds before the supervisor gives up (defaults of
#: :class:`Supervisor`).
MAX_RESTARTS = 5
RESTART_WINDOW = 120.0
#: The longest wait before a restart (the wait doubles from 1 s).
MAX_RESTART_DELAY = 30.0


class StartupError(Exception):
    """A step failed or a service did not become ready (the supervisor stops then)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        #: The exit status of the process that failed, if it exited.
        self.status = status


class Interrupted(Exception):
    """A stop was requested while starting."""


@dataclass
class Service:
    name: str
    argv: Sequence[str]
    #: Ready when this returns True (polled) …
    probe: Probe | None = None
    #: … or when a line of its output matches this.
    ready_line: str | None = None
    ready_timeout: float = 60.0
    stop_timeout: float = 10.0
    #: Output lines matching this are not shown (unless the supervisor is verbose).
    mute: str | None = None
    restart: bool = True
    #: Services next to each other in the stop order with the same group stop side by side.
    stop_group: str | None = None
    #: Exit statuses a restart cannot help (the project's configuration error): the supervisor
    #: stops everything instead.
    fatal_statuses: tuple[int, ...] = (ENV_ERROR_EXIT_STATUS,)


@dataclass
class Child:
    service: Service
    process: subprocess.Popen[bytes]
    ready: threading.Event = field(default_factory=threading.Event)
    reader: threading.Thread | None = None


class Supervisor:
    def __init__(
        self,
        *,
        env: dict[str, str],
        cwd: str,
        out: IO[str] | None = None,
        color: bool | None = None,
        verbose: bool = False,
        name: str = "supervisor",
        max_restarts: int | None = None,
        restart_window: float | None = None,
    ) -> None:
        self.env = env
        self.cwd = cwd
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self.verbose = verbose
        #: The prefix of the supervisor's own lines.
        self.name = name
        self.max_restarts = MAX_RESTARTS if max_restarts is None else max_restarts
        self.restart_window = RESTART_WINDOW if restart_window is None else restart_window
        self.children: list[Child] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._force = False
        self._restarts: dict[str, list[float]] = {}
        self._width = 8  # grows with the longest service name

    # --- output --------------------------------------------------------------------------

    def say(self, text: str, name: str | None = None) -> None:
        self._write(name or self.name, text)

    def _write(self, name: str, line: str) -> None:
        prefix = f"{name:<{self._width}}|"
        if self.color:
            code = COLORS[sum(map(ord, name)) % len(COLORS)]
            prefix = f"\033[{code}m{prefix}\033[0m"
        with self._lock:
            self.out.write(f"{prefix} {line}\n")
            self.out.flush()

    def _pump(
        self,
        name: str,
        stream: IO[bytes],
        ready_line: str | None,
        ready: threading.Event | None,
        mute: str | None,
    ) -> None:
        pattern = re.compile(ready_line) if ready_line else None
        muted = re.compile(mute) if mute and not self.verbose else None
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip()
            if pattern is not None and ready is not None and pattern.search(line):
                ready.set()
            if muted is not None and muted.search(line):
                continue
            self._write(name, line)
        stream.close()

    # --- signals -------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        def handler(signum: int, frame: object) -> None:
            if self._stop.is_set():
                self._force = True  # a second Ctrl-C: do not wait for graceful stops
            self._stop.set()

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def request_stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    # --- processes -----------------------------------------------------------------------

    def _spawn(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        self._width = max(self._width, len(name))
        command = [sys.executable, "-m", "ops.launch", str(os.getpid()), *argv]
        return subprocess.Popen(
            command,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def run_step(self, name: str, argv: Sequence[str], *, timeout: float = 300.0) -> None:
        """Run a one-shot command to its end, its output prefixed; raise on failure."""
        self.run_steps([(name, argv)], timeout=timeout)

    def run_steps(
        self, steps: Sequence[tuple[str, Sequence[str]]], *, timeout: float = 300.0
    ) -> None:
        """Run one-shot commands side by side to their end, their output prefixed; raise on
        the first failure (the others are ended then)."""
        if self._stop.is_set():
            raise Interrupted()
        running: list[tuple[str, subprocess.Popen[bytes], threading.Thread]] = []
        for name, argv in steps:
            process = self._spawn(name, argv)
            assert process.stdout is not None
            reader = threading.Thread(
                target=self._pump, args=(name, process.stdout, None, None, None), daemon=True
            )
            reader.start()
            running.append((name, process, reader))

        def end_all() -> None:
            for _, process, _ in running:
                self._terminate(process, 5.0)

        deadline = time.monotonic() + timeout
        while True:
            statuses = [process.poll() for _, process, _ in running]  # every one, each time
            for (name, _, reader), status in zip(running, statuses, strict=True):
                if status not in (None, 0):
                    reader.join(2.0)
                    end_all()
                    raise StartupError(f"{name} failed with exit status {status}", status)
            if None not in statuses:
                break
            if self._stop.is_set():
                end_all()
                raise Interrupted()
            if time.monotonic() > deadline:
                end_all()
                names = [name for name, _, _ in running]
                late = ", ".join(
                    n for n, status in zip(names, statuses, strict=True) if status is None
                )
                raise StartupError(f"{late} did not finish within {timeout:.0f} s")
            time.sleep(0.05)
        for _, _, reader in running:
            reader.join(2.0)

    def start(self, service: Service) -> Child:
        """Start a service and wait until it is ready."""
        return self.start_group([service])[0]

    def start_group(self, services: Sequence[Service]) -> list[Child]:
        """Start services side by side, then wait until every one is ready."""
        started = self.spawn_group(services)
        self.wait_group(started)
        return started

    def wait_group(self, children: Sequence[Child]) -> None:
        """Wait until every one of ``children`` is ready; one that exits meanwhile (ready or
        not) or is not ready in time fails the whole group at once."""
        deadline = {id(child): time.monotonic() + child.service.ready_timeout for child in children}
        next_probe = dict.fromkeys(deadline, 0.0)
        pending = list(children)
        while True:
            if self._stop.is_set():
                raise Interrupted()
            for child in children:
                if child.process.poll() is not None:
                    if child.reader:
                        child.reader.join(2.0)
                    raise StartupError(
                        f"{child.service.name} exited with status {child.process.returncode} "
                        "while starting",
                        child.process.returncode,
                    )
            now = time.monotonic()
            for child in list(pending):
                key = id(child)
                probe_now = now >= next_probe[key]
                if probe_now:
                    next_probe[key] = now + 0.25
                if self._ready(child, probe_now):
                    pending.remove(child)
                    continue
                if now > deadline[key]:
                    raise StartupError(
                        f"{child.service.name} was not ready after "
                        f"{child.service.ready_timeout:.0f} s"
                    )
            if not pending:
                return
            time.sleep(0.05)

    def spawn_group(self, services: Sequence[Service]) -> list[Child]:
        """Start services side by side without waiting (see :meth:`wait_group`)."""
        if self._stop.is_set():
            raise Interrupted()
        started = [self._launch(service) for service in services]
        self.children.extend(started)
        return started

    def _launch(self, service: Service) -> Child:
        process = self._spawn(service.name, service.argv)
        child = Child(service, process)
        assert process.stdout is not None
        child.reader = threading.Thread(
            target=self._pump,
            args=(service.name, process.stdout, service.ready_line, child.ready, service.mute),
            daemon=True,
        )
        child.reader.start()
        return child

    def _wait_ready(self, child: Child) -> None:
        self.wait_group([child])

    @staticmethod
    def _ready(child: Child, probe_now: bool) -> bool:
        """Whether ``child`` is ready: its ready line was seen, its probe answers (asked when
        ``probe_now``), or it has neither."""
        service = child.service
        if child.ready.is_set() or (service.probe is None and service.ready_line is None):
            return True
        if service.probe is not None and probe_now:
            try:
                if service.probe():
                    child.ready.set()
                    return True
            except Exception:  # noqa: BLE001 - not ready yet
                pass
        return False

    def watch(self, poll: float = 0.2) -> int:
        """Keep the services running until a stop is requested, restarting a service that
        exits. Returns 0 after a stop request; a service's fatal status (a configuration
        error) when one exits with it; 1 when one kept failing (more than ``max_restarts``
        exits within ``restart_window`` seconds) or must not be restarted."""
        while not self._stop.wait(poll):
            for index, child in enumerate(list(self.children)):
                code = child.process.poll()
                if code is None or self._stop.is_set():
                    continue
                status = self._recover(index, code)
                if status is not None:
                    return status
        return 0

    def _recover(self, index: int, code: int) -> int | None:
        """Restart the exited service at ``index`` after its back-off; the status to stop
        with when it must not be restarted."""
        service = self.children[index].service
        name = service.name
        if code in service.fatal_statuses:
            self.say(
                f"{name} exited with status {code}, a configuration error (see its "
                "message above): stopping"
            )
            return code
        if not service.restart:
            self.say(f"{name} exited with status {code}: stopping")
            return 1
        if not self._may_restart(name):
            self.say(f"{name} exited with status {code} and keeps failing: stopping")
            return 1
        delay = min(MAX_RESTART_DELAY, 2.0 ** (len(self._restarts[name]) - 1))
        self.say(f"{name} exited with status {code}; restarting in {delay:.0f} s")
        if self._stop.wait(delay):
            return None
        try:
            self._restart(index)
        except Interrupted:
            return None
        except StartupError as exc:
            # The failed process stays in its place: the next round restarts it again.
            self.say(f"{name} could not be restarted: {exc}")
        return None

    def _may_restart(self, name: str) -> bool:
        now = time.monotonic()
        recent = [t for t in self._restarts.get(name, []) if now - t < self.restart_window]
        recent.append(now)
        self._restarts[name] = recent
        return len(recent) <= self.max_restarts

    def _restart(self, index: int) -> None:
        """Start the service at ``index`` again, in its predecessor's place (the order of the
        stop), and wait until it is ready; one that does not get ready is ended."""
        child = self._launch(self.children[index].service)
        self.children[index] = child
        try:
            self._wait_ready(child)
        except StartupError:
            self._terminate(child.process, child.service.stop_timeout)
            raise

    def stop_all(self) -> None:
        """Stop every service, the last started first (a run of services of the same
        ``stop_group`` side by side)."""
        waves: list[list[Child]] = []
        for child in reversed(self.children):
            group = child.service.stop_group
            if waves and group is not None and waves[-1][0].service.stop_group == group:
                waves[-1].append(child)
            else:
                waves.append([child])
        for wave in waves:
            running = [c for c in wave if c.process.poll() is None]
            if running:
                self.say("stopping " + ", ".join(c.service.name for c in running))
            stoppers = [
                threading.Thread(
                    target=self._terminate,
                    args=(c.process, 0.0 if self._force else c.service.stop_timeout),
                )
                for c in wave
            ]
            for thread in stoppers:
                thread.start()
            for thread in stoppers:
                thread.join()
            for child in wave:
                if child.reader is not None:
                    child.reader.join(2.0)
        self.children.clear()

    def _terminate(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        """SIGTERM the process group, wait up to ``timeout`` (a second Ctrl-C cuts it
        short), then SIGKILL whatever is left of the group."""
        group = process.pid
        if process.poll() is None:
            _signal_group(group, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while process.poll() is None and time.monotonic() < deadline and not self._force:
                time.sleep(0.05)
        _signal_group(group, signal.SIGKILL)  # stragglers of the group (e.g. rq's scheduler)
        if process.poll() is None:
            process.wait(5.0)


def _signal_group(group: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
