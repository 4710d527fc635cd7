"""gameplay's squashed migration builds the schema its 22 migrations build one by one.

A new database is migrated by ``0001_squashed_0022_callback_inbox``, an existing deployment at
any of 0001–0022 by the migrations it replaces: both must end in the same schema (the order of
a table's columns aside) and with the deployment's row (outbox.ids), and Django must then find
nothing left to apply on either. Each is an empty database of its own, migrated in a process of
its own (tests/gameplay/migration_support.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.gameplay.migration_support import SQUASH

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
        done = subprocess.run(
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
