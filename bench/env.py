"""The benchmark's services: PostgreSQL and Redis checked up front, Django configured for the
bench database, and database snapshots (PostgreSQL templates) so every run starts equal.

Nothing here touches a database other than the bench's own (``BENCH_DATABASE_URL``) and its
snapshots ``<name>_empty``, ``<name>_day`` and ``<name>_night``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/vkmafia_bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"

GROUP_ID = 1
GROUP_TOKEN = "bench-group-token"
USER_TOKEN = "bench-user-token"
ADMIN_ID = 100


class ServiceError(Exception):
    """A service the benchmark needs is missing (the message says what to do)."""


@dataclass(frozen=True)
class Services:
    database_url: str
    redis_url: str

    @property
    def db_name(self) -> str:
        return urlsplit(self.database_url).path.lstrip("/")

    def url_of(self, db_name: str) -> str:
        parts = urlsplit(self.database_url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + db_name, parts.query, ""))


def services_from_env() -> Services:
    database_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL)
    redis_url = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS_URL)
    if urlsplit(database_url).scheme not in ("postgres", "postgresql", "pgsql"):
        raise ServiceError(
            f"BENCH_DATABASE_URL must be a postgres:// URL (the benchmark measures PostgreSQL), "
            f"got {database_url!r}."
        )
    if not urlsplit(database_url).path.strip("/"):
        raise ServiceError("BENCH_DATABASE_URL must name a database, e.g. .../vkmafia_bench.")
    return Services(database_url, redis_url)


def check_services(services: Services) -> None:
    """Raise :class:`ServiceError` (English, with what to do) unless both services answer."""
    import psycopg
    import redis

    try:
        with psycopg.connect(_admin_dsn(services), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        raise ServiceError(
            f"PostgreSQL is not reachable at {_where(services.database_url)}: "
            f"{str(error).strip().splitlines()[0]}\n"
            "Start it (e.g. `pg_ctlcluster <version> main start`, or "
            "`docker compose up -d postgres`) or point BENCH_DATABASE_URL at a server where the "
            "user may create databases."
        ) from None
    try:
        redis.Redis.from_url(services.redis_url, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        raise ServiceError(
            f"Redis is not reachable at {_where(services.redis_url)}: {error}\n"
            "Start it (e.g. `redis-server --daemonize yes`, or `docker compose up -d redis`) "
            "or set BENCH_REDIS_URL."
        ) from None


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or ''}".rstrip(":")


def _admin_dsn(services: Services) -> str:
    """The maintenance database ``postgres`` on the bench's server."""
    return services.url_of("postgres").replace("postgres://", "postgresql://", 1)


def process_env(services: Services, api_url: str, **extra: str) -> dict[str, str]:
    """The environment of the bench's processes (bot, worker) and of this one."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("VK_", "OUTBOX_", "DATABASE_", "REDIS_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": services.database_url,
            "REDIS_URL": services.redis_url,
            "VK_API_URL": api_url,
            "VK_GROUP_ID": str(GROUP_ID),
            "VK_GROUP_TOKEN": GROUP_TOKEN,
            "VK_USER_TOKEN": USER_TOKEN,
            "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
            "DEBUG": "false",
            "SECRET_KEY": "bench-only-secret-key",
            "ALLOWED_HOSTS": "127.0.0.1",
            # Production settings, but plain HTTP on 127.0.0.1: no redirect to HTTPS.
            "SECURE_SSL_REDIRECT": "false",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.update(extra)
    return env


def setup_django(services: Services) -> None:
    """Configure this process for the bench database and start Django."""
    # This process sets games up and drains by itself: no drain jobs after its commits.
    os.environ.update(
        process_env(services, "http://127.0.0.1:9/method/", OUTBOX_DELIVERY_ENABLED="false")
    )
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- snapshots ---------------------------------------------------------------------------------


class Databases:
    """The bench database and its snapshots, managed through the maintenance database."""

    SNAPSHOTS = ("empty", "day", "night")

    def __init__(self, services: Services) -> None:
        self.services = services
        self.name = services.db_name

    def snapshot_name(self, kind: str) -> str:
        return f"{self.name}_{kind}"

    def _admin(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(_admin_dsn(self.services), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def _close_django(self) -> None:
        from django.db import connections

        connections.close_all()

    def recreate(self) -> None:
        """An empty bench database (every snapshot dropped too)."""
        self._close_django()
        names = [self.name, *(self.snapshot_name(k) for k in self.SNAPSHOTS)]
        self._admin(*(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)' for n in names))
        self._admin(f'CREATE DATABASE "{self.name}"')

    def snapshot(self, kind: str) -> None:
        """Copy the bench database as it is now into snapshot ``kind``."""
        self._close_django()
        target = self.snapshot_name(kind)
        self._admin(
            f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)',
            f'CREATE DATABASE "{target}" TEMPLATE "{self.name}"',
        )

    def restore(self, kind: str) -> None:
        """Make the bench database a copy of snapshot ``kind`` (every connection to it ends)."""
        self._close_django()
        self._admin(
            f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)',
            f'CREATE DATABASE "{self.name}" TEMPLATE "{self.snapshot_name(kind)}"',
        )

    def drop_all(self) -> None:
        self._close_django()
        names = [self.name, *(self.snapshot_name(k) for k in self.SNAPSHOTS)]
        self._admin(*(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)' for n in names))

    def drop_working(self) -> None:
        """Drop the bench database, keep the snapshots (the next run may reuse them)."""
        self._close_django()
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def label(self, kind: str, text: str) -> None:
        """Remember ``text`` with snapshot ``kind`` (a database comment)."""
        quoted = text.replace("'", "''")
        self._admin(f"COMMENT ON DATABASE \"{self.snapshot_name(kind)}\" IS '{quoted}'")

    def labels(self) -> dict[str, str | None]:
        """Each snapshot's label (None: no label, or no such snapshot)."""
        import psycopg

        with psycopg.connect(_admin_dsn(self.services), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database "
                "WHERE datname = ANY(%s)",
                [[self.snapshot_name(k) for k in self.SNAPSHOTS]],
            ).fetchall()
        found: dict[str, Any] = dict(rows)
        return {k: found.get(self.snapshot_name(k)) for k in self.SNAPSHOTS}


def flush_redis(services: Services) -> None:
    """Empty the bench's Redis database (queues, rate limiters, drain flags)."""
    import redis

    redis.Redis.from_url(services.redis_url).flushdb()
