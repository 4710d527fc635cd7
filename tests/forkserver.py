"""Processes a test starts — ``python manage.py …``, ``python -m module …``, ``python -c …`` —
forked from a Python that has imported the heavy libraries already (vkbottle's thousands of
pydantic models alone take 2.5 CPU-s to import), instead of a fresh interpreter importing them
again: :class:`Popen`, in place of :class:`subprocess.Popen`; and the pytest-xdist workers
themselves (:func:`fork_xdist_workers`).

The fork server (tests/forkserver_main.py) is started at the first :class:`Popen` of a process,
as its child, with the environment the process has then; it serves that process until its end
(:func:`shutdown`, from tests/conftest.py; or the process dies, closing its control socket),
killing then the children still running. Under pytest-xdist the controller starts it, before
the workers: it forks them (their stdin and stdout are execnet's pipes, their stderr the
controller's), and each worker sends its tests' :class:`Popen` requests to it as well, on a
channel of its own (:data:`SHARED_VAR`) — one server, and one preload, for the whole session. A
worker's :func:`shutdown` closes its channel (the server kills the children it asked for); the
controller's ends the server once every worker is gone. A process started otherwise (plain
``pytest``, ``make test-fast``'s workers when not forked) has a server of its own.

A child takes its environment, working directory, stdio and session from the :class:`Popen`, and
exits as ``python …`` would; the differences from a fresh interpreter (its parent is the server,
a hash seed shared with the server, the preloaded modules in ``sys.modules``, frozen out of the
garbage collector's reach) are described there.

Tests whose point is a fresh interpreter (import order, what is imported, the product's own
launchers) start real processes with :mod:`subprocess`.
"""

from __future__ import annotations

import json
import os
import select
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tests.forkserver_main import MAX_PASS_FDS, split_flags

ROOT = Path(__file__).resolve().parent.parent

#: In a process the fork server forked for a process that shares the server with it (a
#: pytest-xdist worker, :func:`fork_xdist_workers`): ``"SERVER_PID CONTROL_FD LOG_FD"``, the
#: server, and this process's file descriptors of the server's control socket and of its log.
#: Taken out of the environment as this module is imported: the processes it starts do not
#: have those file descriptors.
SHARED_VAR = "TESTS_FORKSERVER"


@dataclass
class _Shared:
    """The fork server this process shares with the one that had it forked."""

    server_pid: int
    control: socket.socket
    log_fd: int
    pid: int  # this process's: a fork of it does not share the server (it has one of its own)


def _adopt_shared() -> _Shared | None:
    """The fork server :data:`SHARED_VAR` names, if this process is the one it was named for
    (a child of that server, holding a socket at the number named)."""
    value = os.environ.pop(SHARED_VAR, None)
    if value is None:
        return None
    server_pid, control_fd, log_fd = (int(n) for n in value.split())
    try:
        if os.getppid() != server_pid or not stat.S_ISSOCK(os.fstat(control_fd).st_mode):
            return None
    except OSError:  # not open
        return None
    control = socket.socket(fileno=control_fd)
    if control.family != socket.AF_UNIX or control.type != socket.SOCK_SEQPACKET:
        control.detach()
        return None
    control.set_inheritable(False)
    os.set_inheritable(log_fd, False)
    return _Shared(server_pid, control, log_fd, os.getpid())


_shared = _adopt_shared()


class _Link:
    """What this process's requests go through: a control socket to a fork server."""

    control: socket.socket
    log_fd: int
    pid: int  # the process it serves

    def request(self, request: dict[str, Any], fds: list[int]) -> None:
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
        except OSError as error:
            raise RuntimeError(f"the fork server is gone: {error}\n{self.output()}") from None

    def output(self) -> str:
        """The end of the server's output (read in place: the server may still be writing)."""
        size = os.fstat(self.log_fd).st_size
        start = max(0, size - 6000)
        return os.pread(self.log_fd, size - start, start).decode(errors="replace")

    def alive(self) -> bool:
        return True

    def sharing(self) -> tuple[int, socket.socket, int]:
        """The server's pid, its control socket and its log, for a process it forks to share
        it (:data:`SHARED_VAR`)."""
        raise NotImplementedError

    def close(self) -> None:
        self.control.close()


class _Server(_Link):
    """The fork server of this process, with its control socket."""

    def __init__(self) -> None:
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log: IO[bytes] = tempfile.TemporaryFile()
        self.log_fd = self.log.fileno()
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

    def alive(self) -> bool:
        return self.process.poll() is None

    def sharing(self) -> tuple[int, socket.socket, int]:
        return self.process.pid, self.control, self.log_fd

    def close(self) -> None:
        """Its end: once every other holder of the control socket (the processes it forked to
        share it) has closed it too; its children are killed."""
        self.control.close()
        try:
            self.process.wait(60)
        finally:
            self.log.close()


class _Channel(_Link):
    """This process's channel to the fork server it shares: its requests; at its end, the
    server kills the children still running that this process asked for."""

    def __init__(self, shared: _Shared) -> None:
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control, self.log_fd, self.pid = mine, shared.log_fd, os.getpid()
        self.shared = shared
        # Asked for on the shared control socket; the spawn requests then go on the channel.
        with its:
            try:
                socket.send_fds(shared.control, [b'{"attach": true}'], [its.fileno()])
            except OSError as error:
                mine.close()
                raise RuntimeError(f"the shared fork server is gone: {error}") from None

    def sharing(self) -> tuple[int, socket.socket, int]:
        return self.shared.server_pid, self.shared.control, self.log_fd


_server: _Link | None = None
_lock = threading.Lock()


def _the_server() -> _Link:
    global _server
    if _server is None or _server.pid != os.getpid() or not _server.alive():
        if _shared is not None and _shared.pid == os.getpid():
            _server = _Channel(_shared)
        else:
            _server = _Server()
    return _server


def shared_server() -> int | None:
    """The pid of the fork server this process shares with the one that had it forked (a
    pytest-xdist worker's: the controller's), or None."""
    return _shared.server_pid if _shared is not None and _shared.pid == os.getpid() else None


def shutdown() -> None:
    """End this process's use of its fork server: the children it asked for still running are
    killed. A server of its own ends, and is waited for: its CPU time, and its children's, is
    then this process's (``/usr/bin/time``); a shared one serves on (the next :class:`Popen`
    opens another channel). Workers are no longer forked (:func:`fork_xdist_workers`)."""
    global _server
    with _lock:
        _stop_forking_xdist_workers()
        if _server is not None and _server.pid == os.getpid():
            _server.close()
        _server = None


class Popen(subprocess.Popen[Any]):
    """:class:`subprocess.Popen` of ``[sys.executable, …]`` whose child the fork server forks:
    the same arguments (``preexec_fn``, ``shell``, users and groups excepted; at most
    :data:`~tests.forkserver_main.MAX_PASS_FDS` ``pass_fds``), pipes,
    ``wait``/``poll``/``communicate``, signals and ``returncode``. Its ``pid`` is the child's:
    ``os.kill`` and, with ``start_new_session``, ``os.killpg`` reach it."""

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
        unsupported = (executable, preexec_fn, shell, gid, gids, uid)
        if any(unsupported) or umask >= 0 or process_group >= 0:
            raise ValueError(f"the fork server does not take these arguments: {unsupported}")
        passed = sorted(set(pass_fds))
        if len(passed) > MAX_PASS_FDS or any(fd < 3 for fd in passed):
            raise ValueError(f"the fork server passes on 3 to {MAX_PASS_FDS} fds: {passed}")
        if not args or args[0] != sys.executable:
            raise ValueError(f"not a command the fork server runs: {args}")
        request = {
            "args": args[1:],
            "env": {os.fsdecode(k): os.fsdecode(v) for k, v in (env or os.environ).items()},
            "cwd": os.path.abspath(os.fsdecode(cwd) if cwd is not None else os.getcwd()),
            "start_new_session": bool(start_new_session),
            "pass_fds": passed,
        }
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            ends = [p2cread, c2pwrite, errwrite]
            stdio = [fd if fd != -1 else n for n, fd in enumerate(ends)]  # -1: inherited
            with its, _lock:
                _the_server().request(request, [*stdio, its.fileno(), *passed])
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


def _worker(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """execnet's ``Popen`` of a popen worker: ``python -u [-B] -c BOOTSTRAP`` is forked by this
    process's fork server, and handed the server to share (:data:`SHARED_VAR`); any other
    command is started as execnet starts it."""
    flags, rest = split_flags(list(args[1:]))
    if args[0] != sys.executable or not rest or rest[0] != "-c" or "env" in kwargs:
        return subprocess.Popen(args, **kwargs)
    with _lock:
        server_pid, control, log_fd = _the_server().sharing()
    env = {**os.environ, SHARED_VAR: f"{server_pid} {control.fileno()} {log_fd}"}
    return Popen(args, env=env, pass_fds=(control.fileno(), log_fd), **kwargs)


class _Forking:
    """An execnet execution model as it is, but for its ``subprocess``: ``Popen`` is
    :func:`_worker`."""

    subprocess = types.SimpleNamespace(PIPE=subprocess.PIPE, Popen=_worker)

    def __init__(self, model: Any) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


_execnet_init: Any = None


def fork_xdist_workers() -> None:
    """Have this process's pytest-xdist popen workers forked by its fork server, started
    before them, instead of started afresh (each importing the heavy libraries again); each
    then shares that server for its tests' :class:`Popen`. Only in the controller, before it
    spawns the workers (tests/conftest.py); undone by :func:`shutdown`.

    execnet spawns such a worker in ``Popen2IOMaster.__init__(args, execmodel)`` with
    ``execmodel.subprocess.Popen(args, stdout=PIPE, stdin=PIPE)``, ``args`` being
    ``[sys.executable, "-u", ("-B",) "-c", BOOTSTRAP]``: that ``__init__`` is given the
    execution model seen through :class:`_Forking`, then keeps the model itself."""
    global _execnet_init
    from execnet import gateway_io

    if _execnet_init is not None:
        return
    original: Any = gateway_io.Popen2IOMaster.__init__
    _execnet_init = original

    def __init__(self: Any, args: list[str], execmodel: Any) -> None:
        original(self, args, _Forking(execmodel))
        self.execmodel = execmodel  # the gateway takes its model from its IO

    gateway_io.Popen2IOMaster.__init__ = __init__  # type: ignore[method-assign]


def _stop_forking_xdist_workers() -> None:
    global _execnet_init
    if _execnet_init is not None:
        from execnet import gateway_io

        gateway_io.Popen2IOMaster.__init__ = _execnet_init  # type: ignore[method-assign]
        _execnet_init = None


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
