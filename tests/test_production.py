"""Production-safe by default: DEBUG off, HTTPS settings from the
environment with secure defaults, ``check --deploy`` clean, compose on 127.0.0.1, the job-queue
dashboard for superusers only, a throttled admin login, and ``demo_seed`` refused."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.test import Client

from config import env
from config.env import EnvError
from tests.settings_support import ROOT, clean_environ, run_manage_all, run_manage_named

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


@pytest.fixture(scope="module")
def manage(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``manage.py`` runs of this module's tests, each in a clean environment of its own
    with its own DATA_DIR (under ``name + "/dir"``), all from one started Python
    (tests/settings_probe.py)."""
    runs: dict[str, tuple[list[str], dict[str, str]]] = {}
    dirs = {}

    def plan(name: str, *args: str, debug: str | None, **overrides: str) -> None:
        dirs[name] = tmp_path_factory.mktemp("manage")
        runs[name] = (list(args), clean_environ(dirs[name], debug, **overrides))

    dump = ("shell", "-c", DUMP_SECURITY)
    plan("security-production", *dump, debug=None, **PRODUCTION)
    plan("security-from-env", *dump, debug="false", **PRODUCTION, SESSION_COOKIE_SECURE="false",
         SECURE_SSL_REDIRECT="0", SECURE_HSTS_SECONDS="600", SECURE_HSTS_PRELOAD="no",
         SECURE_PROXY_SSL_HEADER="off")  # fmt: skip
    plan("security-debug", *dump, debug="true")
    deploy = ("check", "--deploy", "--fail-level", "WARNING")
    for source in ("defaults", ".env.example"):
        values = {} if source == "defaults" else env_example()
        values.update(PRODUCTION)
        plan(f"deploy {source}", *deploy, debug=values.pop("DEBUG", None), **values)
    plan("deploy without keys", *deploy, debug=None, **{**PRODUCTION, "TOKEN_ENCRYPTION_KEYS": ""})
    plan("demo_seed", "demo_seed", "--migrate", debug=None, **PRODUCTION)
    plan("rotate-forwarded-for", "shell", "-c", ROTATE_FORWARDED_FOR, debug=None, **PRODUCTION)
    proxies = (
        "shell",
        "-c",
        "from django.conf import settings; print(list(settings.TRUSTED_PROXIES))",
    )
    plan("proxies-production", *proxies, debug=None, **PRODUCTION)
    plan("proxies-development", *proxies, debug="true")
    results: dict[str, Any] = dict(run_manage_named(runs))
    results.update({f"{name}/dir": path for name, path in dirs.items()})
    return results


def security(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_off_gives_secure_https_defaults(manage: dict[str, Any]) -> None:
    values = security(manage["security-production"])

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


def test_https_settings_come_from_the_environment(manage: dict[str, Any]) -> None:
    values = security(manage["security-from-env"])

    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_HSTS_SECONDS"] == 600
    assert values["SECURE_HSTS_PRELOAD"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] is None


def test_debug_on_leaves_https_to_the_developer(manage: dict[str, Any]) -> None:
    values = security(manage["security-debug"])

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
def test_check_deploy_finds_nothing(manage: dict[str, Any], source: str) -> None:
    result = manage[f"deploy {source}"]

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_asks_for_token_encryption_keys(manage: dict[str, Any]) -> None:
    result = manage["deploy without keys"]

    assert result.returncode == 1
    assert "(gameplay.W001) TOKEN_ENCRYPTION_KEYS is not set" in result.stderr, result.stderr
    assert "rotate_token_keys" in result.stderr


def test_compose_publishes_the_web_on_loopback_unless_told() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    web = text.split("\n  web:\n", 1)[1].split("\n  bot:\n", 1)[0]

    ports = re.findall(r'^\s+- "([^"]+)"\s*$', web.split("ports:", 1)[1], re.MULTILINE)
    assert ports == ["${WEB_PUBLISH:-127.0.0.1}:${WEB_PORT:-8000}:8000"]


def test_compose_runs_as_many_bots_as_scaled() -> None:
    """``docker compose up --scale bot=3``: the bot service names no container and publishes
    no port (either would stop a second copy), and every copy gets the leases' settings."""
    text = (ROOT / "docker-compose.yml").read_text()
    bot = text.split("\n  bot:\n", 1)[1].split("\n  worker:\n", 1)[0]

    assert "runbot" in bot
    assert "container_name" not in bot and "ports" not in bot
    app = text.split("x-app: &app\n", 1)[1].split("\nx-after-migrate", 1)[0]
    for name in ("RUNBOT_LEASE_RENEW_SECONDS", "RUNBOT_LEASE_TTL_SECONDS"):
        assert f"{name}: ${{{name}:-" in app
        assert name in env_example()


def test_demo_seed_refuses_with_debug_off(manage: dict[str, Any]) -> None:
    result, tmp_path = manage["demo_seed"], manage["demo_seed/dir"]

    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "CommandError: demo_seed: refused: DEBUG is off (the demo game and its gm/gm superuser "
        "are for a development machine; run it through `make demo`)."
    ]
    assert not (tmp_path / "db.sqlite3").exists()


def test_the_image_runs_without_localvk(tmp_path: Path) -> None:
    """The local VK server (localvk/) is left out of the image (.dockerignore): the settings,
    the URLs, the bot's and the worker's commands load without it, and demo_seed still refuses.
    (The commands run from one Python started with the image's PYTHONPATH: tests/settings_probe.py.)
    """
    assert "localvk" in (ROOT / ".dockerignore").read_text().split()
    hide = tmp_path / "no-localvk"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['localvk'] = None\n")
    image = clean_environ(tmp_path, None, **PRODUCTION, PYTHONPATH=str(hide))
    commands = (["check"], ["runbot", "--help"], ["deliver", "--help"], ["rqworker", "--help"])

    hidden, *results, seed = run_manage_all(
        [(["shell", "-c", "import localvk"], image), *((args, image) for args in commands),
         (["demo_seed", "--migrate"], image)],
        preload=["vkbottle"],  # for runbot and deliver; no thread (no loguru), no environment
    )  # fmt: skip

    assert hidden.returncode != 0 and "ModuleNotFoundError" in hidden.stderr
    for args, result in zip(commands, results, strict=True):
        assert result.returncode == 0, (args, result.stderr)
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
    settings.TRUSTED_PROXIES = ("127.0.0.1/32",)
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


ROTATE_FORWARDED_FOR = """
import json
from django.core.management import call_command
from django.contrib.auth import get_user_model
from django.test import Client, override_settings


class NoMigrations:
    def __contains__(self, app):
        return True

    def __getitem__(self, app):
        return None


# The pages without collectstatic's manifest; the tables straight from the models (as
# pytest-django's --no-migrations makes them) and a cheap password hash: the lockout is the point.
override_settings(STORAGES={
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}, MIGRATION_MODULES=NoMigrations(),
   PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]).enable()
call_command("migrate", run_syncdb=True, verbosity=0)
get_user_model().objects.create_user("gm", password="right", is_staff=True)


def login(password, remote, forwarded):
    client = Client(HTTP_HOST="mafia.example.org")
    return client.post("/admin/login/", {"username": "gm", "password": password}, secure=True,
                       REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded).status_code


direct = [login("wrong", "203.0.113.50", f"198.51.100.{n}") for n in range(7)]
proxied = login("right", "127.0.0.1", "192.0.2.8")
print(json.dumps({"direct": direct, "proxied": proxied}))
"""


def test_with_the_defaults_rotating_x_forwarded_for_does_not_dodge_the_lockout(
    manage: dict[str, Any],
) -> None:
    # DEBUG off, nothing else said: someone who reaches the web directly (not through the proxy
    # on the same host) writes a fresh X-Forwarded-For for every wrong password.
    result = manage["rotate-forwarded-for"]

    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["direct"] == [200] * 4 + [429] * 3
    assert outcome["proxied"] == 302  # through the proxy, the GM's own address is not locked


@pytest.mark.django_db
def test_x_forwarded_proto_counts_only_from_a_trusted_proxy(client: Client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.TRUSTED_PROXIES = ("127.0.0.1/32", "::1/128")

    direct = client.get("/admin/login/", REMOTE_ADDR="203.0.113.50",
                        HTTP_X_FORWARDED_PROTO="https")  # fmt: skip
    proxied = client.get("/admin/login/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_PROTO="https")
    mapped = client.get("/admin/login/", REMOTE_ADDR="::ffff:127.0.0.1",
                        HTTP_X_FORWARDED_PROTO="https")  # fmt: skip

    assert direct.status_code == 301
    assert direct["Location"] == "https://testserver/admin/login/"
    assert proxied.status_code == mapped.status_code == 200


@pytest.mark.parametrize(
    ("remote", "forwarded", "expected"),
    [
        # No proxy in between: REMOTE_ADDR, whatever the client wrote.
        ("203.0.113.50", "1.1.1.1", "203.0.113.50"),
        ("203.0.113.50", None, "203.0.113.50"),
        # The proxy appended what it saw: entries left of it are the client's own.
        ("127.0.0.1", " 1.1.1.1, 2.2.2.2 ,3.3.3.3", "3.3.3.3"),
        ("127.0.0.1", None, "127.0.0.1"),
        # Two proxies (a load balancer in 10.0.0.0/8 before the local one): back to the first
        # address that is no trusted proxy.
        ("127.0.0.1", "1.1.1.1, 2.2.2.2, 10.1.2.3", "2.2.2.2"),
        # Reaching the inner proxy directly gains nothing: its entry is the client's address.
        ("127.0.0.1", "10.1.2.3, 2.2.2.2", "2.2.2.2"),
        # Not an address (a proxy never writes that): the proxy's own address stands.
        ("127.0.0.1", "1.1.1.1, garbage", "127.0.0.1"),
    ],
)
def test_the_client_address_is_read_back_to_the_first_untrusted_one(
    settings, remote: str, forwarded: str | None, expected: str
) -> None:
    from django.test import RequestFactory

    from config.proxies import client_address

    settings.TRUSTED_PROXIES = ("127.0.0.1/32", "10.0.0.0/8")
    headers: dict[str, Any] = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    request = RequestFactory().get("/", REMOTE_ADDR=remote, **headers)

    assert client_address(request) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("127.0.0.1, ::1", ("127.0.0.1/32", "::1/128")),
        ("172.16.0.0/12,192.168.0.0/16", ("172.16.0.0/12", "192.168.0.0/16")),
        ("10.0.0.5/8", ("10.0.0.0/8",)),
        ("none", ()),
        ("", ("127.0.0.1/32",)),
    ],
)
def test_trusted_proxies_from_the_environment(raw: str, expected: tuple[str, ...]) -> None:
    value = env.get_networks("P", ("127.0.0.1/32",), environ={"P": raw})

    assert value == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("proxy.local", "P must list IP addresses or networks separated by commas (such as "
         "127.0.0.1,::1 or 172.16.0.0/12), or none; 'proxy.local' is neither."),
        ("127.0.0.1,10.0.0.0/33", "'10.0.0.0/33' is neither"),
        ("0.0.0.0/0", "P must not contain '0.0.0.0/0': it trusts every address on the Internet"),
        ("::/0", "P must not contain '::/0'"),
    ],
)  # fmt: skip
def test_trusted_proxies_refuse_what_is_no_proxy(raw: str, message: str) -> None:
    with pytest.raises(EnvError, match=re.escape(message)):
        env.get_networks("P", (), environ={"P": raw})


def test_trusted_proxies_default_to_loopback_with_debug_off(manage: dict[str, Any]) -> None:
    production, development = manage["proxies-production"], manage["proxies-development"]

    assert production.stdout.strip().splitlines()[-1] == "['127.0.0.1/32', '::1/128']"
    assert development.stdout.strip().splitlines()[-1] == "[]"


def test_make_run_listens_on_loopback_unless_told() -> None:
    from ops.serve import DEFAULT_BIND, parse_bind

    assert parse_bind(DEFAULT_BIND).host == "127.0.0.1"
    assert env_example()["BIND"] == "127.0.0.1:8000"
    assert "default 127.0.0.1:8000" in (ROOT / "Makefile").read_text()


def test_compose_trusts_forwarded_headers_from_its_network_gateway_only() -> None:
    text = (ROOT / "docker-compose.yml").read_text()

    [trusted] = re.findall(r"^\s+TRUSTED_PROXIES: (.+)$", text, re.MULTILINE)
    assert trusted == "${TRUSTED_PROXIES:-172.16.0.0/12,192.168.0.0/16}"
    assert env.get_networks("T", environ={"T": "172.16.0.0/12,192.168.0.0/16"})
    assert env_example()["TRUSTED_PROXIES"] == ""  # compose's default applies
