"""Migrating databases in a test: gameplay's migrations one by one (as a deployment that has
some of them meets them), and what a migrated database defines, to compare two of them.

gameplay's migrations are squashed (``0001_squashed_0022_callback_inbox``): Django applies the
squash to a database that has none of them and the migrations it replaces to one that has some.
A database migrated by the squash records every replaced migration too, so its graph no longer
holds them; ``stepwise_executor`` puts them back, for a test that migrates to one of them.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader


def stepwise_loader(connection: BaseDatabaseWrapper | None) -> MigrationLoader:
    """A loader whose graph holds the squashed migrations one by one, not their squash (on
    ``connection``'s database, or none: then as for a database that has none of them)."""
    loader = MigrationLoader(connection, replace_migrations=False)
    for key, migration in loader.replacements.items():
        loader.graph.remove_replacement_node(key, migration.replaces)
        loader.applied_migrations.pop(key, None)
    return loader


def stepwise_executor(connection: BaseDatabaseWrapper) -> MigrationExecutor:
    """An executor whose graph holds the squashed migrations one by one, not their squash."""
    executor = MigrationExecutor(connection)
    executor.loader = stepwise_loader(connection)
    return executor


def gameplay_plan(executor: MigrationExecutor) -> set[tuple[str, str]]:
    """The migrations ``executor`` applies to bring gameplay (and what it needs) to its end."""
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes("gameplay"))
    return {(migration.app_label, migration.name) for migration, _ in plan}


def migrate_gameplay(executor: MigrationExecutor) -> None:
    """Bring gameplay (and the apps it needs) to its last migration in ``executor``'s graph."""
    executor.migrate(executor.loader.graph.leaf_nodes("gameplay"))


def _definitions(create_table: str) -> list[str]:
    """The column and constraint definitions of an SQLite ``CREATE TABLE``, sorted: a column
    added by a later migration comes last in its table, where a squash creates it in place."""
    body = create_table[create_table.index("(") + 1 : create_table.rindex(")")]
    parts, depth, current = [], 0, ""
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return sorted([*parts, current.strip()])


#: PostgreSQL's catalog of the schema: columns (in no order), constraints and indexes.
PG_SCHEMA = {
    "columns": """
        SELECT table_name, column_name, data_type, character_maximum_length, numeric_precision,
               numeric_scale, is_nullable, column_default, is_identity, identity_generation
        FROM information_schema.columns WHERE table_schema = current_schema()""",
    "constraints": """
        SELECT conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace = current_schema()::regnamespace""",
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = current_schema()""",
    "sequences": """
        SELECT sequence_name, data_type, start_value, increment FROM information_schema.sequences
        WHERE sequence_schema = current_schema()""",
}


def schema_of(connection: BaseDatabaseWrapper) -> dict[str, Any]:
    """Everything the database defines (tables, columns, constraints, indexes, triggers), in a
    form that ignores only the order of a table's columns."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            )
            return {
                f"{kind} {name}": _definitions(sql) if kind == "table" else re.sub(r"\s+", " ", sql)
                for kind, name, sql in cursor.fetchall()
            }
        schema = {}
        for part, query in PG_SCHEMA.items():
            cursor.execute(query)
            schema[part] = sorted(map(repr, cursor.fetchall()))
        return schema


#: The squash of gameplay's migrations.
SQUASH = ("gameplay", "0001_squashed_0022_callback_inbox")


def main(way: str) -> None:
    """Migrate the empty database of ``DATABASE_URL`` with the squash (``squashed``) or the
    migrations it replaces (``stepwise``); print as JSON what was planned, what Django then
    finds left to apply, its schema and its deployment rows.

    A process of its own (``python -m tests.gameplay.migration_support WAY``): data migrations
    (gameplay's, django_rq's) write through the default database, so the database migrated must
    be the process's default, not the test's."""
    import django

    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    django.setup()
    from django.db import connection

    executor = MigrationExecutor(connection)
    if way == "stepwise":
        executor = stepwise_executor(connection)
    planned = gameplay_plan(executor)
    migrate_gameplay(executor)
    after = MigrationExecutor(connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, vk_id_offset FROM gameplay_deployment")
        deployment = cursor.fetchall()
    report = {
        "planned": sorted(planned),
        "left": sorted(gameplay_plan(after)),
        "squash_recorded": SQUASH in after.loader.applied_migrations,
        "schema": schema_of(connection),
        "deployment": deployment,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
