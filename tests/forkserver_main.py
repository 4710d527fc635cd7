"""The fork server (zygote) of :mod:`tests.forkserver`: a Python that has imported the heavy
libraries once, and forks a child per ``python manage.py …``, ``python -m module …`` or
``python -c code …`` a test starts — and the pytest-xdist workers themselves — instead of a fresh
interpreter importing them again.

Started by :mod:`tests.forkserver` as ``python -m tests.forkserver_main FD``: FD is its end of a
``SOCK_SEQPACKET`` socket pair, the control socket. Each message on it is one request, of one of
two kinds. A spawn request: JSON (``args``, ``env``, ``cwd``, ``start_new_session``,
``pass_fds``) and the file descriptors: the child's stdin, stdout and stderr, the requester's
end of a socket pair of the child's own (its report socket), on which the server answers
``pid N`` (or ``error MESSAGE``) and later ``exit STATUS`` (the raw wait status) once it has
reaped the child, then the ``pass_fds`` (the child has them at those numbers). An attach request
(``{"attach": true}`` and one file descriptor): a channel, a control socket of one requester's
own, on which it sends its spawn requests from then on; the end of a channel (its requester
closed it or died) kills the children spawned through it. The end of the control socket (every
process holding its other end closed it or died) is the end of the server: it kills its children
(their sessions) and reaps them first, so that none outlives the tests. Each message is one
request, so several processes may share the control socket (a pytest-xdist controller and its
workers, :mod:`tests.forkserver`); each spawn takes the server a fork, never a wait on a
requester.

The child undoes what is the server's before it runs the command: the signal handlers the server
set, its sockets; it takes its stdio, environment, working directory and session from the
request, builds ``sys.argv``, ``sys.path`` and ``sys.stdin/stdout/stderr`` as a Python started
in that environment would (PYTHONPATH, PYTHONUNBUFFERED and ``-u``, PYTHONDONTWRITEBYTECODE and
``-B``: ``sys.flags`` stays the server's), and runs the command in a fresh ``__main__`` from
:func:`main`, the bottom of its stack: an exit, an uncaught exception or KeyboardInterrupt ends it
as it ends ``python …`` (the exit code; 1 and the traceback; death by SIGINT), atexit handlers
and non-daemon threads included.

What a fork cannot redo is refused (the request fails, loudly): a request whose environment
differs from the server's in a variable the interpreter reads only as it starts, or one the
preloaded libraries read as they are imported (:data:`FIXED_VARS`). Each child shares the
server's hash seed (``PYTHONHASHSEED``); ``random`` reseeds itself at a fork. The preloaded
objects are frozen out of the garbage collector's reach (``gc.freeze``) before the forks: a
child's collections and its exit do not walk (and so copy) the server's heap — a tenth of a
second instead of more than half a second per child. They stay frozen in the child (nothing the
tests run calls ``gc.unfreeze``); the child's own objects are collected as usual.
"""

from __future__ import annotations

import builtins
import fcntl
import gc
import io
import json
import os
import select
import signal
import socket
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import settings_probe
from tests.settings_probe import check_fork_safe, preload

ROOT = Path(__file__).resolve().parent.parent

#: Imported before the forks: the settings probe's (tests/settings_probe.py), and the libraries
#: of the bot and the delivery; they read neither the settings nor the environment that matters
#: (:data:`FIXED_VARS`) when imported, and start no thread.
PRELOAD = (
    *settings_probe.PRELOAD,
    "pydantic",
    "aiohttp",
    "aiohttp.web",
    "vkbottle",
    "vkbottle_types",
)

#: Variables a child's environment must have as the server's: the interpreter reads them only
#: as it starts (PYTHONPATH, PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE it can follow, see
#: :class:`Child`), the preloaded libraries as they are imported (found by recording the reads
#: of ``os.environ`` during :data:`PRELOAD`'s imports; wsgiref's copy of the whole environment,
#: it is taken again in the child).
FIXED_PREFIXES = ("PYTHON", "AIOHTTP_", "LOGURU_")
FIXED_VARS = {
    "RQ_KEY_PREFIX",
    "FAKEREDIS_LUA_VERSION",
    "PYDANTIC_DISABLE_PLUGINS",
    "FROZENLIST_NO_EXTENSIONS",
    "MULTIDICT_NO_EXTENSIONS",
    "PROPCACHE_NO_EXTENSIONS",
    "YARL_NO_EXTENSIONS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SSLKEYLOGFILE",
}
FOLLOWED_VARS = {"PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"}

MAX_REQUEST = 1 << 20
#: The most file descriptors a spawn request may pass on (``pass_fds``), beside its four.
MAX_PASS_FDS = 8
#: The interpreter's options a command may start with (xdist's workers: ``python -u -c …``).
FLAGS = ("-u", "-B")


def split_flags(args: list[str]) -> tuple[set[str], list[str]]:
    """The leading :data:`FLAGS` of ``args``, and the rest."""
    flags: set[str] = set()
    while args and args[0] in FLAGS:
        flags.add(args[0])
        args = args[1:]
    return flags, args


def refusal(request: dict[str, object], own: dict[str, str]) -> str | None:
    """Why ``request`` cannot be forked from this server, or None."""
    env = request["env"]
    assert isinstance(env, dict)
    names = {n for n in set(env) | set(own) if n.startswith(FIXED_PREFIXES) or n in FIXED_VARS}
    differ = sorted(n for n in names - FOLLOWED_VARS if env.get(n) != own.get(n))
    if differ:
        return f"the environment differs from the fork server's in {differ}: start a process"
    assert isinstance(request["args"], list)
    _, args = split_flags(request["args"])
    if (
        not args
        or (args[0].startswith("-") and args[0] not in ("-m", "-c"))
        or (args[0] in ("-m", "-c") and len(args) < 2)
    ):
        return f"not a command the fork server runs: python {request['args']}"
    cwd = request["cwd"]
    assert isinstance(cwd, str)
    if not os.path.isdir(cwd):
        return f"no directory {cwd}"
    return None


@dataclass
class Spawned:
    """A child: its report socket, whether it leads a session, the socket it was asked on."""

    report: socket.socket
    leader: bool
    asked_on: socket.socket


@dataclass
class Server:
    control: socket.socket
    wakeup: tuple[int, int]
    environ: dict[str, str]
    channels: list[socket.socket] = field(default_factory=list)
    children: dict[int, Spawned] = field(default_factory=dict)

    def serve(self) -> Child | None:
        """Serve until the control socket ends; returns only in a forked child, its command."""
        pid = os.getpid()
        try:
            while True:
                readers: list[Any] = [self.control, self.wakeup[0], *self.channels]
                ready = select.select(readers, [], [])[0]
                if self.wakeup[0] in ready:
                    while True:
                        try:
                            os.read(self.wakeup[0], 512)
                        except BlockingIOError:
                            break
                    self.reap(os.WNOHANG)
                for sock in ready:
                    if sock is self.wakeup[0]:
                        continue
                    message, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 4 + MAX_PASS_FDS)
                    if not message:
                        if sock is self.control:
                            return None
                        self.detach(sock)
                        continue
                    request = json.loads(message)
                    if request.get("attach"):
                        for fd in fds[1:]:
                            os.close(fd)
                        if fds:
                            self.channels.append(socket.socket(fileno=fds[0]))
                        continue
                    child = self.spawn(request, fds, sock)
                    if child is not None:
                        return child
        finally:
            if os.getpid() == pid:  # the server, not a child returning its command
                self.end_children(list(self.children))

    def spawn(
        self, request: dict[str, object], fds: list[int], asked_on: socket.socket
    ) -> Child | None:
        stdio, report, passed = fds[:3], socket.socket(fileno=fds[3]), fds[4:]
        targets = request.get("pass_fds") or []
        assert isinstance(targets, list)
        problem = refusal(request, self.environ)
        if len(targets) != len(passed) or not all(isinstance(n, int) and n > 2 for n in targets):
            problem = f"pass_fds {targets} and {len(passed)} file descriptors passed"
        if problem is not None:
            report.send(f"error {problem}".encode())
            report.close()
            for fd in stdio + passed:
                os.close(fd)
            return None
        check_fork_safe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sockets = [report, self.control, *self.channels]
            sockets += [c.report for c in self.children.values()]
            return Child(
                request,
                stdio,
                list(zip(passed, targets, strict=True)),
                sockets,
                self.wakeup,
                self.environ.get("PYTHONPATH", ""),
            )
        for fd in stdio + passed:
            os.close(fd)
        self.children[pid] = Spawned(report, bool(request["start_new_session"]), asked_on)
        try:
            report.send(f"pid {pid}".encode())
        except OSError:
            pass  # the requester is gone: the child runs on, as a real one would
        return None

    def detach(self, channel: socket.socket) -> None:
        """A channel's end: the children spawned through it are killed (reaped as they end)."""
        self.channels.remove(channel)
        self.end_children(
            [p for p, c in self.children.items() if c.asked_on is channel], reap=False
        )
        channel.close()

    def reap(self, flags: int) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, flags)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is not None:
                try:
                    child.report.send(f"exit {status}".encode())
                except OSError:
                    pass
                child.report.close()

    def end_children(self, pids: list[int], *, reap: bool = True) -> None:
        """SIGKILL to the children ``pids`` (their sessions, for those leading one), and reap
        every child (``reap``)."""
        for pid in pids:
            try:
                if self.children[pid].leader:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if reap:
            self.reap(0)


class Child:
    """A forked child's command, run as ``python ARGS`` would run it."""

    def __init__(
        self,
        request: dict[str, object],
        stdio: list[int],
        passed: list[tuple[int, int]],
        sockets: list[socket.socket],
        wakeup: tuple[int, int],
        server_pythonpath: str,
    ) -> None:
        self.server_pythonpath = server_pythonpath
        # The server's first: its signal handlers, its sockets and pipe.
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sock in sockets:
            sock.close()
        for fd in wakeup:
            os.close(fd)
        if request["start_new_session"]:
            os.setsid()
        place_fds(stdio, passed)
        env = request["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update(env)
        cwd = request["cwd"]
        assert isinstance(cwd, str)
        os.chdir(cwd)
        if "wsgiref.handlers" in sys.modules:  # its copy of the environment, taken at import
            handlers = sys.modules["wsgiref.handlers"]
            handlers.BaseHandler.os_environ = handlers.read_environ()
        args = request["args"]
        assert isinstance(args, list)
        flags, rest = split_flags([str(a) for a in args])
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE")) or "-B" in flags
        reopen_stdio(unbuffered=bool(env.get("PYTHONUNBUFFERED")) or "-u" in flags)
        self.args: list[str] = rest

    def run(self) -> None:
        """Run the command in a fresh ``__main__``; what it raises is raised."""
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        option, rest = self.args[0], self.args[1:]
        if option == "-m":
            self.set_path(os.getcwd())
            sys.argv = ["-m", *rest[1:]]
            import runpy

            runpy._run_module_as_main(rest[0])  # type: ignore[attr-defined]
        elif option == "-c":
            self.set_path("")
            sys.argv = ["-c", *rest[1:]]
            exec(compile(rest[0], "<string>", "exec", dont_inherit=True), main.__dict__)
        else:
            path = os.path.abspath(option)
            self.set_path(os.path.dirname(os.path.realpath(path)))
            sys.argv = [option, *rest]
            main.__dict__.update(__file__=path, __cached__=None)
            with io.open_code(path) as file:
                source = file.read()
            exec(compile(source, path, "exec", dont_inherit=True), main.__dict__)

    def set_path(self, first: str) -> None:
        """``sys.path`` as a Python started with the child's environment has it: ``first`` (the
        script's folder, the working directory for ``-m``, ``''`` for ``-c``), PYTHONPATH's
        entries, then the rest (the server's, without its first entry and its PYTHONPATH's)."""
        own = {p for p in self.server_pythonpath.split(os.pathsep) if p}
        rest = [p for p in sys.path[1:] if p not in own]
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [first, *extra, *rest]


def place_fds(stdio: list[int], passed: list[tuple[int, int]]) -> None:
    """Put the received ``stdio`` at 0–2 and each passed file descriptor at its number (as
    ``subprocess``'s ``pass_fds`` keeps it, inheritable); close what was received. The passed
    ones are first moved above every number in play: a received one may sit at another's."""
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    floor = max([2, *(n for pair in passed for n in pair)]) + 1
    moved = [(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor), target) for fd, target in passed]
    for fd in {*stdio, *(fd for fd, _ in passed)}:
        if fd > 2:
            os.close(fd)
    for fd, target in moved:
        os.dup2(fd, target)
        os.close(fd)


def reopen_stdio(*, unbuffered: bool) -> None:
    """New ``sys.stdin``, ``sys.stdout``, ``sys.stderr`` on fds 0–2, buffered as the interpreter
    buffers them at its start: line by line on a terminal and for stderr, not at all under
    PYTHONUNBUFFERED (the server's were made for its own fds)."""
    streams = []
    for fd, name in ((0, "<stdin>"), (1, "<stdout>"), (2, "<stderr>")):
        old = (sys.stdin, sys.stdout, sys.stderr)[fd]
        writing = fd > 0
        buffer: io.RawIOBase | io.BufferedIOBase
        raw = io.FileIO(fd, "wb" if writing else "rb", closefd=False)
        raw.name = name
        if unbuffered and writing:
            buffer = raw
        else:
            buffer = io.BufferedWriter(raw) if writing else io.BufferedReader(raw)
        line_buffering = not unbuffered and (raw.isatty() or fd == 2)
        stream = io.TextIOWrapper(
            buffer,
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=line_buffering,
            write_through=unbuffered and writing,
        )
        stream.mode = "w" if writing else "r"  # type: ignore[misc]
        streams.append(stream)
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def main() -> None:
    """The server; in a forked child, its command, run from here: nothing of the server's is
    left on the stack below it to catch what the command raises."""
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the tests' to handle
    environ = dict(os.environ)
    preload(PRELOAD)
    extra = {int(fd) for fd in os.listdir("/proc/self/fd")} - {0, 1, 2, control.fileno()}
    assert len(extra) == 1, f"files left open by the imports: {extra}"  # 1: the listing's own
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    os.set_blocking(wakeup[0], False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    check_fork_safe()
    gc.freeze()  # the preloaded heap: left alone by the children's collections
    child = Server(control, wakeup, environ).serve()
    if child is not None:
        del control, environ, wakeup
        child.run()


if __name__ == "__main__":
    main()
