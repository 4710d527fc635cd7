"""Typed getters for settings read from the environment.

Every getter raises :class:`EnvError` with one readable English sentence when a variable is
set to something unusable, so that ``manage.py``, WSGI and ASGI can print that sentence and
exit instead of showing a traceback.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import re
import sys
import zoneinfo
from collections.abc import Callable, Mapping
from typing import NoReturn, TypeVar

T = TypeVar("T")

ENV_ERROR_EXIT_STATUS = 2

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class EnvError(Exception):
    """An environment variable is set to a value the project cannot use."""


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    """Return the variable's value, or None when it is unset or empty."""
    value = (os.environ if environ is None else environ).get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def get_str(name: str, default: str = "", *, environ: Mapping[str, str] | None = None) -> str:
    """A string; ``default`` when unset or empty."""
    value = _raw(name, environ)
    return default if value is None else value


def get_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    """A boolean written as 1/0, true/false, yes/no or on/off (any case)."""
    value = _raw(name, environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise EnvError(f"{name} must be a boolean (true/false, 1/0, yes/no, on/off), got {value!r}.")


def get_http_url(name: str, default: str = "", *, environ: Mapping[str, str] | None = None) -> str:
    """An http(s) address such as ``https://mafia.example.org``; ``default`` when unset."""
    value = _raw(name, environ)
    if value is None:
        return default
    if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
        raise EnvError(f"{name} must be an http:// or https:// address, got {value!r}.")
    return value


def get_int(
    name: str,
    default: int | None = None,
    *,
    minimum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int | None:
    """An integer (optionally at least ``minimum``); ``default`` when unset or empty."""
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise EnvError(f"{name} must be an integer, got {value!r}.") from None
    if minimum is not None and number < minimum:
        raise EnvError(f"{name} must be at least {minimum}, got {number}.")
    return number


def get_seconds(
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float,
    environ: Mapping[str, str] | None = None,
) -> float:
    """A duration in seconds, decimals allowed (``2``, ``0.5``), within ``minimum`` and
    ``maximum``; ``default`` when unset or empty."""
    value = _raw(name, environ)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise EnvError(f"{name} must be a number of seconds, got {value!r}.") from None
    if not minimum <= number <= maximum:  # (NaN fails both)
        raise EnvError(f"{name} must be between {minimum:g} and {maximum:g} seconds, got {value}.")
    return number


def get_runbot_lease(*, environ: Mapping[str, str] | None = None) -> tuple[float, float]:
    """``RUNBOT_LEASE_RENEW_SECONDS`` and ``RUNBOT_LEASE_TTL_SECONDS``: how often each runbot
    renews its communities' leases, and how long a lease lasts unrenewed (how soon a dead
    runbot's communities move to another). The lease must outlive two renewals at least, so
    that one late renewal does not hand a community over."""
    renew = get_seconds("RUNBOT_LEASE_RENEW_SECONDS", 2.0, minimum=0.1, maximum=60.0,
                        environ=environ)  # fmt: skip
    ttl = get_seconds("RUNBOT_LEASE_TTL_SECONDS", 6.0, minimum=0.3, maximum=600.0,
                      environ=environ)  # fmt: skip
    if ttl < 2 * renew:
        raise EnvError(
            f"RUNBOT_LEASE_TTL_SECONDS ({ttl:g}) must be at least twice "
            f"RUNBOT_LEASE_RENEW_SECONDS ({renew:g}): a lease must outlive a late renewal."
        )
    return renew, ttl


def get_list(
    name: str, default: list[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> list[str]:
    """A comma-separated list; blank items are dropped."""
    value = _raw(name, environ)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def get_fernet_keys(name: str, *, environ: Mapping[str, str] | None = None) -> list[str]:
    """A comma-separated list of Fernet keys (32 url-safe base64-encoded bytes each)."""
    keys = get_list(name, environ=environ)
    for position, key in enumerate(keys, 1):
        try:
            raw = base64.urlsafe_b64decode(key.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            raw = b""
        if len(raw) != 32:
            raise EnvError(
                f"{name}: key {position} is not a Fernet key (44 characters of url-safe base64; "
                'make one with python -c "from cryptography.fernet import Fernet; '
                'print(Fernet.generate_key().decode())").'
            )
    return keys


def get_choice(
    name: str,
    choices: tuple[str, ...],
    default: str,
    *,
    transform: Callable[[str], str] = str.upper,
    environ: Mapping[str, str] | None = None,
) -> str:
    """One of ``choices`` (compared after ``transform``)."""
    value = _raw(name, environ)
    if value is None:
        return default
    normalised = transform(value)
    if normalised not in choices:
        raise EnvError(f"{name} must be one of {', '.join(choices)}, got {value!r}.")
    return normalised


_HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,100}")


def get_proxy_ssl_header(
    name: str, default: str, *, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """Django's ``SECURE_PROXY_SSL_HEADER`` from a header name (``X-Forwarded-Proto``) whose
    value ``https`` marks a request that reached the proxy over TLS; ``off`` (or ``none``):
    no such header."""
    value = _raw(name, environ) or default
    if value.lower() in {"off", "none"}:
        return None
    if not _HEADER_NAME.fullmatch(value):
        raise EnvError(
            f"{name} must be an HTTP header name such as X-Forwarded-Proto, or off, got {value!r}."
        )
    return "HTTP_" + value.upper().replace("-", "_"), "https"


def get_networks(
    name: str, default: tuple[str, ...] = (), *, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Comma-separated IP addresses and networks (``127.0.0.1``, ``172.16.0.0/12``, ``::1``),
    each returned as a network (``127.0.0.1/32``); ``none``: no address at all; ``default``
    when unset. A network of every address (``0.0.0.0/0``, ``::/0``) is refused: these are the
    addresses whose word on another's address is believed."""
    value = _raw(name, environ)
    if value is None:
        return default
    if value.lower() in {"none", "off"}:
        return ()
    networks: list[str] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        try:
            network = ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise EnvError(
                f"{name} must list IP addresses or networks separated by commas (such as "
                f"127.0.0.1,::1 or 172.16.0.0/12), or none; {item!r} is neither."
            ) from None
        if network.prefixlen == 0:
            raise EnvError(
                f"{name} must not contain {item!r}: it trusts every address on the Internet to "
                "say who the client is; list only your proxy's addresses."
            )
        networks.append(str(network))
    return tuple(networks)


SQLITE_OPTIONS: dict[str, object] = {
    # Several processes (web, bot, worker) write to one file in the embedded default: WAL lets
    # readers go on during a write, IMMEDIATE takes the write lock at BEGIN so that concurrent
    # writers wait (up to ``timeout`` seconds) instead of failing with "database is locked".
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}

_POSTGRES_SCHEMES = frozenset({"postgres", "postgresql", "pgsql"})


def get_database(
    name: str, default_sqlite_path: str, *, environ: Mapping[str, str] | None = None
) -> dict[str, object]:
    """A Django ``DATABASES`` entry from a ``sqlite://`` or ``postgres://`` URL.

    Unset means an SQLite file at ``default_sqlite_path``. SQLite gets :data:`SQLITE_OPTIONS`;
    PostgreSQL (psycopg 3) gets persistent connections with health checks.
    """
    import dj_database_url

    value = _raw(name, environ)
    config: dict[str, object]
    if value is None:
        scheme = "sqlite"
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": default_sqlite_path}
    else:
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if scheme != "sqlite" and scheme not in _POSTGRES_SCHEMES:
            shown = f"scheme {scheme!r}" if scheme else "no scheme"
            raise EnvError(f"{name} must be a sqlite:// or postgres:// URL, got {shown}.")
        try:
            config = dict(dj_database_url.parse(value))
        except Exception:  # dj-database-url raises several types for a malformed URL
            raise EnvError(f"{name} is not a valid database URL.") from None
    if scheme == "sqlite":
        config["ENGINE"] = "django.db.backends.sqlite3"
        config["OPTIONS"] = {**SQLITE_OPTIONS, **dict(config.get("OPTIONS") or {})}
        config["CONN_MAX_AGE"] = 0
    else:
        config["ENGINE"] = "django.db.backends.postgresql"
        config["CONN_MAX_AGE"] = 60
        config["CONN_HEALTH_CHECKS"] = True
        if not config.get("NAME"):
            raise EnvError(f"{name} must name a database, e.g. postgres://user@host:5432/mafia.")
    config["ATOMIC_REQUESTS"] = False
    return config


def get_redis_url(name: str, *, environ: Mapping[str, str] | None = None) -> str | None:
    """A ``redis://``, ``rediss://`` or ``unix://`` URL, or None when unset."""
    value = _raw(name, environ)
    if value is None:
        return None
    scheme = value.split("://", 1)[0].lower() if "://" in value else ""
    if scheme not in ("redis", "rediss", "unix"):
        shown = f"scheme {scheme!r}" if scheme else "no scheme"
        raise EnvError(f"{name} must be a redis://, rediss:// or unix:// URL, got {shown}.")
    return value


def get_time_zone(name: str, default: str, *, environ: Mapping[str, str] | None = None) -> str:
    """An IANA time zone name such as ``Europe/Moscow``."""
    value = get_str(name, default, environ=environ)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder (America)
        raise EnvError(
            f"{name} must be an IANA time zone such as Europe/Moscow, got {value!r}."
        ) from None
    return value


def get_vk_user_renewal(
    *, group_id: int | None, app_id: int | None, environ: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """``VK_USER_REFRESH_TOKEN`` and ``VK_USER_DEVICE_ID``: the environment's community's admin
    signed in with VK ID, so its user token renews itself. Both or neither, and only with the
    community (``VK_GROUP_ID``) and the VK ID app they were issued through (``VK_ID_APP_ID``)."""
    refresh = get_str("VK_USER_REFRESH_TOKEN", environ=environ)
    device = get_str("VK_USER_DEVICE_ID", environ=environ)
    if not refresh and not device:
        return "", ""
    if not refresh:
        raise EnvError(
            "VK_USER_DEVICE_ID is set without VK_USER_REFRESH_TOKEN; set both (the device id "
            "VK ID returned with the refresh token) or neither."
        )
    if not device:
        raise EnvError(
            "VK_USER_REFRESH_TOKEN needs VK_USER_DEVICE_ID: the device_id VK ID returned with "
            "it (a refresh token is renewed only together with its device id)."
        )
    if app_id is None:
        raise EnvError(
            "VK_USER_REFRESH_TOKEN needs VK_ID_APP_ID: the id of the VK ID app the token was "
            "issued through (VK ID renews it only for that app)."
        )
    if group_id is None:
        raise EnvError(
            "VK_USER_REFRESH_TOKEN is for the environment's community: set VK_GROUP_ID too, "
            "or connect the community in the panel with «Войти через VK ID» instead."
        )
    return refresh, device


def exit_on_env_error(error: EnvError) -> NoReturn:
    """Print the error as one line on stderr and exit with status 2."""
    print(f"Configuration error: {error}", file=sys.stderr)
    raise SystemExit(ENV_ERROR_EXIT_STATUS)
