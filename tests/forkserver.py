"""Processes a test starts — ``python manage.py …``, ``python -m module …``, ``python -c …`` —
forked from a Python that has imported the heavy libraries already (vkbottle's thousands of
pydantic models alone take 2.5 CPU-s to import), instead of a fresh interpreter importing them
again: :class:`Popen`, in place of :class:`subprocess.Popen`.

The fork server (tests/forkserver_main.py) is started at the first :class:`Popen` of a test
process (a pytest-xdist worker), as its child, with the environment the test process has then;
it serves that process until its end (:func:`shutdown`, from tests/conftest.py; or the test
process dies, closing its control socket), killing then the children still running. A child
takes its environment, working directory, stdio and session from the :class:`Popen`, and exits
as ``python …`` would; the differences from a fresh interpreter (its parent is the server, a
hash seed shared with the server, the preloaded modules in ``sys.modules``) are described there.

Tests whose point is a fresh interpreter (import order, what is imported, the product's own
launchers) start real processes with :mod:`subprocess`.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent


class _Server:
    """The fork server of this process, with its control socket."""

    def __init__(self) -> None:
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log: IO[bytes] = tempfile.TemporaryFile()
        with its:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.forkserver_main", str(its.fileno())],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=self.log,
                stderr=subprocess.STDOUT,
                pass_fds=(its.fileno(),),
            )
        self.control = mine
        self.pid = os.getpid()

    def request(self, request: dict[str, Any], fds: list[int]) -> None:
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
        except OSError as error:
            raise RuntimeError(f"the fork server is gone: {error}\n{self.output()}") from None

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-6000:]

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(60)
        finally:
            self.log.close()


_server: _Server | None = None
_lock = threading.Lock()


def _the_server() -> _Server:
    global _server
    if _server is None or _server.pid != os.getpid() or _server.process.poll() is not None:
        _server = _Server()
    return _server


def shutdown() -> None:
    """End this process's fork server (its children still running are killed) and wait for
    it: its CPU time, and its children's, is then this process's (``/usr/bin/time``)."""
    global _server
    with _lock:
        if _server is not None and _server.pid == os.getpid():
            _server.close()
        _server = None


class Popen(subprocess.Popen[Any]):
    """:class:`subprocess.Popen` of ``[sys.executable, …]`` whose child the fork server forks:
    the same arguments (``preexec_fn``, ``pass_fds``, ``shell``, users and groups excepted),
    pipes, ``wait``/``poll``/``communicate``, signals and ``returncode``. Its ``pid`` is the
    child's: ``os.kill`` and, with ``start_new_session``, ``os.killpg`` reach it."""

    _report: socket.socket

    def _execute_child(
        self,
        args: Any,
        executable: Any,
        preexec_fn: Any,
        close_fds: bool,
        pass_fds: Any,
        cwd: Any,
        env: Any,
        startupinfo: Any,
        creationflags: Any,
        shell: bool,
        p2cread: int,
        p2cwrite: int,
        c2pread: int,
        c2pwrite: int,
        errread: int,
        errwrite: int,
        restore_signals: bool,
        gid: Any,
        gids: Any,
        uid: Any,
        umask: int,
        start_new_session: bool,
        process_group: Any,
    ) -> None:
        args = [os.fsdecode(a) for a in args]
        unsupported = (executable, preexec_fn, pass_fds, shell, gid, gids, uid)
        if any(unsupported) or umask >= 0 or process_group >= 0:
            raise ValueError(f"the fork server does not take these arguments: {unsupported}")
        if not args or args[0] != sys.executable:
            raise ValueError(f"not a command the fork server runs: {args}")
        request = {
            "args": args[1:],
            "env": {os.fsdecode(k): os.fsdecode(v) for k, v in (env or os.environ).items()},
            "cwd": os.path.abspath(os.fsdecode(cwd) if cwd is not None else os.getcwd()),
            "start_new_session": bool(start_new_session),
        }
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            ends = [p2cread, c2pwrite, errwrite]
            stdio = [fd if fd != -1 else n for n, fd in enumerate(ends)]  # -1: inherited
            with its, _lock:
                _the_server().request(request, [*stdio, its.fileno()])
            answer = mine.recv(65536).decode()
        except BaseException:
            mine.close()
            raise
        finally:
            self._close_pipe_fds(  # type: ignore[attr-defined]
                p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite
            )
        word, _, rest = answer.partition(" ")
        if word != "pid":
            mine.close()
            output = _server.output() if _server is not None else ""
            raise RuntimeError(f"the fork server did not start {args}: {answer!r}\n{output}")
        self._report = mine
        self.pid = int(rest)
        self._child_created = True

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        """The child's wait status, from the fork server (which has reaped it); ``(0, 0)``
        while it runs, with ``os.WNOHANG``."""
        if wait_flags & os.WNOHANG and not select.select([self._report], [], [], 0)[0]:
            return 0, 0
        answer = self._report.recv(64).decode()
        if not answer.startswith("exit "):
            raise ChildProcessError(f"the fork server is gone: {self.pid}'s status is unknown")
        self._report.close()
        return self.pid, int(answer.split()[1])

    def _internal_poll(self, _deadstate: int | None = None, **_: Any) -> int | None:
        if self.returncode is None:
            if not self._waitpid_lock.acquire(False):  # type: ignore[attr-defined]
                return None  # another thread is waiting
            try:
                if self.returncode is None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)  # type: ignore[attr-defined]
            finally:
                self._waitpid_lock.release()  # type: ignore[attr-defined]
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            try:
                ready = select.select([self._report], [], [], remaining)[0]
            except (ValueError, OSError):  # closed: another thread has taken the status
                ready = []
            if ready and self._internal_poll() is None:
                time.sleep(0.001)  # another thread is taking it
        return self.returncode


def run(
    args: list[str],
    *,
    input: str | bytes | None = None,  # noqa: A002 - subprocess.run's name
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` through :class:`Popen`."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with Popen(args, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        except BaseException:
            process.kill()
            raise
    completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed
