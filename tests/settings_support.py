"""``manage.py`` in a clean environment, as a deployment runs it: many commands, each in an
environment of its own, from one started Python (:func:`run_manage_all`,
tests/settings_probe.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Every variable config/settings.py reads; a subprocess starts with none of them set.
CONFIG_VARS = (
    "DJANGO_SETTINGS_MODULE",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "DATA_DIR",
    "DATABASE_URL",
    "REDIS_URL",
    "VK_API_URL",
    "VK_API_VERSION",
    "VK_GROUP_ID",
    "VK_GROUP_TOKEN",
    "VK_USER_TOKEN",
    "VK_CALLBACK_SECRET",
    "VK_CONFIRMATION_CODE",
    "VK_COMMUNITIES_REFRESH_SECONDS",
    "RUNBOT_LEASE_RENEW_SECONDS",
    "RUNBOT_LEASE_TTL_SECONDS",
    "TOKEN_ENCRYPTION_KEYS",
    "TIME_ZONE",
    "LANGUAGE_CODE",
    "LOG_LEVEL",
)


def clean_environ(tmp_path: Path, debug: str | None = "true", **overrides: str) -> dict[str, str]:
    """This process's environment without the settings' variables: SQLite under ``tmp_path``
    unless overridden, ``DEBUG`` set to ``debug`` (``None``: unset, the production default)."""
    environ = {key: value for key, value in os.environ.items() if key not in CONFIG_VARS}
    environ["DATA_DIR"] = str(tmp_path)
    if debug is not None:
        environ["DEBUG"] = debug
    environ.update(overrides)
    return environ


def run_manage_named(
    runs: Mapping[str, tuple[Sequence[str], dict[str, str]]],
) -> dict[str, subprocess.CompletedProcess[str]]:
    """:func:`run_manage_all` of named runs, each result under its run's name."""
    return dict(zip(runs, run_manage_all(list(runs.values())), strict=True))


def run_manage_all(
    runs: Sequence[tuple[Sequence[str], dict[str, str]]], preload: Sequence[str] = ()
) -> list[subprocess.CompletedProcess[str]]:
    """Each ``(args, environ)`` of ``runs`` as ``python manage.py ARGS`` in ``environ`` would run,
    one after the other, from one Python started in the first run's environment (what the
    interpreter reads as it starts, such as PYTHONPATH, is that one's), which imports the modules
    ``preload`` names once for all of them."""
    payload = [{"args": list(args), "env": environ} for args, environ in runs]
    probe = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "settings_probe.py")],
        cwd=ROOT,
        env=runs[0][1],
        input=json.dumps({"runs": payload, "preload": list(preload)}),
        capture_output=True,
        text=True,
        timeout=60 + 60 * len(payload),
    )
    assert probe.returncode == 0, probe.stderr
    sys.stderr.write(
        probe.stderr
    )  # what the probe reported (a preload that failed): pytest shows it
    return [
        subprocess.CompletedProcess([sys.executable, "manage.py", *args], code, out, err)
        for (args, _), (code, out, err) in zip(runs, json.loads(probe.stdout), strict=True)
    ]
