"""Expected faults in the log (ops/outages.py): one line when an outage starts and one when it
ends, with its length, and no traceback — for the worker's jobs (the deadline tick and the
Outbox drain, sharing the outage through Redis) and for the long poll; a traceback for the
unexpected."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import django_rq
import pytest
from django.db import IntegrityError, OperationalError

from gameplay import jobs
from ops.outages import DATABASE_OUTAGE_KEY, Outage, SharedOutage
from tests.localvk.support import GROUP_ID, GROUP_TOKEN
from vkbot.delivery import jobs as delivery_jobs
from vkbot.longpoll import LongPoller
from vkbot.vkapi import make_api

LOST = OperationalError("server closed the connection unexpectedly")


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def tracebacks(caplog: pytest.LogCaptureFixture) -> int:
    return sum(1 for r in caplog.records if r.exc_info)


@pytest.fixture
def shared_redis(rq_queues: Any) -> Iterator[Any]:
    redis = django_rq.get_connection(jobs.TICK_QUEUE)
    redis.delete(DATABASE_OUTAGE_KEY)
    yield redis
    redis.delete(DATABASE_OUTAGE_KEY)


def test_an_outage_is_two_lines_whatever_the_retries(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    outage = Outage("VK", logging.getLogger("test"), who="Long poll of group 1")
    assert outage.back() is None  # nothing to end
    assert outage.lost(TimeoutError("timed out"), then="polling again")
    for _ in range(5):
        assert not outage.lost(ConnectionResetError("reset"))
    assert outage.back() is not None
    assert lines(caplog) == [
        "Long poll of group 1: VK is unavailable (TimeoutError: timed out); polling again",
        "Long poll of group 1: VK is back after 0 s",
    ]


def test_one_line_for_every_process_sharing_the_outage(
    shared_redis: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Two work horses (two objects over one Redis key) see one outage."""
    caplog.set_level(logging.INFO)
    first, second = (
        SharedOutage("The database", logging.getLogger("test"), key=DATABASE_OUTAGE_KEY,
                     redis=shared_redis)
        for _ in range(2)
    )  # fmt: skip
    assert first.lost(LOST) and not second.lost(LOST) and not first.lost(LOST)
    assert second.back() is not None and first.back() is None
    assert len(lines(caplog)) == 2


@pytest.mark.django_db
def test_ticks_and_drains_with_the_database_away_say_so_once(
    shared_redis: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    def away(**kwargs: Any) -> Any:
        raise LOST

    monkeypatch.setattr(jobs, "deadline_tick", away)
    monkeypatch.setattr(jobs, "database_lost", lambda error: error is LOST)
    monkeypatch.setattr(delivery_jobs, "drain", away)
    monkeypatch.setattr(delivery_jobs, "database_lost", lambda error: error is LOST)
    monkeypatch.setattr(jobs, "schedule_next_tick", lambda: "t")
    for _ in range(3):  # no job fails: rq would log each with its traceback
        assert jobs.tick() == {"database": "unavailable"}
        assert delivery_jobs.drain_outbox() == {"database": "unavailable"}
    monkeypatch.undo()
    monkeypatch.setattr(jobs, "schedule_next_tick", lambda: "t")
    assert "closed" in jobs.tick()
    assert [line.split(" (")[0] for line in lines(caplog)] == [
        "The database is unavailable",
        "The database is back after 0 s",
    ]
    assert tracebacks(caplog) == 0


@pytest.mark.django_db
def test_an_unexpected_database_error_still_fails_the_tick(
    shared_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bug(**kwargs: Any) -> Any:
        raise IntegrityError("duplicate key")

    monkeypatch.setattr(jobs, "deadline_tick", bug)
    monkeypatch.setattr(jobs, "schedule_next_tick", lambda: "t")
    with pytest.raises(IntegrityError):
        jobs.tick()


@pytest.mark.django_db(transaction=True)
async def test_the_long_poll_says_a_database_outage_once_and_a_bug_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vkbot.longpoll")
    monkeypatch.setattr("vkbot.longpoll.database_lost", lambda error: error is LOST)
    poller = LongPoller(make_api(GROUP_TOKEN, api_url="http://127.0.0.1:9/method/"), GROUP_ID)
    poller.fault_backoff.initial = poller.fault_backoff.maximum = 0.001
    poller.backoff.initial = poller.backoff.maximum = 0.001
    poller.fault_backoff.reset()
    poller.backoff.reset()
    for _ in range(4):
        await poller._recover(LOST)
    await poller._recover(KeyError("a bug"))
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage().split(" (")[0] for r in warnings] == [
        f"Long poll of group {GROUP_ID}: the database is unavailable",
        f"Long poll of group {GROUP_ID} failed",
    ]
    assert [bool(r.exc_info) for r in warnings] == [False, True]
