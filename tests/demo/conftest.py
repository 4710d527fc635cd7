"""Fixtures of the demo's tests: ``manage.py demo`` as a real subprocess on free ports with a
temporary data folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import forkserver
from tests.process_support import (  # noqa: F401 - the demo tests import them from here
    PROJECT,
    LoggedProcess,
    alive,
    child_pids,
    free_port,
)

#: Variables of the test run that must not leak into the demo (it uses its own SQLite file
#: and Redis stand-in; the settings module is the project's).
SCRUBBED = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DATA_DIR")


@dataclass
class Demo(LoggedProcess):
    """A running ``manage.py demo``."""

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


def start_demo(data_dir: Path, *extra: str, ports: tuple[int, int, int] | None = None) -> Demo:
    web, vk, redis = ports or (free_port(), free_port(), free_port())
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    log = data_dir / f"demo-{int(time.time() * 1000)}.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        # The demo command forked by the fork server; the processes it starts are its own.
        process = forkserver.Popen(
            [
                sys.executable,
                "manage.py",
                "demo",
                "--data-dir",
                str(data_dir),
                "--web-port",
                str(web),
                "--vk-port",
                str(vk),
                "--redis-port",
                str(redis),
                *extra,
            ],
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
