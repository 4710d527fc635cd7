"""Fixtures shared by every test package, and the Hypothesis profiles.

Profiles: ``dev`` (100 examples, the default), ``fast`` (25, ``make test-fast``'s) and ``ci``
(500 examples), chosen with the ``HYPOTHESIS_PROFILE`` environment variable (``make test`` picks
``ci`` under CI). None has a deadline per example: the workers share the cores, and speed is
the benchmarks' to check, not the tests'.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from rq import Queue

from tests import forkserver
from tests.browser_support import chromium  # noqa: F401 (the browser tests' fixture)

hypothesis_settings.register_profile("dev", max_examples=100, deadline=None)
hypothesis_settings.register_profile("fast", max_examples=25, deadline=None)
hypothesis_settings.register_profile("ci", max_examples=500, deadline=None, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: list[Any]) -> None:
    """In pytest-xdist's controller, before it spawns the workers: they are forked by its fork
    server (tests/forkserver.py), which has imported the heavy libraries once for them all, and
    which their tests' processes share."""
    forkserver.fork_xdist_workers()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The fork server of this process (tests/forkserver.py) ends with it, its CPU counted; a
    worker's, shared, kills the processes the worker's tests left running."""
    forkserver.shutdown()


#: Marks of the tests that take seconds of wall time each (real processes, real waits).
LONG_MARKS = ("slow", "browser", "soak")

#: The modules that spend most of their time waiting on real clocks — outages, back-offs, token
#: lifetimes — rather than on the CPU (on 2 cores, measured alone: 160 s of wall time for 36 s
#: of CPU). ``make test`` hands them to one worker as one unit of work, one after another, so that
#: one worker waits while the others keep the cores busy; spread over the workers, they left the
#: cores idle whenever two of them waited at once.
WAITING_MODULES = (
    "tests/gameplay/test_deadlines_worker.py",
    "tests/e2e/test_vkid_renewals.py",
    "tests/vkbot/test_longpoll_recovery.py",
    "tests/ops/test_supervisor.py",
)
#: The name of their unit of work under ``--dist loadfile``.
WAITING_UNIT = "the modules that wait on clocks"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the waiting modules first, then the other modules holding long tests, each module's
    tests kept together.

    ``make test`` hands whole modules to the workers (``--dist loadfile``; the waiting modules as
    one unit, :func:`pytest_xdist_make_scheduler`): started first, the long modules — mostly
    waiting on real processes and clocks — run beside the many short ones instead of after them,
    at the end of the run. The order within each group stays the collection's (the sort is
    stable), so the collection is the same in every worker.
    """
    long_modules = {
        item.nodeid.partition("::")[0]
        for item in items
        if any(item.get_closest_marker(mark) for mark in LONG_MARKS)
    }

    def rank(item: pytest.Item) -> int:
        module = item.nodeid.partition("::")[0]
        return 0 if module in WAITING_MODULES else 1 if module in long_modules else 2

    items.sort(key=rank)
    _skip_what_this_environment_lacks(items)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile``, xdist's scheduling by module, but with the
    :data:`WAITING_MODULES` in one unit of work (one worker runs them all, in order)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return WAITING_UNIT if module in WAITING_MODULES else module

    return Scheduling(config, log)


def _skip_what_this_environment_lacks(items: list[pytest.Item]) -> None:
    """Skip the tests marked ``postgres(reason=…)`` on the embedded default's SQLite and those
    marked ``redis(reason=…)`` on its in-process Redis stand-in, and only there; a mark without a
    reason is a mistake in the test, not a skip."""
    from django.conf import settings

    missing = {
        "postgres": settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
        "redis": not settings.REDIS_URL,
    }
    needs = {"postgres": "needs PostgreSQL", "redis": "needs a real Redis"}
    for item in items:
        for name, absent in missing.items():
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{name} needs a reason=")
            if absent:
                item.add_marker(pytest.mark.skip(reason=f"{needs[name]}: {reason}"))


@pytest.fixture
def rq_queues() -> Iterator[dict[str, Queue]]:
    """The project's django-rq queues by name, emptied (scheduled jobs, jobs a killed worker
    left in rq's intermediate list, and the drain flags too) before and after the test.

    Works on the in-process fakeredis stand-in and on a real Redis (``REDIS_URL``) alike.
    """
    import django_rq
    from django.conf import settings

    from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY

    queues = {name: django_rq.get_queue(name) for name in settings.RQ_QUEUES}
    for queue in queues.values():
        _empty(queue)
        queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
    yield queues
    for queue in queues.values():
        _empty(queue)
        queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)


def _empty(queue: Queue) -> None:
    """Empty a queue and its scheduled jobs (another test's drain may have scheduled one)."""
    queue.empty()
    queue.connection.delete(queue.intermediate_queue_key)
    registry = queue.scheduled_job_registry
    for job_id in registry.get_job_ids():
        registry.remove(job_id, delete_job=True)
