"""Making sure the configured database has the project's tables before a command uses it.

``manage.py replay`` runs on "whatever database is configured" (docs/scenario-format.md). On a
fresh clone that is the embedded default, an SQLite file nobody has migrated yet: it is the
user's own scratch database, so it is migrated on the spot (with a note on stderr). Any other
database with unapplied migrations is refused with one line: migrating a server database is the
operator's decision (``manage.py migrate``, or ``make run`` which migrates first).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor


class DatabaseNotReady(Exception):
    """The database cannot be used as it is; the message is one English line."""


def error_line(error: BaseException) -> str:
    """An error as one line for an operator: its message's first line, else its type."""
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


def unapplied_migrations(alias: str = DEFAULT_DB_ALIAS) -> int:
    """How many migrations the database lacks. Raises :class:`DatabaseNotReady` when it
    cannot be reached."""
    connection = connections[alias]
    try:
        executor = MigrationExecutor(connection)
        return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    except DatabaseError as error:
        raise DatabaseNotReady(f"cannot use the database: {error_line(error)}") from None


def prepare_database(
    note: Callable[[str], Any] | None = None, alias: str = DEFAULT_DB_ALIAS
) -> None:
    """Migrate the embedded SQLite database if it lacks tables (telling ``note`` one line);
    raise :class:`DatabaseNotReady` for any other database that is behind."""
    missing = unapplied_migrations(alias)
    if not missing:
        return
    connection = connections[alias]
    if connection.vendor != "sqlite":
        raise DatabaseNotReady(
            f"the database lacks {missing} migration(s); run `python manage.py migrate` first"
        )
    if note is not None:
        note(f"applying {missing} migration(s) to {connection.settings_dict['NAME']} first")
    try:
        call_command("migrate", database=alias, interactive=False, verbosity=0,
                     stdout=io.StringIO())  # fmt: skip
    except DatabaseError as error:
        raise DatabaseNotReady(f"cannot migrate the SQLite database: {error_line(error)}") from None
