"""Fixtures of the demo's tests: ``manage.py demo`` as a real subprocess on free ports with a
temporary data folder."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
#: Variables of the test run that must not leak into the demo (it uses its own SQLite file
#: and Redis stand-in; the settings module is the project's).
SCRUBBED = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DATA_DIR")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Demo:
    """A running ``manage.py demo``."""

    process: subprocess.Popen[bytes]
    log: Path
    data_dir: Path
    web_port: int
    vk_port: int
    redis_port: int
    children: list[int] = field(default_factory=list)

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def vk_url(self) -> str:
        return f"http://127.0.0.1:{self.vk_port}"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output())
            if match:
                return match
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(
            f"{pattern!r} not in the demo's output after {timeout:.0f} s "
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


def start_demo(data_dir: Path, *extra: str, ports: tuple[int, int, int] | None = None) -> Demo:
    web, vk, redis = ports or (free_port(), free_port(), free_port())
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    log = data_dir / f"demo-{int(time.time() * 1000)}.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--data-dir", str(data_dir),
             "--web-port", str(web), "--vk-port", str(vk), "--redis-port", str(redis), *extra],
            cwd=PROJECT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a stray Ctrl-C in the terminal does not reach it
        )
    return Demo(process, log, data_dir, web, vk, redis)


@pytest.fixture
def demo_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "demo"
