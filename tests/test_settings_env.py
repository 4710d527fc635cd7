"""Settings from the environment: typed parsing, one-line errors, SQLite mode, django-rq."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import django_rq
import pytest
from django.conf import settings
from rq.worker import SimpleWorker

from config import env
from config.env import EnvError
from tests.settings_support import clean_environ, run_manage_named

#: A Fernet key (32 bytes, url-safe base64), as ``Fernet.generate_key()`` makes one.
VALID_FERNET_KEY = "a" * 43 + "="


# --- Bad values: one line on stderr, exit status 2 ----------------------------------------------


BAD_VALUES = [
    ({"DATABASE_URL": "foo://x"}, "DATABASE_URL must be a sqlite:// or postgres:// URL"),
    ({"DATABASE_URL": "no-scheme"}, "DATABASE_URL must be a sqlite:// or postgres:// URL"),
    ({"DATABASE_URL": "postgres://h:notaport/db"}, "DATABASE_URL is not a valid database URL"),
    ({"VK_GROUP_ID": "abc"}, "VK_GROUP_ID must be an integer, got 'abc'."),
    ({"VK_GROUP_ID": "-5"}, "VK_GROUP_ID must be at least 1, got -5."),
    ({"DEBUG": "maybe"}, "DEBUG must be a boolean"),
    ({"DEBUG": "false"}, "SECRET_KEY must be set when DEBUG is false."),
    ({"DEBUG": "false", "SECRET_KEY": "s" * 50}, "ALLOWED_HOSTS must be set"),
    ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL must be a redis://"),
    ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ({"TIME_ZONE": "Mars/Base"}, "TIME_ZONE must be an IANA time zone"),
    ({"TIME_ZONE": "America"}, "TIME_ZONE must be an IANA time zone"),
    (
        {"TOKEN_ENCRYPTION_KEYS": "not-a-key"},
        "TOKEN_ENCRYPTION_KEYS: key 1 is not a Fernet key (44 characters of url-safe base64",
    ),
    (
        {"TOKEN_ENCRYPTION_KEYS": f"{VALID_FERNET_KEY},short"},
        "TOKEN_ENCRYPTION_KEYS: key 2 is not a Fernet key",
    ),
    (
        {"VK_COMMUNITIES_REFRESH_SECONDS": "0"},
        "VK_COMMUNITIES_REFRESH_SECONDS must be at least 1, got 0.",
    ),
    (
        {"RUNBOT_LEASE_RENEW_SECONDS": "soon"},
        "RUNBOT_LEASE_RENEW_SECONDS must be a number of seconds, got 'soon'.",
    ),
    (
        {"RUNBOT_LEASE_RENEW_SECONDS": "0"},
        "RUNBOT_LEASE_RENEW_SECONDS must be between 0.1 and 60 seconds, got 0.",
    ),
    (
        {"RUNBOT_LEASE_TTL_SECONDS": "nan"},
        "RUNBOT_LEASE_TTL_SECONDS must be between 0.3 and 600 seconds, got nan.",
    ),
    (
        {"RUNBOT_LEASE_TTL_SECONDS": "3"},
        "RUNBOT_LEASE_TTL_SECONDS (3) must be at least twice RUNBOT_LEASE_RENEW_SECONDS (2)",
    ),
    (
        {"VK_USER_REFRESH_TOKEN": "r", "VK_USER_DEVICE_ID": "d", "VK_GROUP_ID": "1"},
        "VK_USER_REFRESH_TOKEN needs VK_ID_APP_ID",
    ),
    ({"VK_ID_URL": "id.vk.com"}, "VK_ID_URL must be an http:// or https:// address"),
]


@pytest.fixture(scope="module")
def manage(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every ``manage.py`` run of this module, each in a clean environment of its own with its
    own DATA_DIR (under ``name + "/dir"``), all from one started Python (tests/settings_probe.py):
    ``check`` with every bad value, and the settings dumps of the tests below."""
    runs: dict[str, tuple[list[str], dict[str, str]]] = {}
    dirs = {}

    def plan(name: str, *args: str, debug: str | None = "true", **overrides: str) -> None:
        dirs[name] = tmp_path_factory.mktemp("manage")
        runs[name] = (list(args), clean_environ(dirs[name], debug, **overrides))

    for overrides, _ in BAD_VALUES:
        plan(bad_value_key(overrides), "check", **overrides)
    plan("password", "check", DATABASE_URL="mysql://u:hunter2@h/db")
    plan("debug-unset", "check", debug=None)
    plan(
        "dump-debug-unset",
        "shell",
        "-c",
        DUMP_SETTINGS,
        debug=None,
        SECRET_KEY="k" * 50,
        ALLOWED_HOSTS="a.example",
    )
    plan("dump-defaults", "shell", "-c", DUMP_SETTINGS)
    plan("dump-production", "shell", "-c", DUMP_SETTINGS, **PRODUCTION_VALUES)
    plan("pragmas", "shell", "-c", SQLITE_PRAGMAS)
    results: dict[str, Any] = dict(run_manage_named(runs))
    results.update({f"{name}/dir": path for name, path in dirs.items()})
    return results


def bad_value_key(overrides: dict[str, str]) -> str:
    return "bad " + json.dumps(overrides, sort_keys=True)


@pytest.mark.parametrize(("overrides", "message"), BAD_VALUES)
def test_bad_value_gives_one_line_and_status_2(
    manage: dict[str, Any], overrides: dict[str, str], message: str
) -> None:
    result = manage[bad_value_key(overrides)]

    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Configuration error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_bad_value_does_not_echo_database_password(manage: dict[str, Any]) -> None:
    result = manage["password"]

    assert result.returncode == 2
    assert "hunter2" not in result.stderr


# --- Good values -----------------------------------------------------------------------------

DUMP_SETTINGS = """
import json
from django.conf import settings as s
db = s.DATABASES["default"]
print(json.dumps({
    "DEBUG": s.DEBUG, "SECRET_KEY": s.SECRET_KEY, "ALLOWED_HOSTS": s.ALLOWED_HOSTS,
    "ENGINE": db["ENGINE"], "NAME": str(db["NAME"]), "HOST": db.get("HOST"),
    "PORT": db.get("PORT"), "CONN_MAX_AGE": db["CONN_MAX_AGE"],
    "ATOMIC_REQUESTS": db["ATOMIC_REQUESTS"], "OPTIONS": db.get("OPTIONS", {}),
    "RQ_QUEUES": s.RQ_QUEUES, "VK_GROUP_ID": s.VK_GROUP_ID, "VK_API_URL": s.VK_API_URL,
    "VK_API_VERSION": s.VK_API_VERSION, "VK_GROUP_TOKEN": s.VK_GROUP_TOKEN,
    "TIME_ZONE": s.TIME_ZONE, "LANGUAGE_CODE": s.LANGUAGE_CODE, "USE_TZ": s.USE_TZ,
    "LOG_LEVEL": s.LOGGING["root"]["level"],
    "STATICFILES": s.STORAGES["staticfiles"]["BACKEND"],
    "RUNBOT_LEASE": [s.RUNBOT_LEASE_RENEW_SECONDS, s.RUNBOT_LEASE_TTL_SECONDS],
}))
"""


def dumped(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_is_off_unless_set(manage: dict[str, Any]) -> None:
    result = manage["debug-unset"]

    assert result.returncode == 2
    assert result.stderr.strip() == (
        "Configuration error: SECRET_KEY must be set when DEBUG is false."
    )
    values = dumped(manage["dump-debug-unset"])
    assert values["DEBUG"] is False


def test_defaults_are_the_embedded_default(manage: dict[str, Any]) -> None:
    values = dumped(manage["dump-defaults"])
    tmp_path = manage["dump-defaults/dir"]

    assert values["DEBUG"] is True
    assert values["ENGINE"] == "django.db.backends.sqlite3"
    assert values["NAME"] == str(tmp_path / "db.sqlite3")
    assert values["OPTIONS"] == env.SQLITE_OPTIONS
    assert values["ATOMIC_REQUESTS"] is False
    assert set(values["RQ_QUEUES"]) == {"default", "vk"}
    assert all(q["USE_REDIS_CACHE"] == "rq" for q in values["RQ_QUEUES"].values())
    assert values["VK_API_URL"] == "https://api.vk.ru/method/"
    assert values["VK_API_VERSION"] == "5.199"
    assert values["VK_GROUP_ID"] is None
    assert values["TIME_ZONE"] == "Europe/Moscow"
    assert values["LANGUAGE_CODE"] == "ru"
    assert values["USE_TZ"] is True
    assert values["LOG_LEVEL"] == "INFO"
    assert values["RUNBOT_LEASE"] == [2.0, 6.0]


PRODUCTION_VALUES = {
    "DEBUG": "False",
    "SECRET_KEY": "k" * 50,
    "ALLOWED_HOSTS": "mafia.example.org, panel.example.org",
    "DATABASE_URL": "postgres://mafia:pw@db.example.org:5433/mafia",
    "REDIS_URL": "redis://cache.example.org:6379/2",
    "VK_GROUP_ID": "123456",
    "VK_GROUP_TOKEN": "group-token",
    "VK_API_URL": "http://127.0.0.1:9999/method/",
    "TIME_ZONE": "UTC",
    "LANGUAGE_CODE": "en",
    "LOG_LEVEL": "warning",
    "RUNBOT_LEASE_RENEW_SECONDS": "0.5",
    "RUNBOT_LEASE_TTL_SECONDS": "1.5",
}


def test_production_values_parse(manage: dict[str, Any]) -> None:
    values = dumped(manage["dump-production"])

    assert values["RUNBOT_LEASE"] == [0.5, 1.5]
    assert values["DEBUG"] is False
    assert values["SECRET_KEY"] == "k" * 50
    assert values["ALLOWED_HOSTS"] == ["mafia.example.org", "panel.example.org"]
    assert values["ENGINE"] == "django.db.backends.postgresql"
    assert (values["NAME"], values["HOST"], values["PORT"]) == ("mafia", "db.example.org", 5433)
    assert values["CONN_MAX_AGE"] == 60
    assert values["ATOMIC_REQUESTS"] is False
    assert values["RQ_QUEUES"] == {
        name: {"URL": "redis://cache.example.org:6379/2", "DEFAULT_TIMEOUT": 300}
        for name in ("default", "vk")
    }
    assert values["VK_GROUP_ID"] == 123456
    assert values["VK_GROUP_TOKEN"] == "group-token"
    assert values["VK_API_URL"] == "http://127.0.0.1:9999/method/"
    assert (values["TIME_ZONE"], values["LANGUAGE_CODE"]) == ("UTC", "en")
    assert values["LOG_LEVEL"] == "WARNING"
    assert values["STATICFILES"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("TRUE", True),
        ("yes", True),
        ("on", True),
        ("0", False),
        ("False", False),
        ("no", False),
        ("off", False),
        ("", True),
        ("  ", True),
    ],
)
def test_get_bool(raw: str, expected: bool) -> None:
    assert env.get_bool("FLAG", True, environ={"FLAG": raw}) is expected


def test_getters_use_defaults_when_unset() -> None:
    assert env.get_str("X", "d", environ={}) == "d"
    assert env.get_int("X", 7, environ={}) == 7
    assert env.get_int("X", environ={}) is None
    assert env.get_list("X", environ={}) == []
    assert env.get_redis_url("X", environ={}) is None


def test_get_fernet_keys() -> None:
    other = "b" * 43 + "="
    assert env.get_fernet_keys("K", environ={}) == []
    assert env.get_fernet_keys("K", environ={"K": f" {VALID_FERNET_KEY} ,{other}"}) == [
        VALID_FERNET_KEY,
        other,
    ]
    for bad in ("short", "é" * 44, "A" * 44, VALID_FERNET_KEY[:-1]):
        with pytest.raises(EnvError, match="K: key 1 is not a Fernet key"):
            env.get_fernet_keys("K", environ={"K": bad})


def test_the_environments_refresh_token_comes_with_its_device_app_and_community() -> None:
    """VK_USER_REFRESH_TOKEN: VK ID renews it only with its device id, for its app; it is the
    environment's community's (VK_GROUP_ID)."""
    pair = {"VK_USER_REFRESH_TOKEN": " r ", "VK_USER_DEVICE_ID": "d"}
    assert env.get_vk_user_renewal(group_id=1, app_id=2, environ=pair) == ("r", "d")
    assert env.get_vk_user_renewal(group_id=None, app_id=None, environ={}) == ("", "")
    refusals = [
        ({"VK_USER_REFRESH_TOKEN": "r"}, 1, 2, "VK_USER_REFRESH_TOKEN needs VK_USER_DEVICE_ID"),
        ({"VK_USER_DEVICE_ID": "d"}, 1, 2, "VK_USER_DEVICE_ID is set without"),
        (pair, 1, None, "VK_USER_REFRESH_TOKEN needs VK_ID_APP_ID"),
        (pair, None, 2, "set VK_GROUP_ID too"),
    ]
    for environ, group_id, app_id, message in refusals:
        with pytest.raises(EnvError, match=message):
            env.get_vk_user_renewal(group_id=group_id, app_id=app_id, environ=environ)


def test_get_int_and_list() -> None:
    assert env.get_int("N", environ={"N": " 42 "}) == 42
    assert env.get_list("L", environ={"L": "a, b,,c "}) == ["a", "b", "c"]
    with pytest.raises(EnvError, match="N must be an integer"):
        env.get_int("N", environ={"N": "4.2"})


def test_sqlite_url_keeps_project_options() -> None:
    config = env.get_database("DB", "/unused", environ={"DB": "sqlite:////tmp/mafia.db"})

    assert config["NAME"] == "/tmp/mafia.db"
    assert config["OPTIONS"] == env.SQLITE_OPTIONS


# --- SQLite mode -------------------------------------------------------------------------------

SQLITE_PRAGMAS = """
import json
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("PRAGMA journal_mode")
    journal = cursor.fetchone()[0]
    cursor.execute("PRAGMA synchronous")
    synchronous = cursor.fetchone()[0]
    cursor.execute("PRAGMA busy_timeout")
    busy = cursor.fetchone()[0]
print(json.dumps([journal, synchronous, busy, connection.transaction_mode]))
"""


def test_sqlite_file_uses_wal_and_immediate_transactions(manage: dict[str, Any]) -> None:
    result = manage["pragmas"]
    tmp_path = manage["pragmas/dir"]

    assert result.returncode == 0, result.stderr
    journal, synchronous, busy_ms, mode = json.loads(result.stdout.strip().splitlines()[-1])
    assert journal == "wal"
    assert synchronous == 1  # NORMAL
    assert busy_ms == 20_000
    assert mode == "IMMEDIATE"
    assert (tmp_path / "db.sqlite3").exists()


# --- django-rq -------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    return a + b


def test_redis_backend_matches_redis_url() -> None:
    import fakeredis

    connection = django_rq.get_connection("default")
    if settings.REDIS_URL:
        assert not isinstance(connection, fakeredis.FakeStrictRedis)
    else:
        assert isinstance(connection, fakeredis.FakeStrictRedis)
    assert connection.ping()


def test_job_runs_synchronously_with_is_async_false() -> None:
    queue = django_rq.get_queue("default", is_async=False)

    job = queue.enqueue(add, 2, 3)

    assert job.is_finished
    assert job.return_value() == 5


@pytest.mark.parametrize("queue_name", ["default", "vk"])
def test_job_enqueued_then_run_by_a_worker(rq_queues: dict, queue_name: str) -> None:
    queue = rq_queues[queue_name]

    job = queue.enqueue(add, 20, 22)
    assert queue.count == 1
    worked = django_rq.get_worker(queue_name, worker_class=SimpleWorker).work(burst=True)  # type: ignore[arg-type]  # django_rq types rq's Worker only

    assert worked
    job.refresh()
    assert job.is_finished
    assert job.return_value() == 42
    assert queue.count == 0


def test_scheduled_job_runs_once_due(rq_queues: dict) -> None:
    from datetime import UTC, datetime, timedelta

    queue = rq_queues["default"]
    job = queue.enqueue_at(datetime.now(UTC) - timedelta(seconds=1), add, 1, 1)
    assert job.get_status() == "scheduled"

    worker = django_rq.get_worker("default", worker_class=SimpleWorker)  # type: ignore[arg-type]  # django_rq types rq's Worker only
    worker.work(burst=True, with_scheduler=True)

    job.refresh()
    assert job.is_finished
    assert job.return_value() == 2


def test_hypothesis_profile_follows_the_environment() -> None:
    from hypothesis import settings as hypothesis_settings

    profile = os.environ.get("HYPOTHESIS_PROFILE", "dev")
    expected = {"dev": 100, "ci": 500}[profile]
    assert hypothesis_settings().max_examples == expected
