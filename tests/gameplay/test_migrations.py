"""gameplay's squashed migration builds the schema its 22 migrations build one by one.

A new database is migrated by ``0001_squashed_0022_callback_inbox``, an existing deployment at
any of 0001–0022 by the migrations it replaces: both must end in the same schema (the order of
a table's columns aside) and with the deployment's row (outbox.ids), and Django must then find
nothing left to apply on either. Each is an empty database of its own, migrated in a process of
its own (tests/gameplay/migration_support.py). Both must also leave Django the same models, the
models of the code: ``makemigrations`` has nothing to write.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from tests import forkserver
from tests.gameplay.migration_support import SQUASH, stepwise_loader

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def empty_database(name: str, tmp_path: Path) -> Iterator[str]:
    """The URL of a new, empty database (a file under ``tmp_path`` on SQLite, a database named
    after the test's on PostgreSQL, dropped afterwards)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / name}.sqlite3"
        return
    import psycopg

    db = connection.settings_dict
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    db_name = f"{db['NAME']}_{name}"
    admin = psycopg.connect(host=host, port=port, user=db["USER"],
                            password=db["PASSWORD"] or None, dbname="postgres",
                            autocommit=True)  # fmt: skip
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
        admin.execute(f'CREATE DATABASE "{db_name}"')
        try:
            auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
            yield f"postgres://{auth}@{host}:{port}/{db_name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{db_name}"')


def migrated(way: str, tmp_path: Path) -> dict[str, Any]:
    with empty_database(way, tmp_path) as url:
        done = forkserver.run(
            [sys.executable, "-m", "tests.gameplay.migration_support", way],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.django_db
def test_the_squash_and_the_migrations_it_replaces_build_the_same_schema(
    tmp_path: Path,
) -> None:
    squashed, stepwise = migrated("squashed", tmp_path), migrated("stepwise", tmp_path)
    assert list(SQUASH) in squashed["planned"]
    assert ["gameplay", "0001_initial"] not in squashed["planned"]
    assert list(SQUASH) not in stepwise["planned"]
    assert ["gameplay", "0022_callback_inbox"] in stepwise["planned"]

    assert squashed["schema"] == stepwise["schema"]
    for report in (squashed, stepwise):
        # Both record the squash and every migration it replaces: nothing is left to apply.
        assert report["squash_recorded"] and report["left"] == []
        [[pk, offset]] = report["deployment"]
        assert pk == 1 and 1 <= offset < 2**31


def gameplay_models(loader: MigrationLoader) -> dict[str, Any]:
    """gameplay's models at the end of ``loader``'s graph: their fields and options, the
    indexes and constraints in no order (a squash lists them as the models do)."""
    models = {}
    for (app, name), state in loader.project_state().models.items():
        if app == "gameplay":
            options = {
                key: sorted(value, key=lambda item: item.name)
                if key in ("indexes", "constraints")
                else value
                for key, value in state.options.items()
            }
            fields = {key: field.deconstruct()[1:] for key, field in state.fields.items()}
            models[name] = (fields, options, state.bases, state.managers)
    return models


@pytest.mark.django_db
def test_the_squash_and_the_migrations_it_replaces_leave_the_models_of_the_code() -> None:
    squashed, stepwise = MigrationLoader(None), stepwise_loader(None)
    assert SQUASH in squashed.graph.nodes and SQUASH not in stepwise.graph.nodes
    assert gameplay_models(squashed) == gameplay_models(stepwise)
    # Against the squash's graph, as on a new database: it exits 1 if it would write any.
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
