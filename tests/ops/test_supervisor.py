"""The process supervisor of ``make demo`` and ``make run`` with small stand-in processes:
readiness, prefixed output, restarts, and a stop that leaves nothing running — not even when
the supervisor itself is killed."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import cast

import pytest

from bench.procs import ProcessError, wait_for
from ops import supervisor as sup
from ops.supervisor import Child, Interrupted, Service, StartupError, Supervisor
from tests.process_support import PROJECT, alive

pytestmark = pytest.mark.slow

PY = sys.executable


def script(code: str) -> list[str]:
    return [PY, "-u", "-c", textwrap.dedent(code)]


def make(out: io.StringIO | None = None) -> Supervisor:
    return Supervisor(env=dict(os.environ), cwd=str(PROJECT), out=out or io.StringIO(), color=False)


SLEEPER = script("""
    import time
    print("ready", flush=True)
    time.sleep(600)
""")


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    try:
        wait_for(lambda: not alive(pid), timeout=timeout, what=f"process {pid} to end")
    except ProcessError:
        return False
    return True


def test_services_start_when_ready_and_their_output_is_prefixed() -> None:
    out = io.StringIO()
    supervisor = make(out)
    ready_file_probe = {"n": 0}

    def probe() -> bool:
        ready_file_probe["n"] += 1
        return ready_file_probe["n"] >= 3

    try:
        first, second = supervisor.start_group(
            [
                Service("alpha", SLEEPER, ready_line=r"^ready$"),
                Service("beta", SLEEPER, probe=probe),
            ]
        )
        assert first.ready.is_set() and second.ready.is_set()
        supervisor.run_step("setup", script("print('Готово'); print('hidden?')"))
        supervisor.say("hello")
    finally:
        supervisor.stop_all()
    lines = out.getvalue().splitlines()
    assert "alpha   | ready" in lines
    assert "setup   | Готово" in lines
    assert "supervisor| hello" in lines
    assert not alive(first.process.pid) and not alive(second.process.pid)


def test_muted_lines_are_hidden_unless_verbose() -> None:
    for verbose, shown in ((False, False), (True, True)):
        out = io.StringIO()
        supervisor = Supervisor(
            env=dict(os.environ), cwd=str(PROJECT), out=out, color=False, verbose=verbose
        )
        code = script(
            "print('x INFO rq.worker [1] Job OK'); print('ready'); import time; time.sleep(60)"
        )
        try:
            # The muted line comes before "ready": it was shown or hidden when start returns.
            supervisor.start(Service("worker", code, ready_line="ready", mute=r"INFO rq\."))
        finally:
            supervisor.stop_all()
        assert ("Job OK" in out.getvalue()) is shown


def test_a_failing_start_is_reported() -> None:
    supervisor = make()
    try:
        with pytest.raises(StartupError, match="exited with status 3 while starting") as info:
            supervisor.start(
                Service("crash", script("import sys; sys.exit(3)"), ready_line="never")
            )
        assert info.value.status == 3
        with pytest.raises(StartupError, match="not ready after 1 s"):
            supervisor.start(
                Service(
                    "slow",
                    script("import time; time.sleep(60)"),
                    ready_line="never",
                    ready_timeout=1,
                )
            )
        with pytest.raises(StartupError, match="failed with exit status 4"):
            supervisor.run_step("step", script("import sys; sys.exit(4)"))
    finally:
        supervisor.stop_all()


def test_a_stop_request_interrupts_the_start() -> None:
    supervisor = make()
    timer = threading.Timer(0.5, supervisor.request_stop)
    timer.start()
    try:
        with pytest.raises(Interrupted):
            supervisor.start(
                Service("slow", script("import time; time.sleep(60)"), ready_line="never")
            )
        with pytest.raises(Interrupted):
            supervisor.run_step("late", SLEEPER)
    finally:
        supervisor.stop_all()


def test_stop_kills_a_stubborn_service_and_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    stubborn = script(f"""
        import signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        print("ready", flush=True)
        time.sleep(600)
    """)
    graceful = script("""
        import signal, sys, time
        def bye(*args):
            print("bye", flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, bye)
        print("ready", flush=True)
        time.sleep(600)
    """)
    # The graceful one's timeout is twice the default, the stubborn one's 1 s.
    default = next(f.default for f in dataclasses.fields(Service) if f.name == "stop_timeout")
    assert isinstance(default, float)
    out = io.StringIO()
    supervisor = make(out)
    children = supervisor.start_group(
        [
            Service("graceful", graceful, ready_line="ready", stop_timeout=2 * default),
            Service("stubborn", stubborn, ready_line="ready", stop_timeout=1),
        ]
    )
    grandchild = int(pidfile.read_text())
    started = time.monotonic()
    supervisor.stop_all()
    # About 1 s: the stubborn one's timeout, then the graceful one ends at once. A stop that
    # gave the stubborn one the default timeout, or waited out the graceful one's, would take
    # longer than the default (10 s); the 9 s between them is for a loaded machine.
    assert time.monotonic() - started < default
    assert all(not alive(c.process.pid) for c in children)
    assert wait_dead(grandchild, 5)
    assert children[1].process.returncode == -signal.SIGKILL
    assert children[0].process.returncode == 0 and "graceful| bye" in out.getvalue()
    # The last started stops first.
    text = out.getvalue()
    assert text.index("stopping stubborn") < text.index("stopping graceful")


def test_a_crashed_service_is_restarted_then_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sup, "MAX_RESTARTS", 2)
    # Short waits: here the count of restarts matters; the back-off's growth has a test below.
    monkeypatch.setattr(sup, "MAX_RESTART_DELAY", 0.1)
    out = io.StringIO()
    supervisor = make(out)
    flaky = script("print('ready', flush=True); import time; time.sleep(0.3)")
    try:
        supervisor.start(Service("flaky", flaky, ready_line="ready"))
        status = supervisor.watch(poll=0.05)
    finally:
        supervisor.stop_all()
    assert status == 1
    text = out.getvalue()
    assert text.count("restarting in") == 2
    assert "keeps failing: stopping" in text


class RecordedWaits(threading.Event):
    """A stop event whose waits return at once (no stop requested), each recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return False


def test_the_wait_before_a_restart_doubles_up_to_the_longest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    supervisor = Supervisor(
        env=dict(os.environ), cwd=str(PROJECT), out=out, color=False, max_restarts=8
    )
    stop = RecordedWaits()
    monkeypatch.setattr(supervisor, "_stop", stop)
    restarted: list[int] = []
    monkeypatch.setattr(supervisor, "_restart", restarted.append)
    exited = Child(Service("flaky", ["unused"]), cast("subprocess.Popen[bytes]", None))
    supervisor.children.append(exited)
    for _ in range(8):
        assert supervisor._recover(0, 1) is None
    assert sup.MAX_RESTART_DELAY == 30.0
    assert stop.waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert restarted == [0] * 8
    assert re.findall(r"restarting in (\d+) s", out.getvalue()) == [
        "1", "2", "4", "8", "16", "30", "30", "30"
    ]  # fmt: skip
    assert supervisor._recover(0, 1) == 1  # the ninth exit within the window: given up
    assert "keeps failing: stopping" in out.getvalue()


def test_watch_returns_on_a_stop_request() -> None:
    supervisor = make()
    try:
        supervisor.start(Service("calm", SLEEPER, ready_line="ready"))
        threading.Timer(0.3, supervisor.request_stop).start()
        assert supervisor.watch(poll=0.05) == 0
    finally:
        supervisor.stop_all()


def test_services_die_with_a_killed_supervisor(tmp_path: Path) -> None:
    pidfile = tmp_path / "service"
    runner = script(f"""
        import io, os, time
        from ops.supervisor import Service, Supervisor
        s = Supervisor(env=dict(os.environ), cwd={str(PROJECT)!r}, out=io.StringIO())
        child = s.start(Service("sleeper", {SLEEPER!r}, ready_line="ready"))
        open({str(pidfile)!r}, "w").write(str(child.process.pid))
        print("started", flush=True)
        time.sleep(600)
    """)
    process = subprocess.Popen(runner, cwd=PROJECT, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"started"
        service = int(pidfile.read_text())
        assert alive(service)
        process.kill()  # SIGKILL: the supervisor cannot clean up
        process.wait(10)
        assert wait_dead(service, 10), "the service outlived its supervisor"
    finally:
        if process.poll() is None:
            process.kill()


def test_a_stop_group_stops_side_by_side(tmp_path: Path) -> None:
    # Each service, once it gets SIGTERM, says so (a file in term/) and exits only after every
    # service of the group has got one (then it leaves a file in bye/). Side by side, all three
    # are signalled at once and all leave. One after the other, the first would wait for
    # SIGTERMs that come only after it is killed at its stop timeout: it would never leave.
    # Nothing here depends on how fast the machine runs.
    (tmp_path / "term").mkdir()
    (tmp_path / "bye").mkdir()
    waiter = script("""
        import os, signal, sys, time
        name, folder = sys.argv[1], sys.argv[2]
        termed = []
        signal.signal(signal.SIGTERM, lambda *_: termed.append(True))
        print("ready", flush=True)
        while not termed:
            time.sleep(0.02)
        open(os.path.join(folder, "term", name), "w").close()
        while len(os.listdir(os.path.join(folder, "term"))) < 3:
            time.sleep(0.02)
        open(os.path.join(folder, "bye", name), "w").close()
    """)
    out = io.StringIO()
    supervisor = make(out)
    names = ("one", "two", "three")
    supervisor.start_group(
        [
            Service(
                name,
                [*waiter, name, str(tmp_path)],
                ready_line="ready",
                stop_timeout=30.0,
                stop_group="front",
            )
            for name in names
        ]
    )
    supervisor.stop_all()
    assert "stopping three, two, one" in out.getvalue()
    assert sorted(p.name for p in (tmp_path / "bye").iterdir()) == sorted(names), out.getvalue()


def test_steps_run_side_by_side_and_a_failure_ends_the_others() -> None:
    out = io.StringIO()
    supervisor = make(out)
    step = "import time; print('from', time.time()); time.sleep(1); print('to', time.time())"
    supervisor.run_steps([("one", script(step)), ("two", script(step))])
    text = out.getvalue()

    def span(name: str) -> tuple[float, float]:
        times = []
        for edge in ("from", "to"):
            found = re.search(rf"^{name} +\| {edge} (\S+)$", text, re.MULTILINE)
            assert found, text
            times.append(float(found[1]))
        return times[0], times[1]

    # Side by side: each started before the other ended (however slowly the machine runs).
    (one_from, one_to), (two_from, two_to) = span("one"), span("two")
    assert one_from < two_to and two_from < one_to, text
    started = time.monotonic()
    with pytest.raises(StartupError, match="broken failed with exit status 5") as info:
        supervisor.run_steps(
            [
                ("long", script("import time; time.sleep(60)")),
                ("broken", script("import sys; sys.exit(5)")),
            ]
        )
    assert info.value.status == 5
    assert time.monotonic() - started < 10


def test_a_configuration_error_stops_everything_without_a_restart() -> None:
    out = io.StringIO()
    supervisor = make(out)
    misconfigured = script("""
        import sys, time
        print("ready", flush=True)
        time.sleep(0.3)
        print("Configuration error: VK refused the long poll.", file=sys.stderr, flush=True)
        sys.exit(2)
    """)
    try:
        calm = supervisor.start(Service("calm", SLEEPER, ready_line="ready"))
        supervisor.start(Service("bot", misconfigured, ready_line="ready"))
        assert supervisor.watch(poll=0.05) == 2
    finally:
        supervisor.stop_all()
    text = out.getvalue()
    assert "bot     | Configuration error: VK refused the long poll." in text
    assert "bot exited with status 2, a configuration error" in text
    assert "restarting" not in text
    assert not alive(calm.process.pid)


def test_a_restart_that_does_not_get_ready_is_retried_then_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sup, "MAX_RESTART_DELAY", 0.1)
    marker = tmp_path / "started-once"
    # Ready the first time; every later start exits before it is ready.
    fragile = script(f"""
        import os, sys, time
        if os.path.exists({str(marker)!r}):
            sys.exit(7)
        open({str(marker)!r}, "w").close()
        print("ready", flush=True)
        time.sleep(0.2)
    """)
    out = io.StringIO()
    supervisor = Supervisor(
        env=dict(os.environ), cwd=str(PROJECT), out=out, color=False, max_restarts=3
    )
    try:
        supervisor.start(Service("fragile", fragile, ready_line="ready"))
        assert supervisor.watch(poll=0.05) == 1
    finally:
        supervisor.stop_all()
    text = out.getvalue()
    assert text.count("could not be restarted: fragile exited with status 7 while starting") == 3
    assert "fragile exited with status 7 and keeps failing: stopping" in text


def test_a_service_that_exits_fails_its_group_while_another_is_still_starting() -> None:
    supervisor = make()
    quitter = script("import sys, time; print('ready', flush=True); time.sleep(0.3); sys.exit(2)")
    started = time.monotonic()
    try:
        with pytest.raises(StartupError, match="quitter exited with status 2") as info:
            supervisor.start_group(
                [
                    Service(
                        "slow",
                        script("import time; time.sleep(60)"),
                        ready_line="never",
                        ready_timeout=30,
                    ),
                    Service("quitter", quitter, ready_line="ready"),
                ]
            )
    finally:
        supervisor.stop_all()
    assert info.value.status == 2
    assert time.monotonic() - started < 10  # not the slow one's 30 s
