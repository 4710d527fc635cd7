"""The scheduled deadline tick on rq (gameplay.jobs, gameplay.worker): one tick per slot, the
worker keeps it scheduled, and a deadline that passes while Redis restarts still closes its
phase, once — checked against a real redis-server and a real ``rqworker`` process."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import django_rq
import pytest
import redis
import rq
import rq.worker.base
from django.conf import settings
from rq import Queue

from gameplay import jobs
from gameplay.jobs import TICK_QUEUE, next_slot, pending_ticks, schedule_next_tick, tick_job_id
from gameplay.models import PhaseStatus
from gameplay.worker import SimpleWorker
from tests import forkserver
from tests.gameplay.deadline_support import day, events, night, started_game
from tests.gameplay.factories import deadline_of
from tests.process_support import shared_database_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tick_queue(rq_queues: dict[str, Queue]) -> Iterator[Queue]:
    """The tick's queue with no tick scheduled before or after the test."""
    queue = rq_queues[TICK_QUEUE]

    def clear() -> None:
        for job_id in pending_ticks(queue):
            queue.scheduled_job_registry.remove(job_id, delete_job=True)

    clear()
    yield queue
    clear()


def test_next_slot_starts_at_least_a_second_ahead() -> None:
    t = datetime(2031, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert next_slot(t, 30) == (int(t.timestamp()) // 30 + 1, t + timedelta(seconds=30))
    almost = t + timedelta(seconds=29, milliseconds=500)
    slot, at = next_slot(almost, 30)
    assert at == t + timedelta(seconds=60) and slot * 30 == int(at.timestamp())


def test_the_next_tick_is_scheduled_once_however_often_it_is_ensured(tick_queue: Queue) -> None:
    # A moment 10 s into a slot a minute ahead: now and now + 0.5 s fall in one slot whenever
    # the test runs (with the wall clock they straddled a slot's edge once in ~60 runs).
    seconds = int(settings.DEADLINE_TICK_SECONDS)
    start = (int(datetime.now(UTC).timestamp()) // seconds + 2) * seconds
    now = datetime.fromtimestamp(start + 10, UTC)
    first = schedule_next_tick(queue=tick_queue, now=now)
    again = schedule_next_tick(now=now + timedelta(seconds=0.5))  # another Queue object
    assert first == again
    assert pending_ticks(tick_queue) == [first]
    job = tick_queue.fetch_job(first)
    assert job is not None and job.func is jobs.tick and job.get_status() == "scheduled"
    slot, at = next_slot(now)
    assert first == tick_job_id(slot)
    assert tick_queue.scheduled_job_registry.get_scheduled_time(first) == at


def test_a_due_tick_is_moved_into_the_queue_once_by_any_number_of_workers(
    tick_queue: Queue,
) -> None:
    # A queue no worker listens to, and a slot long past (no real tick ever had its id).
    queue = Queue("test-due-ticks", connection=tick_queue.connection)
    job_id = schedule_next_tick(queue=queue, now=datetime(2001, 1, 1, tzinfo=UTC))
    due_at = queue.scheduled_job_registry.get_scheduled_time(job_id).timestamp()
    try:
        assert jobs.enqueue_due_ticks(queue, now=due_at - 1) == []  # not due yet
        first = jobs.enqueue_due_ticks(queue, now=due_at)
        second = jobs.enqueue_due_ticks(Queue(queue.name, connection=queue.connection))

        assert (first, second) == ([job_id], [])
        assert queue.get_job_ids() == [job_id]
        assert job_id not in queue.scheduled_job_registry.get_job_ids()
    finally:
        queue.empty()
        for leftover in queue.scheduled_job_registry.get_job_ids():
            queue.scheduled_job_registry.remove(leftover, delete_job=True)


@pytest.mark.django_db
def test_the_tick_job_closes_due_phases_and_schedules_the_next(tick_queue: Queue) -> None:
    game = started_game(now=datetime.now(UTC) - timedelta(hours=25), reminders=[])
    # As the scheduler would once its time comes (the scheduler itself runs in the test below).
    django_rq.get_queue(TICK_QUEUE, commit_mode="auto").enqueue(jobs.tick, job_id="t-past")

    worker = django_rq.get_worker(TICK_QUEUE, worker_class=SimpleWorker)  # type: ignore[arg-type]  # django_rq types rq's Worker only
    assert worker.work(burst=True)

    job = tick_queue.fetch_job("t-past")
    assert job is not None and job.is_finished, job and job.latest_result()
    result = job.return_value()
    assert result is not None
    assert [c["phase_id"] for c in result["closed"]] == [day(game).pk]
    assert day(game).status == PhaseStatus.DONE
    assert night(game).status == PhaseStatus.OPEN
    # The next tick is scheduled (one, or two if a slot boundary passed meanwhile), ahead.
    pending = pending_ticks(tick_queue)
    assert 1 <= len(pending) <= 2
    registry = tick_queue.scheduled_job_registry
    assert all(registry.get_scheduled_time(i) > datetime.now(UTC) for i in pending)


def test_the_worker_ensures_the_tick_on_start_and_after_losing_redis(
    tick_queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker = django_rq.get_worker(TICK_QUEUE, worker_class=SimpleWorker)  # type: ignore[arg-type]  # django_rq types rq's Worker only
    assert worker.dequeue_timeout <= settings.DEADLINE_TICK_SECONDS
    worker.work(burst=True)
    [scheduled] = pending_ticks(tick_queue)

    # The scheduled tick is lost (a Redis flush or restart) ...
    tick_queue.scheduled_job_registry.remove(scheduled, delete_job=True)
    worker.heartbeat()  # ... and the worker checks only once an interval,
    assert pending_ticks(tick_queue) == []

    # ... unless it lost its connection: then at the first heartbeat that goes through.
    real_heartbeat = rq.worker.base.BaseWorker.heartbeat
    failures = iter([redis.exceptions.ConnectionError("Connection refused")])

    def flaky(self: Any, *args: Any, **kwargs: Any) -> None:
        error = next(failures, None)
        if error is not None:
            raise error
        real_heartbeat(self, *args, **kwargs)

    monkeypatch.setattr(rq.worker.base.BaseWorker, "heartbeat", flaky)
    worker.heartbeat()  # the lost connection is logged, not fatal to the worker
    assert pending_ticks(tick_queue) == []
    worker.heartbeat()
    assert len(pending_ticks(tick_queue)) == 1


# --- A deadline passes while Redis restarts (real redis-server and rqworker) ----------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(what: str, check: Callable[..., Any], timeout: float, log: Path) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
        except redis.exceptions.ConnectionError:
            result = None
        if result:
            return result
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    raise AssertionError(f"timed out waiting for {what}; worker log:\n{tail}")


class RedisServer:
    """A private redis-server without persistence: a restart loses everything, as a restart
    of a cache-only production Redis does. Private, so that the shared one is left alone."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = self.client()
        _wait_for("redis-server", client.ping, 10, self.workdir / "none")

    def stop(self) -> None:
        """Redis goes at once, as on a crash: a graceful shutdown closes its clients first and
        its port last, so a client could reconnect for a moment and the outage would be two."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[RedisServer], tuple[Any, Path]]]:
    """Start ``manage.py rqworker default vk --with-scheduler`` as production does."""
    started: list[subprocess.Popen[bytes]] = []

    def start(
        server: RedisServer, tick: int = 1, **extra: str
    ) -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"worker-{len(started) + 1}.log"
        env = {
            **os.environ,
            "DATABASE_URL": shared_database_url(),
            "REDIS_URL": server.url,
            "DEADLINE_TICK_SECONDS": str(tick),
            "VK_API_URL": "http://127.0.0.1:9/method/",  # never the real VK
            **extra,
        }
        with log.open("wb") as out:
            process = forkserver.Popen(
                [sys.executable, "manage.py", "rqworker", "default", "vk", "--with-scheduler"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(process)
        return process, log

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # warm shutdown; it stops its scheduler too
            try:  # (a drain job it runs may keep it longer: the test is over, no need to wait)
                process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server binary")
def test_a_deadline_passing_while_redis_restarts_still_closes_the_phase_once(
    redis_server: RedisServer, start_worker: Callable[[RedisServer], tuple[Any, Path]]
) -> None:
    worker, log = start_worker(redis_server)
    queue = Queue(TICK_QUEUE, connection=redis_server.client())
    first = _wait_for("the first scheduled tick", lambda: pending_ticks(queue), 30, log)
    _wait_for("ticking", lambda: pending_ticks(queue) and pending_ticks(queue) != first, 10, log)

    # FLUSHALL wipes the scheduled tick; the worker schedules it again.
    redis_server.client().flushall()
    assert pending_ticks(queue) == []
    _wait_for("the tick after FLUSHALL", lambda: pending_ticks(queue), 10, log)

    # A deadline passes while Redis is down; it comes back empty.
    game = started_game(now=datetime.now(UTC), day_length=timedelta(seconds=5), reminders=[])
    deadline = deadline_of(day(game))
    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds() - 3))
    redis_server.stop()
    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds() + 2))
    assert day(game).status == PhaseStatus.OPEN  # nothing could tick meanwhile
    redis_server.start()

    _wait_for("the day to close", lambda: day(game).status == PhaseStatus.DONE, 45, log)
    for _ in range(3):  # several more ticks, any of which could close the day a second time
        before = pending_ticks(queue)
        _wait_for("another tick", lambda b=before: pending_ticks(queue) not in ([], b), 15, log)
    assert worker.poll() is None, log.read_text(errors="replace")[-4000:]
    assert len(events(game, "day_closed")) == 1
    closed_at = day(game).closed_at
    assert closed_at is not None and closed_at >= deadline
    assert night(game).status == PhaseStatus.OPEN
    assert pending_ticks(queue), "ticking did not resume"


# --- A worker is killed (SIGKILL) before a deadline: its successor closes the phase on time ---

TICK = 2
#: What docs/operations.md promises: a phase closes at most DEADLINE_TICK_SECONDS after its
#: deadline, plus the second a worker may take to notice the due tick and the tick's own run.
BOUND = timedelta(seconds=TICK + 3)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server binary")
def test_a_killed_workers_successor_closes_the_phase_within_the_bound(
    redis_server: RedisServer, start_worker: Callable[..., tuple[Any, Path]]
) -> None:
    client = redis_server.client()
    queue = Queue(TICK_QUEUE, connection=client)
    first, log = start_worker(redis_server, TICK)
    ticks = _wait_for("the first scheduled tick", lambda: pending_ticks(queue), 30, log)
    _wait_for("ticking", lambda: pending_ticks(queue) and pending_ticks(queue) != ticks, 15, log)
    lock = "rq:scheduler-lock:default"
    holder = _wait_for("the first worker's scheduler lock", lambda: client.get(lock), 15, log)

    # The worker, its work horse and its scheduler die at once (an OOM kill, a lost host).
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(10)
    game = started_game(now=datetime.now(UTC), day_length=timedelta(seconds=15), reminders=[])
    deadline = deadline_of(day(game))
    second, log = start_worker(redis_server, TICK)
    _wait_for(
        "the successor to start",
        lambda: any(w.pid == second.pid for w in rq.Worker.all(connection=client)),
        30,
        log,
    )
    assert datetime.now(UTC) < deadline, "the successor took too long to start on this machine"

    _wait_for(
        "the day to close",
        lambda: day(game).status == PhaseStatus.DONE,
        (deadline - datetime.now(UTC)).total_seconds() + BOUND.total_seconds() + 5,
        log,
    )

    closed = day(game).closed_at
    assert closed is not None
    print(f"the day closed {(closed - deadline).total_seconds():.1f} s after its deadline")
    assert deadline <= closed <= deadline + BOUND, (closed - deadline, log.read_text()[-3000:])
    assert client.get(lock) == holder  # the dead scheduler's lock was never needed
    assert len(events(game, "day_closed")) == 1
    assert second.poll() is None


# --- Redis is away longer than rq's reconnect back-off: delivery and ticks resume at once ------

#: Long enough for rq's own back-off (tries after 1, 3, 7, 15, 31 … s) to notice Redis back only
#: 11 s after its return, far beyond AFTER_REDIS; the worker tries every second.
OUTAGE = timedelta(seconds=20)
#: What docs/operations.md promises after Redis returns: due rows sent and due phases closed
#: within a tick interval plus a few seconds (the worker's reconnect, the tick's slot, its run).
AFTER_REDIS = timedelta(seconds=TICK + 4)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server binary")
def test_after_a_long_redis_outage_rows_go_and_phases_close_within_a_tick(
    redis_server: RedisServer,
    start_worker: Callable[..., tuple[Any, Path]],
    settings: Any,
) -> None:
    from gameplay.models import Outbox, OutboxChannel, OutboxStatus
    from gameplay.services.common import send_message
    from localvk import ServerThread
    from tests.vkbot.delivery_support import GROUP_ID, GROUP_TOKEN, USER_TOKEN, make_vk

    # The test's own commits enqueue nothing (its Redis is not the worker's): the worker's
    # ticks find the rows, as they find rows whose commit met Redis away.
    settings.OUTBOX_DELIVERY_ENABLED = False
    settings.VK_GROUP_ID, settings.VK_GROUP_TOKEN = GROUP_ID, GROUP_TOKEN
    settings.VK_USER_TOKEN = USER_TOKEN
    client = redis_server.client()
    queue = Queue(TICK_QUEUE, connection=client)
    with ServerThread(make_vk()) as vk:
        vk_env = {"VK_API_URL": vk.api_url, "VK_GROUP_ID": str(GROUP_ID),
                  "VK_GROUP_TOKEN": GROUP_TOKEN, "VK_USER_TOKEN": USER_TOKEN}  # fmt: skip
        worker, log = start_worker(redis_server, TICK, **vk_env)
        ticks = _wait_for("the first scheduled tick", lambda: pending_ticks(queue), 30, log)
        _wait_for("ticking", lambda: pending_ticks(queue) not in ([], ticks), 15, log)
        game = started_game(now=datetime.now(UTC), day_length=timedelta(seconds=20), reminders=[])
        messages = Outbox.objects.filter(game=game, channel=OutboxChannel.MESSAGE)
        _wait_for("the start's messages", lambda: not messages.exclude(status="sent"), 20, log)
        drains = Queue("vk", connection=client).started_job_registry
        _wait_for("the drain to end", lambda: not drains.get_job_ids(), 30, log)

        redis_server.stop()
        away = time.monotonic()
        late = send_message(game=game, peer_ids=[7001, 7002], text="Пока Redis нет", kind="t")
        deadline = deadline_of(day(game))
        time.sleep(max(0.0, OUTAGE.total_seconds() - (time.monotonic() - away)))
        assert datetime.now(UTC) > deadline and day(game).status == PhaseStatus.OPEN
        back, back_at = time.monotonic(), datetime.now(UTC)
        redis_server.start()

        pending = Outbox.objects.filter(pk__in=[row.pk for row in late])
        _wait_for("the rows of the outage", lambda: not pending.exclude(status="sent"), 60, log)
        sent_after = time.monotonic() - back
        _wait_for("the day to close", lambda: day(game).status == PhaseStatus.DONE, 60, log)
        closed_at = day(game).closed_at
        assert closed_at is not None
        closed_after = closed_at - back_at
        print(
            f"Redis away {back - away:.1f} s, ticks every {TICK} s: the rows of the outage "
            f"went {sent_after:.1f} s and the day closed {closed_after.total_seconds():.1f} s "
            f"after Redis was started again"
        )
        assert worker.poll() is None, log.read_text(errors="replace")[-4000:]
        assert sent_after <= AFTER_REDIS.total_seconds(), log.read_text()[-4000:]
        assert closed_after <= AFTER_REDIS, log.read_text()[-4000:]
        assert len(events(game, "day_closed")) == 1
        assert all(row.status == OutboxStatus.SENT for row in pending)
    text = log.read_text(errors="replace")  # the outage is two lines, without a traceback
    assert "Traceback" not in text, text[-6000:]
    lost = outage_lines(text, "Redis is unavailable")
    ended = outage_lines(text, "Redis is back after")
    # The worker says it once each; so does any other process of it that met the outage (rq's
    # scheduler runs in a process of its own), never a line per retry.
    assert lost.get(worker.pid) == 1 and ended.get(worker.pid) == 1, text[-6000:]
    assert all(count == 1 for count in lost.values()), text[-6000:]


def outage_lines(log: str, words: str) -> dict[int, int]:
    """Per process id, the log's lines saying ``words`` (the log's format names the process:
    ``… [pid] message``)."""
    counts: dict[int, int] = {}
    for line in log.splitlines():
        found = re.search(r" \[(\d+)\] ", line)
        if words in line and found:
            pid = int(found.group(1))
            counts[pid] = counts.get(pid, 0) + 1
    return counts


# --- PostgreSQL restarts under a ticking worker: two lines in its log, no traceback ---------

#: Seconds without PostgreSQL: several ticks and drains meet it, and the day's deadline passes.
PG_OUTAGE = 10


@pytest.mark.slow
@pytest.mark.postgres(reason="a proxy in front of PostgreSQL stands for its restart")
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server binary")
def test_a_postgresql_restart_is_two_lines_in_the_workers_log(
    redis_server: RedisServer, start_worker: Callable[..., tuple[Any, Path]]
) -> None:
    from django.db import connection

    from gameplay.services.common import send_message
    from tests.proxy_support import Proxy

    db = connection.settings_dict
    proxy = Proxy((db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)))
    proxy.start()
    url = shared_database_url().replace(
        f"@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/", f"@127.0.0.1:{proxy.port}/"
    )
    queue = Queue(TICK_QUEUE, connection=redis_server.client())
    worker, log = start_worker(redis_server, TICK, DATABASE_URL=url)
    try:
        ticks = _wait_for("the first scheduled tick", lambda: pending_ticks(queue), 30, log)
        _wait_for("ticking", lambda: pending_ticks(queue) not in ([], ticks), 15, log)
        game = started_game(now=datetime.now(UTC), day_length=timedelta(seconds=8), reminders=[])
        proxy.stop()  # PostgreSQL goes away mid-day: every tick and drain meets it
        send_message(game=game, peer_ids=[7001], text="Пока базы нет", kind="t")
        time.sleep(PG_OUTAGE)
        proxy.start()
        _wait_for("the day to close", lambda: day(game).status == PhaseStatus.DONE, 30, log)
        _wait_for("the end of the outage", lambda: "is back after" in log.read_text(), 30, log)
    finally:
        proxy.stop()
    text = log.read_text(errors="replace")
    print(
        f"worker log over a {PG_OUTAGE} s PostgreSQL outage: {text.count('Traceback')} tracebacks, "
        f"{text.count('The database is unavailable')} line at its start, "
        f"{text.count('The database is back after')} at its end"
    )
    assert worker.poll() is None, text[-4000:]
    assert "Traceback" not in text, text[-6000:]
    assert text.count("The database is unavailable") == 1, text[-6000:]
    assert text.count("The database is back after") == 1, text[-6000:]
    assert len(events(game, "day_closed")) == 1
