"""Production-safe by default (issue 12, item 3): DEBUG off, HTTPS settings from the
environment with secure defaults, ``check --deploy`` clean, compose on 127.0.0.1, the job-queue
dashboard for superusers only, a throttled admin login, and ``demo_seed`` refused."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.test import Client

from config import env
from config.env import EnvError
from tests.test_settings_env import ROOT, run_manage

PRODUCTION = {
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "mafia.example.org",
    "TOKEN_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
}

DUMP_SECURITY = """
import json
from django.conf import settings as s
print(json.dumps({k: getattr(s, k) for k in (
    "DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER")}))
"""


def env_example() -> dict[str, str]:
    """The variables ``.env.example`` sets (what ``set -a; . ./.env.example`` exports)."""
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(.*)", line.strip())
        if match:
            values[match.group(1)] = match.group(2)
    return values


def security(tmp_path: Path, debug: str | None, **overrides: str) -> dict[str, object]:
    import json

    result = run_manage("shell", "-c", DUMP_SECURITY, tmp_path=tmp_path, debug=debug, **overrides)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_off_gives_secure_https_defaults(tmp_path: Path) -> None:
    values = security(tmp_path, None, **PRODUCTION)

    assert values == {
        "DEBUG": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
    }


def test_https_settings_come_from_the_environment(tmp_path: Path) -> None:
    values = security(
        tmp_path,
        "false",
        **PRODUCTION,
        SESSION_COOKIE_SECURE="false",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="600",
        SECURE_HSTS_PRELOAD="no",
        SECURE_PROXY_SSL_HEADER="off",
    )

    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_HSTS_SECONDS"] == 600
    assert values["SECURE_HSTS_PRELOAD"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] is None


def test_debug_on_leaves_https_to_the_developer(tmp_path: Path) -> None:
    values = security(tmp_path, "true")

    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_HSTS_SECONDS"] == 0
    assert values["SECURE_PROXY_SSL_HEADER"] is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("X-Forwarded-Proto", ("HTTP_X_FORWARDED_PROTO", "https")),
        ("x-scheme", ("HTTP_X_SCHEME", "https")),
        ("off", None),
        ("None", None),
    ],
)
def test_proxy_ssl_header(raw: str, expected: tuple[str, str] | None) -> None:
    value = env.get_proxy_ssl_header("H", "off", environ={"H": raw})

    assert value == expected


@pytest.mark.parametrize("raw", ["X Forwarded", "X-Proto: https", "é"])
def test_proxy_ssl_header_refuses_what_is_no_header_name(raw: str) -> None:
    with pytest.raises(EnvError, match="H must be an HTTP header name"):
        env.get_proxy_ssl_header("H", "off", environ={"H": raw})


@pytest.mark.parametrize("source", ["defaults", ".env.example"])
def test_check_deploy_finds_nothing(tmp_path: Path, source: str) -> None:
    values = {} if source == "defaults" else env_example()
    values.update(PRODUCTION)

    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        tmp_path=tmp_path,
        debug=values.pop("DEBUG", None),
        **values,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_asks_for_token_encryption_keys(tmp_path: Path) -> None:
    values = {**PRODUCTION, "TOKEN_ENCRYPTION_KEYS": ""}

    result = run_manage("check", "--deploy", "--fail-level", "WARNING", tmp_path=tmp_path,
                        debug=None, **values)  # fmt: skip

    assert result.returncode == 1
    assert "(gameplay.W001) TOKEN_ENCRYPTION_KEYS is not set" in result.stderr, result.stderr
    assert "rotate_token_keys" in result.stderr


def test_compose_publishes_the_web_on_loopback_unless_told() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    web = text.split("\n  web:\n", 1)[1].split("\n  bot:\n", 1)[0]

    ports = re.findall(r'^\s+- "([^"]+)"\s*$', web.split("ports:", 1)[1], re.MULTILINE)
    assert ports == ["${WEB_PUBLISH:-127.0.0.1}:${WEB_PORT:-8000}:8000"]


def test_demo_seed_refuses_with_debug_off(tmp_path: Path) -> None:
    result = run_manage("demo_seed", "--migrate", tmp_path=tmp_path, debug=None, **PRODUCTION)

    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "CommandError: demo_seed: refused: DEBUG is off (the demo game and its gm/gm superuser "
        "are for a development machine; run it through `make demo`)."
    ]
    assert not (tmp_path / "db.sqlite3").exists()


def test_the_image_runs_without_localvk(tmp_path: Path) -> None:
    """The local VK server (localvk/) is left out of the image (.dockerignore): the settings,
    the URLs, the bot's and the worker's commands load without it, and demo_seed still refuses."""
    assert "localvk" in (ROOT / ".dockerignore").read_text().split()
    hide = tmp_path / "no-localvk"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['localvk'] = None\n")
    image = {**PRODUCTION, "PYTHONPATH": str(hide)}

    hidden = run_manage("shell", "-c", "import localvk", tmp_path=tmp_path, debug=None, **image)
    assert hidden.returncode != 0 and "ModuleNotFoundError" in hidden.stderr
    for args in (["check"], ["runbot", "--help"], ["deliver", "--help"], ["rqworker", "--help"]):
        result = run_manage(*args, tmp_path=tmp_path, debug=None, **image)
        assert result.returncode == 0, (args, result.stderr)
    seed = run_manage("demo_seed", "--migrate", tmp_path=tmp_path, debug=None, **image)
    assert seed.returncode == 2 and "demo_seed: refused: DEBUG is off" in seed.stderr


# --- the job-queue dashboard -------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/django-rq/", "/django-rq/queues/0/", "/django-rq/stats.json/"])
def test_job_queue_dashboard_refuses_a_gm(client: Client, url: str) -> None:
    gm = get_user_model().objects.create_user("ведущий", password="x", is_staff=True)
    client.force_login(gm)

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_job_queue_dashboard_is_not_in_the_admin(client: Client) -> None:
    gm = get_user_model().objects.create_user("ведущий", password="x", is_staff=True)
    client.force_login(gm)

    assert "django_rq" not in client.get("/admin/").content.decode().lower()
    assert client.get("/admin/django_rq/dashboard/").status_code == 404


@pytest.mark.django_db
def test_job_queue_dashboard_serves_a_superuser(client: Client, rq_queues: dict) -> None:
    client.force_login(get_user_model().objects.create_superuser("root", password="x"))

    assert client.get("/django-rq/").status_code == 200
    assert client.get("/django-rq/queues/0/").status_code == 200


# --- the admin login is throttled --------------------------------------------------------------


@pytest.mark.django_db
def test_admin_login_locks_out_after_repeated_failures(
    client: Client, settings, caplog: pytest.LogCaptureFixture
) -> None:
    get_user_model().objects.create_user("ведущий", password="right-password", is_staff=True)

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/admin/login/", {"username": "ведущий", "password": "wrong"})
        assert response.status_code == 200  # the form again, with Django's own error
    locked = client.post("/admin/login/", {"username": "ведущий", "password": "wrong"})
    right = client.post("/admin/login/", {"username": "ведущий", "password": "right-password"})

    for response in (locked, right):
        assert response.status_code == 429
        page = response.content.decode()
        assert "Слишком много неудачных попыток входа" in page
        assert "на 15 мин." in page
    assert "_auth_user_id" not in client.session
    assert "admin login locked out" in caplog.text


@pytest.mark.django_db
def test_admin_login_lockout_is_per_user_name(client: Client, settings) -> None:
    get_user_model().objects.create_user("другой", password="pw-of-another", is_staff=True)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/admin/login/", {"username": "ведущий", "password": "wrong"})

    response = client.post("/admin/login/", {"username": "другой", "password": "pw-of-another"})

    assert response.status_code == 302
    assert client.session["_auth_user_id"]


@pytest.mark.django_db
def test_behind_a_proxy_the_lockout_is_per_client_address_not_the_proxys(
    client: Client, settings
) -> None:
    # Every request reaches the web from the proxy (REMOTE_ADDR 127.0.0.1); the proxy appends
    # the client's address to X-Forwarded-For, after whatever the client itself wrote there.
    settings.TRUSTED_PROXY_COUNT = 1
    get_user_model().objects.create_user("ведущий", password="right-password", is_staff=True)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/admin/login/", {"username": "ведущий", "password": "wrong"},
                    HTTP_X_FORWARDED_FOR="203.0.113.7")  # fmt: skip
    # The attacker cannot get a fresh address by writing one in front of the proxy's entry.
    spoofed = client.post("/admin/login/", {"username": "ведущий", "password": "wrong"},
                          HTTP_X_FORWARDED_FOR="10.9.9.9, 203.0.113.7")  # fmt: skip
    assert spoofed.status_code == 429

    gm = Client()
    response = gm.post("/admin/login/", {"username": "ведущий", "password": "right-password"},
                       HTTP_X_FORWARDED_FOR="198.51.100.4")  # fmt: skip
    assert response.status_code == 302  # the GM, from their own address, is not locked out
    assert gm.session["_auth_user_id"]


def test_the_client_address_is_the_entry_the_trusted_proxies_appended(settings) -> None:
    from django.test import RequestFactory

    from panel.access import client_address

    request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1",
                                   HTTP_X_FORWARDED_FOR=" 1.1.1.1, 2.2.2.2 ,3.3.3.3")  # fmt: skip
    for count, expected in ((0, "127.0.0.1"), (1, "3.3.3.3"), (2, "2.2.2.2"), (4, "127.0.0.1")):
        settings.TRUSTED_PROXY_COUNT = count
        assert client_address(request) == expected
    settings.TRUSTED_PROXY_COUNT = 1
    bare = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1")
    assert client_address(bare) == "127.0.0.1"
