"""``make run`` (``manage.py serve``) starts the same processes
against VK with the tokens from the environment.

First the refusals: a configuration that cannot work is one English line on stderr, exit status
2 and nothing started. Then the real thing, against the local VK server (in this process) with
a fresh PostgreSQL database that serve migrates itself and a Redis of the test's own: a user's
«помощь» is answered (the bot reads the long poll, a worker delivers the Outbox), the panel
answers, and Ctrl-C leaves no process behind. In callback mode the web answers VK's
confirmation request and applies a pushed event, and no bot runs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
import psycopg
import pytest
from psycopg import sql

from bench.procs import ProcessError, process_tree, wait_for
from localvk import ServerThread
from ops.probes import free_port, http_status
from tests import forkserver
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, USER_TOKEN, make_state
from tests.process_support import PROJECT, LoggedProcess, alive, child_pids
from tests.redis_support import private_redis
from tests.settings_support import run_manage_named
from vkbot import replies

pytestmark = pytest.mark.slow

#: Variables of the test run that must not reach serve: it gets exactly what a test gives it.
PROJECT_VARS = re.compile(
    r"^(VK_|OUTBOX_|RUN_|DATABASE_URL$|REDIS_URL$|DATA_DIR$|DEBUG$|SECRET_KEY$|ALLOWED_HOSTS$"
    r"|CSRF_TRUSTED_ORIGINS$|BIND$|WEB_CONCURRENCY$|STATIC_ROOT$|DJANGO_SETTINGS_MODULE$"
    r"|DEADLINE_TICK_SECONDS$|LOG_LEVEL$|SECURE_|SESSION_COOKIE_SECURE$|CSRF_COOKIE_SECURE$)"
)
VK = {"VK_GROUP_ID": str(GROUP_ID), "VK_GROUP_TOKEN": GROUP_TOKEN, "VK_USER_TOKEN": USER_TOKEN}
#: Services the configuration checks never reach (they refuse first).
UNUSED_SERVICES = {
    "DATABASE_URL": "postgres://postgres@127.0.0.1:1/unused",
    "REDIS_URL": "redis://127.0.0.1:1/0",
}
SECRET = "callback-secret"
CONFIRMATION = "a1b2c3d4"
OUTSIDER = 4242
SERVE_REDIS_DB = 8


def serve_env(**values: str) -> dict[str, str]:
    """The test run's environment less the project's variables, DEBUG on (its default is off,
    which needs SECRET_KEY and ALLOWED_HOSTS), then ``values``."""
    env = {k: v for k, v in os.environ.items() if not PROJECT_VARS.match(k)}
    return {**env, "DEBUG": "true", **values}


# --- refusals -------------------------------------------------------------------------------

REFUSALS = {
    "no VK tokens": (
        {**UNUSED_SERVICES, "VK_GROUP_ID": "77"},
        (),
        "VK_GROUP_TOKEN and VK_USER_TOKEN are not set",
    ),
    "a community token without VK_GROUP_ID": (
        {**UNUSED_SERVICES, "VK_GROUP_TOKEN": GROUP_TOKEN},
        (),
        "VK_GROUP_TOKEN is set but VK_GROUP_ID is not: the environment's community needs its",
    ),
    "embedded default": (
        VK,
        (),
        "DATABASE_URL and REDIS_URL are not set: `make run` needs PostgreSQL and Redis",
    ),
    "SQLite": (
        {**VK, **UNUSED_SERVICES, "DATABASE_URL": "sqlite:////tmp/serve-refused.sqlite3"},
        (),
        "DATABASE_URL points at SQLite",
    ),
    "callback without its secret": (
        {**VK, **UNUSED_SERVICES, "VK_CONFIRMATION_CODE": CONFIRMATION},
        ("--callback",),
        "VK_CALLBACK_SECRET is not set: the Callback API",
    ),
    "PostgreSQL unreachable": (
        {**VK, **UNUSED_SERVICES},
        (),
        "DATABASE_URL: cannot connect to the database 'unused' on 127.0.0.1:1",
    ),
}


@pytest.fixture(scope="module")
def refusals() -> dict[str, tuple[int, str, str]]:
    """``manage.py serve`` with each configuration of REFUSALS, each as a fresh process runs it,
    all from one started Python (tests/settings_probe.py): the exit status, stdout and stderr."""
    runs = {case: (["serve", *args], serve_env(**values))
            for case, (values, args, _) in REFUSALS.items()}  # fmt: skip
    return {
        case: (result.returncode, result.stdout, result.stderr)
        for case, result in run_manage_named(runs).items()
    }


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_configuration_that_cannot_work_is_refused_in_one_line(
    case: str, refusals: dict[str, tuple[int, str, str]]
) -> None:
    message = REFUSALS[case][2]
    status, stdout, stderr = refusals[case]
    assert status == 2, stderr
    assert stdout == ""  # the supervisor started nothing (no step, no service)
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("Configuration error: ") and message in lines[0], lines[0]


# --- the real thing -------------------------------------------------------------------------


def _admin_url(url: str, dbname: str) -> dict[str, Any]:
    db = dj_database_url.parse(url)
    return {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "dbname": dbname,
    }


def NEEDS_SERVICES(test: Any) -> Any:  # noqa: N802 - reads as a mark
    """`make run` refuses SQLite and the in-process Redis: the real thing needs both servers."""
    test = pytest.mark.postgres(reason="`manage.py serve` refuses SQLite")(test)
    return pytest.mark.redis(reason="`manage.py serve` refuses the in-process Redis")(test)


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database next to the test run's own (``<name>_serve_<worker>``);
    its tests are marked with :data:`NEEDS_SERVICES`."""
    url = os.environ["DATABASE_URL"]
    base = dj_database_url.parse(url)
    # One per xdist worker: two workers' modules must not drop each other's database.
    name = f"{base['NAME']}_serve_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    admin = _admin_url(url, "postgres")

    def drop(conn: psycopg.Connection[Any]) -> None:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )

    with psycopg.connect(**admin, autocommit=True) as conn:
        drop(conn)
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(**admin, autocommit=True) as conn:
            drop(conn)


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class Serve(LoggedProcess):
    """A running ``manage.py serve``."""

    web_url: str

    def processes(self) -> dict[int, str]:
        """Every process of the deployment (serve's descendants) with its command line."""
        return {pid: command_line(pid) for pid in process_tree(self.process.pid)[1:]}

    def services(self) -> list[str]:
        """The command lines of the processes serve started itself."""
        return [command_line(pid) for pid in child_pids(self.process.pid)]

    def kill(self) -> None:
        for pid in reversed(process_tree(self.process.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(10)


@pytest.fixture
def start_serve(database_url: str, tmp_path: Path) -> Iterator[Any]:
    """``start(vk, *args, **env)``: ``manage.py serve`` against the local VK server ``vk``
    (a :class:`ServerThread`'s server) on the test's database and Redis; killed at the end if
    a test left it running."""
    started: list[Serve] = []
    with private_redis(tmp_path, SERVE_REDIS_DB) as redis_url:

        def start(vk: Any, *args: str, **extra: str) -> Serve:
            port = free_port("127.0.0.1")
            env = serve_env(
                **{
                    **VK,
                    "DATABASE_URL": database_url,
                    "REDIS_URL": redis_url,
                    "VK_API_URL": vk.api_url,
                    "DEBUG": "false",
                    "SECRET_KEY": "serve-test-only",
                    "ALLOWED_HOSTS": "127.0.0.1",
                    # Production settings over plain HTTP (no TLS proxy in front of the test).
                    "SECURE_SSL_REDIRECT": "false",
                    "STATIC_ROOT": str(tmp_path / "static"),
                    **extra,
                }
            )
            log = tmp_path / f"serve-{len(started)}.log"
            with log.open("wb") as out:
                # serve itself forked by the fork server; the processes it starts are its own.
                process = forkserver.Popen(
                    [
                        sys.executable,
                        "manage.py",
                        "serve",
                        "--bind",
                        f"127.0.0.1:{port}",
                        "--web-concurrency",
                        "1",
                        *args,
                    ],
                    cwd=PROJECT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            serve = Serve(process, log, f"http://127.0.0.1:{port}")
            started.append(serve)
            return serve

        try:
            yield start
        finally:
            for serve in started:
                if serve.process.poll() is None:
                    serve.kill()


def first_line(output: str, name: str) -> int:
    """Where the first line a process of this name printed starts in serve's output."""
    match = re.search(rf"^{name} +\| ", output, re.MULTILINE)
    assert match, f"no line of {name}:\n{output}"
    return match.start()


def wait_answer(state: Any, user: int, timeout: float = 20.0) -> list[str]:
    wait_for(
        lambda: bool(state.sent_messages(user)),
        timeout=timeout,
        what=f"an answer to user {user}",
        interval=0.1,
    )
    return [message.text for message in state.sent_messages(user)]


def assert_all_ended(processes: dict[int, str], timeout: float = 10.0) -> None:
    """Every one of ``processes`` ends within ``timeout`` (a grandchild may exit a moment
    after its parent has been reaped)."""
    try:
        wait_for(
            lambda: not any(alive(pid) for pid in processes),
            timeout=timeout,
            what="every process to end",
        )
    except ProcessError:
        left = [command for pid, command in processes.items() if alive(pid)]
        raise AssertionError(f"left running: {left}") from None


def assert_stopped_cleanly(serve: Serve, processes: dict[int, str]) -> None:
    assert serve.stop() == 0, serve.output()[-4000:]
    assert_all_ended(processes)
    assert re.search(r"^run +\| stopped\.$", serve.output(), re.MULTILINE)


@NEEDS_SERVICES
def test_make_run_serves_the_community_until_ctrl_c(start_serve: Any) -> None:
    state = make_state()
    with ServerThread(state) as vk:
        serve = start_serve(vk, "--workers", "2")
        serve.wait_for(r"^run +\| running for VK community", timeout=90)
        output = serve.output()
        # serve migrated the fresh database before any service started.
        assert "Applying gameplay.0001" in output
        assert first_line(output, "migrate") < first_line(output, "web"), output
        services = serve.services()
        assert sum("-m gunicorn config.wsgi" in c for c in services) == 1, services
        assert sum("rqworker default vk --with-scheduler" in c for c in services) == 2, services
        assert sum("runbot" in c for c in services) == 1, services
        assert len(services) == 4, services
        commands = serve.processes()  # with gunicorn's worker and rq's scheduler
        # The panel answers, with its collected (hashed) static files.
        with urllib.request.urlopen(f"{serve.web_url}/admin/login/", timeout=10) as response:
            page = response.read().decode()
        css = re.search(r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', page)
        assert css, page
        assert http_status(serve.web_url + css.group(1)) == 200
        # A user writes to the community: the bot applies it, a worker delivers the answer.
        state.inject_message(OUTSIDER, "помощь")
        assert wait_answer(state, OUTSIDER) == [replies.help_for(None)]
        assert_stopped_cleanly(serve, commands)
        text = serve.output()
        assert (
            text.index("stopping bot")
            < text.index("stopping worker2, worker1")
            < text.index("stopping web")
        )


def post_json(url: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status), response.read().decode()


def env_communities(database_url: str) -> list[tuple[int, bool, bool]]:
    """The Community rows of serve's database: (VK id, from the environment, connected)."""
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT vk_id, from_env, connected FROM gameplay_community ORDER BY vk_id"
        ).fetchall()


def forget_communities(database_url: str) -> None:
    """No Community row in serve's database (another test's run may have left one)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('gameplay_community')").fetchone()
        assert row is not None  # one row: the table's name, or NULL
        if row[0]:
            conn.execute("DELETE FROM gameplay_community")


@NEEDS_SERVICES
def test_callback_mode_records_the_communitys_row_answers_vk_on_the_web_and_runs_no_bot(
    start_serve: Any, database_url: str
) -> None:
    forget_communities(database_url)
    state = make_state()
    with ServerThread(state) as vk:
        serve = start_serve(
            vk, "--callback", VK_CALLBACK_SECRET=SECRET, VK_CONFIRMATION_CODE=CONFIRMATION
        )
        serve.wait_for(r"^run +\| running for VK community", timeout=90)
        services = serve.services()
        assert len(services) == 2 and not any("runbot" in c for c in services), services
        commands = serve.processes()
        output = serve.output()
        assert "VK pushes events to /vk/callback/" in output
        assert "no VK community is configured yet" not in output
        # The environment's community was recorded as a row when the web and workers started.
        assert env_communities(database_url) == [(GROUP_ID, True, True)]
        callback = f"{serve.web_url}/vk/callback/"
        assert post_json(callback, {"type": "confirmation", "group_id": GROUP_ID}) == (
            200,
            CONFIRMATION,
        )
        # VK pushes a user's message (the event the local VK recorded for it).
        update = state.inject_message(OUTSIDER, "помощь")
        assert post_json(callback, {**update, "secret": SECRET}) == (200, "ok")
        assert wait_answer(state, OUTSIDER) == [replies.help_for(None)]
        assert_stopped_cleanly(serve, commands)


@NEEDS_SERVICES
def test_without_an_environments_community_serve_starts_and_says_where_to_connect_one(
    start_serve: Any, database_url: str
) -> None:
    forget_communities(database_url)
    state = make_state()
    with ServerThread(state) as vk:
        serve = start_serve(vk, "--callback", VK_GROUP_ID="", VK_GROUP_TOKEN="", VK_USER_TOKEN="")
        serve.wait_for(r"^run +\| Ctrl-C stops everything\.$", timeout=90)
        output = serve.output()
        assert re.search(
            r"^run +\| running for the VK communities connected in the panel \(none yet\) via ",
            output, re.MULTILINE,
        ), output  # fmt: skip
        assert re.search(
            r"^run +\| no VK community is configured yet: connect one in the panel at "
            r"/panel/communities/connect/ ", output, re.MULTILINE,
        ), output  # fmt: skip
        services = serve.services()
        assert len(services) == 2 and not any("runbot" in c for c in services), services
        commands = serve.processes()
        assert http_status(f"{serve.web_url}/admin/login/") == 200
        assert env_communities(database_url) == []
        assert_stopped_cleanly(serve, commands)


@NEEDS_SERVICES
def test_a_token_vk_refuses_stops_everything_with_status_2(start_serve: Any) -> None:
    state = make_state()
    with ServerThread(state) as vk:
        serve = start_serve(vk, VK_GROUP_TOKEN="a-revoked-token")
        commands: dict[int, str] = {}
        deadline = time.monotonic() + 90
        while serve.process.poll() is None and time.monotonic() < deadline:
            commands.update(serve.processes())
            time.sleep(0.1)
        assert serve.process.wait(30) == 2, serve.output()[-4000:]
        output = serve.output()
        assert re.search(
            r"^bot +\| Configuration error: VK refused the long poll .* "
            r"Check VK_GROUP_TOKEN and VK_GROUP_ID\.$",
            output,
            re.MULTILINE,
        ), output
        assert "Traceback" not in output
        assert_all_ended(commands)
