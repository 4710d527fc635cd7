"""The fork server of the tests (tests/forkserver.py): its children end, print and see what
``python …`` would, and none outlives it; under pytest-xdist it forks the workers, which share
it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.process_support import alive

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent


def code(source: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return forkserver.run([PY, "-c", source], capture_output=True, text=True, timeout=30,
                          **kwargs)  # fmt: skip


@pytest.mark.parametrize(
    ("source", "returncode", "stderr"),
    [
        ("pass", 0, ""),
        ("import sys; sys.exit(7)", 7, ""),
        ("import sys; sys.exit('refused')", 1, "refused\n"),
        ("raise ValueError('broken')", 1, "ValueError: broken\n"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM, ""),
        ("raise KeyboardInterrupt", -signal.SIGINT, "KeyboardInterrupt\n"),
    ],
)
def test_a_child_ends_as_python_does(source: str, returncode: int, stderr: str) -> None:
    done = code(source)
    assert done.returncode == returncode
    assert done.stderr.endswith(stderr)
    assert ("Traceback" in done.stderr) == (returncode in (1, -signal.SIGINT) and "raise" in source)


def test_threads_are_joined_and_atexit_runs_at_the_end() -> None:
    done = code(
        "import atexit, threading, time\n"
        "atexit.register(lambda: print('atexit'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.1), print('thread'))).start()\n"
        "print('main')\n"
    )
    assert (done.returncode, done.stdout) == (0, "main\nthread\natexit\n")


def test_a_child_has_its_environment_directory_and_arguments(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    env.update(FORKSERVER_PROBE="one", PYTHONPATH=str(tmp_path))
    (tmp_path / "probe_module.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps([os.environ.get('FORKSERVER_PROBE'), os.environ.get('HOME'),\n"
        "                  os.getcwd(), sys.argv, sys.path[:2], __name__]))\n"
        "os.environ['FORKSERVER_PROBE'] = 'changed'\n"
    )
    runs = [
        forkserver.run(
            [PY, "-m", "probe_module", "a", "b"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )  # fmt: skip
        for _ in range(2)
    ]
    for done in runs:  # the second sees nothing of what the first changed
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == (
            f'["one", null, "{tmp_path}", ["{tmp_path}/probe_module.py", "a", "b"], '
            f'["{tmp_path}", "{tmp_path}"], "__main__"]'
        )
    script = tmp_path / "script.py"
    script.write_text("import sys; print(sys.argv, __file__, sys.path[0])\n")
    done = forkserver.run([PY, "script.py", "x"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    assert done.stdout == f"['script.py', 'x'] {script} {tmp_path}\n"
    assert "FORKSERVER_PROBE" not in os.environ


def test_stdout_to_a_file_stderr_with_it_and_stdin_from_a_pipe(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    # stdout flushed before stderr is written: to a file, stdout is block-buffered (unless
    # PYTHONUNBUFFERED), stderr line-buffered, as in a fresh interpreter.
    code = "import sys; print(sys.stdin.read().upper(), flush=True); print('e', file=sys.stderr)"
    with log.open("wb") as out:
        process = forkserver.Popen(
            [PY, "-c", code],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    process.communicate(b"piped", timeout=30)
    assert process.returncode == 0
    assert log.read_text() == "PIPED\ne\n"


def test_a_new_session_is_killed_with_killpg_and_wait_times_out() -> None:
    process = forkserver.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True)
    with process:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(0.05)
        assert process.poll() is None
        assert os.getsid(process.pid) == process.pid
        os.killpg(process.pid, signal.SIGKILL)
        assert process.wait(10) == -signal.SIGKILL


def test_what_a_fork_cannot_redo_is_refused() -> None:
    with pytest.raises(RuntimeError, match="PYTHONHASHSEED"):
        forkserver.Popen([PY, "-c", "pass"], env={**os.environ, "PYTHONHASHSEED": "12345"})
    with pytest.raises(ValueError, match="not a command"):
        forkserver.Popen(["/bin/true"])


def test_interpreter_options_and_passed_file_descriptors() -> None:
    source = (
        "import os, sys\n"
        "print(sys.dont_write_bytecode, sys.stdout.write_through, sys.argv)\n"
        "os.write(int(sys.argv[1]), b'one'); os.write(int(sys.argv[2]), b'two')\n"
    )
    pipes = [os.pipe(), os.pipe()]
    try:
        writers = [w for _, w in pipes]
        args = [PY, "-u", "-B", "-c", source, *map(str, writers)]
        done = forkserver.run(args, pass_fds=writers, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"True True ['-c', '{writers[0]}', '{writers[1]}']\n"
        assert [os.read(r, 16) for r, _ in pipes] == [b"one", b"two"]
    finally:
        for fds in pipes:
            for fd in fds:
                os.close(fd)


def test_a_worker_is_forked_by_the_server_its_tests_share() -> None:
    """Under ``make test``: this worker is a child of the controller's fork server, and the
    processes its tests start are forked by that same server."""
    server = forkserver.shared_server()
    if server is None:
        pytest.skip("not a pytest-xdist worker forked by the fork server")
    assert os.getppid() == server
    done = code("import os; print(os.getppid(), os.environ.get('TESTS_FORKSERVER'))")
    assert done.stdout == f"{server} None\n"
    assert forkserver.SHARED_VAR not in os.environ


@pytest.mark.slow
def test_a_session_forks_its_workers_and_leaves_no_process(tmp_path: Path) -> None:
    """A pytest-xdist session of its own, with tests/conftest.py's hooks: its workers are
    children of the fork server its controller starts, their tests' processes too; once it has
    ended, no process of it is left — not even one a test left running."""
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_unconfigure, pytest_xdist_setupnodes  # noqa: F401\n"
    )
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import json, os, sys
        from pathlib import Path

        import pytest

        from tests import forkserver

        @pytest.mark.parametrize("n", range(4))
        def test_record(n):
            left = forkserver.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            child = forkserver.run([sys.executable, "-c", "import os; print(os.getppid())"],
                                   capture_output=True, text=True, timeout=30)
            server = os.getppid()
            server_parent = Path(f"/proc/{server}/stat").read_text().rsplit(")", 1)[1].split()[1]
            record = {"worker": os.getpid(), "server": server, "shared": forkserver.shared_server(),
                      "server_parent": int(server_parent), "child_parent": int(child.stdout),
                      "left": left.pid}
            Path(os.environ["FORKSERVER_RECORDS"], f"{n}.json").write_text(json.dumps(record))
        """))  # fmt: skip
    records = tmp_path / "records"
    records.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_"))}
    env.update(PYTHONPATH=str(ROOT), FORKSERVER_RECORDS=str(records))
    options = ["-p", "no:django", "-p", "no:cacheprovider", "-n", "2"]
    with subprocess.Popen([PY, "-m", "pytest", "-q", *options, "test_inner.py"], cwd=tmp_path,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as session:  # fmt: skip
        try:
            output = session.communicate(timeout=120)[0]
        finally:
            if session.poll() is None:
                os.killpg(session.pid, signal.SIGKILL)
    assert session.returncode == 0, output
    assert "4 passed" in output, output
    found = [json.loads(path.read_text()) for path in sorted(records.iterdir())]
    assert len(found) == 4, output
    servers = {r["server"] for r in found}
    assert len(servers) == 1, found
    for record in found:
        assert record["server"] == record["shared"] == record["child_parent"], record
        assert record["server_parent"] == session.pid, record
    pids = servers | {r["worker"] for r in found} | {r["left"] for r in found}
    assert not [pid for pid in pids if alive(pid)], found


def test_its_children_end_with_it() -> None:
    """Last: it ends this process's fork server, or its channel to the one it shares (the next
    use starts another, or opens another)."""
    process = forkserver.Popen([PY, "-c", "import time; time.sleep(60)"])
    assert process.poll() is None
    forkserver.shutdown()
    assert process.wait(10) == -signal.SIGKILL
    assert not alive(process.pid)
