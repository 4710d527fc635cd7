"""The tests' settings: the project's own, with DEBUG on unless the environment says otherwise.

``DEBUG`` defaults to off (config/settings.py); the tests, like the demo, turn it on themselves.
It is set in ``os.environ`` so that every process a test starts (workers, the bot, the demo)
inherits it; those processes read ``config.settings``, the module the environment names again
once Django has taken this one.

Parallel runs (pytest-xdist, ``make test``): each worker gets a database of its own — pytest-django
suffixes the test database's name with the worker's id (``test_test_gw0`` on PostgreSQL), and on
the embedded default the test database is an SQLite *file* in a directory of the worker's own —
and, on a real Redis, a Redis database of its own (``REDIS_URL``'s number plus the worker's).

Why a file and not Django's in-memory test database: the in-memory one is opened with SQLite's
shared cache, where a connection that reads a table while another thread's connection writes it
fails at once with "database table is locked" (SQLITE_LOCKED) — neither the busy timeout nor WAL
applies to the shared cache. runbot's threads in the end-to-end tests met exactly that. A file in
WAL mode is what the embedded default runs on, so the tests run on the same.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

os.environ.setdefault("DEBUG", "true")

_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1 … under pytest-xdist


def _redis_url_of_worker(url: str, worker: str) -> str:
    """``url`` with its database number moved up by the worker's number (gw1: +1)."""
    match = re.fullmatch(r"gw(\d+)", worker)
    if not match or not url.startswith(("redis://", "rediss://")):
        return url
    head, _, tail = url.partition("?")
    base = re.match(r"^(.*?://[^/]*)(?:/(\d*))?$", head)
    if base is None:
        return url
    number = int(base.group(2) or 0) + int(match.group(1))
    if number > 15:
        raise RuntimeError(f"REDIS_URL {url!r}: no Redis database {number} for worker {worker}")
    return f"{base.group(1)}/{number}" + (f"?{tail}" if tail else "")


if os.environ.get("REDIS_URL"):
    # Processes a test starts inherit the worker's database too.
    os.environ["REDIS_URL"] = _redis_url_of_worker(os.environ["REDIS_URL"], _WORKER)

from config.settings import *  # noqa: E402, F403
from config.settings import DATABASES  # noqa: E402

os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _TEST_DB_DIR = tempfile.mkdtemp(prefix=f"vkmafia-test-db-{_WORKER or 'main'}-")
    atexit.register(shutil.rmtree, _TEST_DB_DIR, ignore_errors=True)
    DATABASES["default"]["TEST"] = {"NAME": os.path.join(_TEST_DB_DIR, "test.sqlite3")}

# The tests run the Callback applier themselves (vkbot.inbox.apply_inbox), in their own
# transaction; processes a test starts read config.settings, whose web processes apply.
CALLBACK_APPLY_IN_WEB = False

# Accounts are created in many tests; the production hasher is slow on purpose (about half a
# second of CPU per password). Processes a test starts read config.settings, which cannot verify
# these hashes: an account such a process logs in with is created there (the demo's seed).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
