"""What ``make run`` (``manage.py serve``) runs against VK: after the operator's configuration
is checked, the migrations and ``collectstatic`` (one-shot), then side by side the web (gunicorn),
the workers (``rqworker default vk --with-scheduler``) and — unless VK pushes the events to the
web through the Callback API — the bot (``runbot``, the long poll). Stopped in reverse order:
the bot first, then the workers, then the web.

The VK communities served are the environment's (``VK_GROUP_ID``, optional) and those connected
in the panel; the web and the workers record the environment's as a row when they start
(``gameplay.startup``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import env
from config.env import ENV_ERROR_EXIT_STATUS, EnvError
from gameplay.management.database import error_line

from .probes import http_status, port_in_use, unix_http_status
from .supervisor import Interrupted, Service, StartupError, Supervisor

#: Loopback: the TLS proxy in front of the web runs on the same host (and is the only trusted
#: proxy by default, TRUSTED_PROXIES); another interface only when BIND says so.
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_WEB_CONCURRENCY = 2
DEFAULT_WORKERS = 1
#: A service that exits is restarted after 1, 2, 4 … 30 s; after this many exits within
#: RESTART_WINDOW seconds it counts as broken and everything stops (an outer supervisor such
#: as systemd may then start `make run` again).
MAX_RESTARTS = 10
RESTART_WINDOW = 600.0
#: Django's system checks run once, in serve itself (after its own checks); the steps and
#: services skip them (a faster start and restart).
SKIP_CHECKS = ("--skip-checks",)
#: The page whose answer tells that the web is up (the GM panel's login).
READY_PATH = "/admin/login/"
#: The endpoint VK pushes events to in callback mode (vkbot/urls.py, mounted at /vk/).
CALLBACK_PATH = "/vk/callback/"
#: The panel's «Подключить сообщество» (panel/urls.py, mounted at /panel/).
CONNECT_PATH = "/panel/communities/connect/"
#: What serve says when it serves no community yet (no VK_GROUP_ID, none connected).
NO_COMMUNITY = (
    "no VK community is configured yet: connect one in the panel at {connect} "
    "(«Сообщества» → «Подключить сообщество»); it is served within {seconds} s, no restart."
)


@dataclass(frozen=True)
class Bind:
    """Where gunicorn listens: ``HOST:PORT`` (``[V6]:PORT``) or ``unix:PATH``."""

    text: str
    host: str | None = None
    port: int | None = None

    @property
    def is_tcp(self) -> bool:
        return self.port is not None

    @property
    def probe_host(self) -> str:
        """The address to reach the web at from this machine."""
        if self.host in (None, "", "0.0.0.0", "*"):
            return "127.0.0.1"
        if self.host == "::":
            return "::1"
        return self.host

    @property
    def url(self) -> str:
        host = self.probe_host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"


def parse_bind(value: str) -> Bind:
    """``--bind`` / ``BIND``; :class:`EnvError` when it is neither form."""
    text = value.strip()
    if text.startswith("unix:") and len(text) > len("unix:"):
        return Bind(text)
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
        if ":" in host:
            sep = ""  # an IPv6 address goes in brackets
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise EnvError(f"BIND must be HOST:PORT (e.g. 127.0.0.1:8000) or unix:PATH, got {value!r}.")
    return Bind(text, host or "0.0.0.0", int(port))


@dataclass(frozen=True)
class ServeOptions:
    project_dir: Path
    bind: Bind
    web_concurrency: int = DEFAULT_WEB_CONCURRENCY
    workers: int = DEFAULT_WORKERS
    #: VK pushes the events to the web (Callback API): no long-poll bot.
    callback: bool = False
    migrate: bool = True


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _not_set(names: list[str]) -> str:
    return f"{_and(names)} {'is' if len(names) == 1 else 'are'} not set"


def check_config(settings: Any, *, callback: bool) -> None:
    """The operator's configuration for a real deployment; :class:`EnvError` with one line
    for the first problem (the settings module itself already refused bad values, and
    SECRET_KEY/ALLOWED_HOSTS when DEBUG is off).

    The environment's community is optional: without ``VK_GROUP_ID`` (and its tokens) the
    deployment serves the communities connected in the panel, none at first. With it, its
    tokens (and in callback mode its Callback API secret and code) must be there too."""
    check_env_community(settings, callback=callback)
    embedded = [
        name
        for name, value in (
            ("DATABASE_URL", env.get_str("DATABASE_URL")),
            ("REDIS_URL", settings.REDIS_URL),
        )
        if not value
    ]
    if embedded:
        raise EnvError(
            f"{_not_set(embedded)}: `make run` needs PostgreSQL and Redis (DATABASE_URL, "
            "REDIS_URL); the embedded SQLite and in-process Redis default is for `make demo`."
        )
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise EnvError(
            "DATABASE_URL points at SQLite: `make run` needs PostgreSQL (postgres://…); "
            "SQLite is the embedded default of `make demo`."
        )


def check_env_community(settings: Any, *, callback: bool) -> None:
    """The environment's community (``VK_GROUP_ID`` …) is either absent or complete."""
    tokens = (
        ("VK_GROUP_TOKEN", settings.VK_GROUP_TOKEN),
        ("VK_USER_TOKEN", settings.VK_USER_TOKEN),
    )
    callback_settings = ("VK_CALLBACK_SECRET", "VK_CONFIRMATION_CODE")
    if settings.VK_GROUP_ID is None:
        stray = [name for name, value in tokens if value]
        stray += [name for name in callback_settings if getattr(settings, name)]
        if stray:
            raise EnvError(
                f"{_and(stray)} {'is' if len(stray) == 1 else 'are'} set but VK_GROUP_ID is "
                "not: the environment's community needs its numeric id (or leave its variables "
                "unset and connect communities in the panel); see .env.example."
            )
        return
    missing = [name for name, value in tokens if not value]
    if missing:
        raise EnvError(
            f"{_not_set(missing)}: `make run` talks to VK as the environment's community "
            "(VK_GROUP_ID, its token VK_GROUP_TOKEN) and a community admin (VK_USER_TOKEN); "
            "set them, or unset VK_GROUP_ID and connect communities in the panel; see "
            ".env.example."
        )
    if callback:
        missing = [name for name in callback_settings if not getattr(settings, name)]
        if missing:
            raise EnvError(
                f"{_not_set(missing)}: the Callback API (--callback, RUN_CALLBACK) needs the "
                "secret key and the confirmation string from the community's Callback API "
                "settings."
            )


def check_services(settings: Any) -> None:
    """Whether PostgreSQL and Redis answer; :class:`EnvError` with one line when not."""
    import redis
    from django.db import connections

    db = settings.DATABASES["default"]
    where = f"{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    connection = connections["default"]
    # Only this check's connection (serve uses none later): a dead host fails in 10 s.
    connection.settings_dict.setdefault("OPTIONS", {}).setdefault("connect_timeout", 10)
    try:
        connection.ensure_connection()
    except Exception as exc:  # noqa: BLE001 - psycopg raises several types
        raise EnvError(
            f"DATABASE_URL: cannot connect to the database {db['NAME']!r} on {where}: "
            f"{error_line(exc)}"
        ) from None
    finally:
        connection.close()
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:
        given = client.connection_pool.connection_kwargs
        where = given.get("path") or f"{given.get('host', '?')}:{given.get('port', '?')}"
        raise EnvError(f"REDIS_URL: cannot reach Redis on {where}: {error_line(exc)}") from None
    finally:
        client.close()


def check_bind(bind: Bind) -> None:
    if bind.is_tcp and bind.port is not None and port_in_use(bind.host or "0.0.0.0", bind.port):
        raise EnvError(
            f"cannot listen on {bind.text}: the port is in use (another `make run`?); "
            "choose another with BIND or --bind."
        )


def _probe_host(settings: Any, bind: Bind) -> str:
    """A ``Host`` header the site answers to (the first of ALLOWED_HOSTS that names a host)."""
    for host in settings.ALLOWED_HOSTS:
        name = host.lstrip(".")
        if name and name != "*":
            return name
    return bind.probe_host


def _manage(options: ServeOptions, *args: str) -> list[str]:
    return [sys.executable, str(options.project_dir / "manage.py"), *args]


def steps(options: ServeOptions) -> list[tuple[str, list[str]]]:
    """The one-shot commands before the services, side by side: the migrations and the static
    files."""
    found = []
    if options.migrate:
        found.append(("migrate", _manage(options, "migrate", "--noinput", *SKIP_CHECKS)))
    found.append(
        ("static", _manage(options, "collectstatic", "--noinput", "--verbosity", "0", *SKIP_CHECKS))
    )
    return found


def services(options: ServeOptions, settings: Any) -> list[Service]:
    """The web, the workers and (in long-poll mode) the bot, in their order of start."""
    bind = options.bind
    host = _probe_host(settings, bind)

    def web_answers() -> bool:  # any answer but a server error: Django is up
        if bind.is_tcp:
            status = http_status(f"{bind.url}{READY_PATH}", host=host)
        else:
            status = unix_http_status(bind.text[len("unix:") :], READY_PATH, host=host)
        return status is not None and status < 500

    found = [
        Service(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                bind.text,
                "--workers",
                str(options.web_concurrency),
                "--graceful-timeout",
                "10",
                # The supervisor manages the processes: no control socket in $HOME.
                "--no-control-socket",
                "--access-logfile",
                "-",
                "--error-logfile",
                "-",
            ],
            probe=web_answers,
            ready_timeout=90,
            stop_timeout=15,
        ),
    ]
    for number in range(1, options.workers + 1):
        found.append(
            Service(
                "worker" if options.workers == 1 else f"worker{number}",
                _manage(options, "rqworker", "default", "vk", "--with-scheduler", *SKIP_CHECKS),
                ready_line=r"Listening on",
                ready_timeout=90,
                # A warm shutdown finishes the job at hand; a cut-off delivery is taken over
                # by another worker after OUTBOX_LEASE_SECONDS (a no-op at VK).
                stop_timeout=30,
                stop_group="workers",
            )
        )
    if not options.callback:
        found.append(
            Service(
                "bot",
                _manage(options, "runbot", *SKIP_CHECKS),
                # runbot's first line: one long poll, or every connected community.
                ready_line=r"runbot: (long poll|serving)",
                ready_timeout=90,
                stop_timeout=15,
            )
        )
    return found


def connected_count() -> int | None:
    """How many communities the deployment serves now (the environment's and those connected
    in the panel), or None when the database cannot tell (it is checked, then migrated, before
    this is asked)."""
    from django.db import DatabaseError

    from gameplay.selectors.communities import served_group_ids

    try:
        return len(served_group_ids())
    except DatabaseError:
        return None


def communities_line(settings: Any, served: int | None) -> str:
    """Which VK communities this run is for."""
    if settings.VK_GROUP_ID is not None:
        others = (served or 1) - 1
        more = f" and {others} more connected in the panel" if others > 0 else ""
        return f"VK community {settings.VK_GROUP_ID}{more}"
    if served:
        return f"{served} VK communit{'y' if served == 1 else 'ies'} connected in the panel"
    return "the VK communities connected in the panel (none yet)"


def banner(options: ServeOptions, settings: Any, served: int | None = None) -> list[str]:
    bind = options.bind
    web = bind.url if bind.is_tcp else bind.text
    workers = f"{options.workers} worker{'s' if options.workers > 1 else ''}"
    events = (
        f"VK pushes events to {CALLBACK_PATH} (Callback API)"
        if options.callback
        else "the bot reads the long poll"
    )
    lines = [
        f"running for {communities_line(settings, served)} via {settings.VK_API_URL}: "
        f"web on {web} ({options.web_concurrency} gunicorn workers, GM panel at /admin/), "
        f"{workers} (queues default and vk, deadline ticks), {events}.",
    ]
    if settings.VK_GROUP_ID is None and not served:
        lines.append(
            NO_COMMUNITY.format(
                connect=CONNECT_PATH, seconds=settings.VK_COMMUNITIES_REFRESH_SECONDS
            )
        )
    lines.append("Ctrl-C stops everything.")
    if settings.DEBUG:
        lines.append(
            "warning: DEBUG is on; set DEBUG=false (with SECRET_KEY and ALLOWED_HOSTS) "
            "before the site is public."
        )
    return lines


def run(options: ServeOptions, supervisor: Supervisor, settings: Any) -> int:
    """Start everything and supervise it until stopped; returns the exit status: 0 after
    Ctrl-C/SIGTERM, 2 after a configuration error (a process exited with 2), 1 when a step
    failed or a process kept failing, 130 when interrupted while starting."""
    try:
        try:
            supervisor.run_steps(steps(options))
            supervisor.start_group(services(options, settings))
        except Interrupted:
            supervisor.say("interrupted while starting")
            return 130
        except StartupError as exc:
            supervisor.say(f"cannot start: {exc}")
            return ENV_ERROR_EXIT_STATUS if exc.status == ENV_ERROR_EXIT_STATUS else 1
        for line in banner(options, settings, connected_count()):
            supervisor.say(line)
        status = supervisor.watch()
        supervisor.say("stopping…")
        return status
    finally:
        supervisor.stop_all()
        supervisor.say("stopped.")
