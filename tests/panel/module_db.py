"""Rows built once for a whole test module, each test still isolated.

:func:`module_rows` opens a transaction on the test database around every test of the module
that asks for it; a module-scoped fixture builds its rows inside that transaction, once. Each
test then runs as pytest-django runs any ``django_db`` test: in a savepoint rolled back at its
end, so what a test writes is gone for the next one, while the module's rows stay. At the end of
the module the transaction is rolled back: no row outlives the module. The same on SQLite and
on PostgreSQL, and under pytest-xdist's ``--dist loadfile`` (a module runs in one worker).

Use it for read-mostly data that costs many queries to build (games played through the
services, accounts with their sessions)::

    @pytest.fixture(scope="module")
    def world(module_rows: Any) -> dict[str, Any]:
        with module_rows.unblock():  # the database, outside any test
            ...  # create the rows; the module's tests take ``world``

The builder runs with the panel tests' fast password hasher (their autouse ``settings``
override is function-scoped and not set yet at module setup).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction
from django.test.utils import override_settings

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def module_rows(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Any]:
    """A transaction open for the module's tests, rolled back after the last one; yields
    pytest-django's ``django_db_blocker`` (the builder unblocks the database with it)."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
    hashers = override_settings(PASSWORD_HASHERS=FAST_HASHERS)
    hashers.enable()
    try:
        yield django_db_blocker
    finally:
        hashers.disable()
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
