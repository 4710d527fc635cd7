"""The fork server of the tests (tests/forkserver.py): its children end, print and see what
``python …`` would, and none outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.process_support import alive

PY = sys.executable


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
    with log.open("wb") as out:
        process = forkserver.Popen(
            [PY, "-c", "import sys; print(sys.stdin.read().upper()); print('e', file=sys.stderr)"],
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


def test_its_children_end_with_it() -> None:
    """Last: it ends this process's fork server (the next use starts another)."""
    process = forkserver.Popen([PY, "-c", "import time; time.sleep(60)"])
    assert process.poll() is None
    forkserver.shutdown()
    assert process.wait(10) == -signal.SIGKILL
    assert not alive(process.pid)
