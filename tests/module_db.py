"""Rows a whole test module shares: built once, each test's changes undone after it.

A module whose tests all start from the same rows (a game of nine players on day 1, a community
with its GMs and their signed-in clients, a seeded demo) built them once per test: the sign-ups,
the deal and the start are most of such a test's time. :func:`module_transaction` opens a
transaction of the module's own on the test database (with ``django_db_blocker``) and rolls it
back when the module's last test is done; :func:`module_rows` builds a module's rows inside it,
once. Each ``django_db`` test runs in pytest-django's own transaction, which inside the
module's is a savepoint rolled back after the test, so every test still starts from the rows as
they were built, and no row outlives the module.

The rows exist for every test of the module once the first test that asks for them ran, as if
each test of the module had built them first. A module whose tests flush the database
(``django_db(transaction=True)``) cannot share rows this way. The same on SQLite and PostgreSQL,
and under pytest-xdist's ``--dist loadfile``: a module runs in one worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
from django.db import connection, transaction

T = TypeVar("T")


@contextmanager
def module_transaction(django_db_blocker: Any) -> Iterator[None]:
    """A transaction open until the block ends, then rolled back. The database is unblocked
    only to open and to roll back: a builder unblocks it with ``django_db_blocker`` itself."""
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
    try:
        yield
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            assert not connection.in_atomic_block, "a test left a transaction open"


def module_rows(build: Callable[[], T]) -> Any:
    """A module-scoped fixture giving what ``build()`` returned, built in the module's own
    transaction (:func:`module_transaction`). Ask it from a ``django_db`` test or from a
    function-scoped fixture of one; read mutable rows afresh there
    (``Game.objects.get(pk=…)``): a test may change them, and its changes are rolled back, not
    the objects it was given."""

    @pytest.fixture(scope="module")
    def rows(django_db_setup: None, django_db_blocker: Any) -> Iterator[T]:
        with module_transaction(django_db_blocker):
            with django_db_blocker.unblock():
                built = build()
            yield built

    return rows
