"""Django settings, all read from the environment (see ``.env.example``).

A bad value raises :class:`config.env.EnvError`; ``manage.py``, WSGI and ASGI turn that into
one line on stderr and exit status 2.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

from config import env, offline
from config.env import EnvError

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Core --------------------------------------------------------------------------------------

# Off unless asked for: the demo (demo/config.py), `make demo` and the tests (tests/settings.py)
# turn it on themselves.
DEBUG = env.get_bool("DEBUG", False)

# A command that serves nothing (config/offline.py: `manage.py replay`, `verify`, `migrate` …)
# runs with no configuration: without a SECRET_KEY it gets a throwaway one, without
# ALLOWED_HOSTS the local ones. Everything else needs both when DEBUG is off.
_OFFLINE = offline.offline()

_DEV_SECRET_KEY = "django-insecure-dev-only-key-do-not-use-in-production"
SECRET_KEY = env.get_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and not _OFFLINE:
        raise EnvError("SECRET_KEY must be set when DEBUG is false.")
    SECRET_KEY = _DEV_SECRET_KEY if DEBUG else secrets.token_urlsafe(50)

ALLOWED_HOSTS = env.get_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    if not DEBUG and not _OFFLINE:
        raise EnvError("ALLOWED_HOSTS must be set when DEBUG is false (comma-separated hosts).")
    ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]

CSRF_TRUSTED_ORIGINS = env.get_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # Django admin, with the GM's «Мои игры» as its start page (panel.site).
    "panel.site.PanelAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_rq",
    "axes",
    "gameplay",
    "panel",
    "vkbot",
    "demo",
    "ops",
]

MIDDLEWARE = [
    # First: a request that did not come through a trusted proxy loses its X-Forwarded-* headers
    # before anything reads them (config.proxies, TRUSTED_PROXIES).
    "config.proxies.ForwardedHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Scripts and styles from the site only (config/csp.py).
    "config.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ----------------------------------------------------------------------------------

# DATA_DIR holds the embedded default's SQLite file (the project directory when unset).
DATA_DIR = Path(env.get_str("DATA_DIR", str(BASE_DIR)))
DATABASES = {"default": env.get_database("DATABASE_URL", str(DATA_DIR / "db.sqlite3"))}

# --- Redis and django-rq -----------------------------------------------------------------------

REDIS_URL = env.get_redis_url("REDIS_URL")
RQ_QUEUE_NAMES = ("default", "vk")
RQ_DEFAULT_TIMEOUT = 300

CACHES: dict[str, dict[str, object]] = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}
# Enqueue a job only once the surrounding transaction commits (django-rq's default, stated).
RQ: dict[str, object] = {"COMMIT_MODE": "on_db_commit"}
# django-rq's own admin pages (/admin/django_rq/…) let any staff user in, GMs included: off.
# Superusers use the dashboard at /django-rq/ (config/urls.py).
RQ_SHOW_ADMIN_LINK = False
# rq's worker that also keeps the deadline tick scheduled (gameplay/worker.py, gameplay/jobs.py).
RQ["WORKER_CLASS"] = "gameplay.worker.Worker"
# Seconds between two deadline ticks: how late a phase may close after its deadline.
DEADLINE_TICK_SECONDS = env.get_int("DEADLINE_TICK_SECONDS", 30, minimum=1)
# A player's «голоса» posts the vote count in a topic at most once every this many minutes
# (the GM's button and the automatic counts are not held back, but they count).
VOTE_COUNT_EVERY_MINUTES = env.get_int("VOTE_COUNT_EVERY_MINUTES", 10, minimum=0)
# Sign-ups in a topic are acknowledged in one running list, posted at most once every this many
# seconds per topic: the sign-ups meanwhile join the list waiting to go out.
SIGNUP_LIST_SECONDS = env.get_int("SIGNUP_LIST_SECONDS", 60, minimum=0)

if REDIS_URL:
    RQ_QUEUES = {
        name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": RQ_DEFAULT_TIMEOUT} for name in RQ_QUEUE_NAMES
    }
else:
    # Embedded default: an in-process fakeredis server reached through a cache alias, because
    # django-rq takes a queue's client from a cache named by USE_REDIS_CACHE (see the module).
    CACHES["rq"] = {"BACKEND": "config.fakeredis_cache.FakeRedisCache"}
    RQ_QUEUES = {
        name: {"USE_REDIS_CACHE": "rq", "DEFAULT_TIMEOUT": RQ_DEFAULT_TIMEOUT}
        for name in RQ_QUEUE_NAMES
    }
    # A forking worker would run each job against the child's copy of the in-memory server.
    RQ["WORKER_CLASS"] = "gameplay.worker.SimpleWorker"

#: The address players reach this deployment at (https://mafia.example.org): the end-of-game
#: post links the players' page there (PUBLIC_URL/players/, docs/players.md).
PUBLIC_URL = env.get_http_url("PUBLIC_URL")

# --- VK ----------------------------------------------------------------------------------------

VK_API_URL = env.get_str("VK_API_URL", "https://api.vk.ru/method/")
VK_API_VERSION = env.get_str("VK_API_VERSION", "5.199")
VK_GROUP_ID = env.get_int("VK_GROUP_ID", None, minimum=1)
VK_GROUP_TOKEN = env.get_str("VK_GROUP_TOKEN")
VK_USER_TOKEN = env.get_str("VK_USER_TOKEN")
VK_CALLBACK_SECRET = env.get_str("VK_CALLBACK_SECRET")
VK_CONFIRMATION_CODE = env.get_str("VK_CONFIRMATION_CODE")
#: The deployment takes VK's events through the Callback API (``RUN_CALLBACK``, as
#: ``manage.py serve`` reads it) rather than runbot's long poll: connecting a community from the
#: panel then registers PUBLIC_URL/vk/callback/ as its Callback server (``panel.connect``).
VK_CALLBACK_MODE = env.get_bool("RUN_CALLBACK", False)
#: Each web process applies the Callback API's events it records, one process at a time
#: (``vkbot.inbox``: a thread of the process). Off: the events wait in the inbox for the worker's
#: deadline tick (the tests turn it off and run the applier themselves).
CALLBACK_APPLY_IN_WEB = env.get_bool("CALLBACK_APPLY_IN_WEB", True)
#: What the deadline tick runs to apply the Callback events no web process applied (a dotted
#: path: gameplay does not import the bot).
CALLBACK_INBOX_SWEEP = "vkbot.inbox.sweep"
#: The most events of one community that wait in the Callback inbox: beyond it the endpoint
#: answers 503 and VK posts them again later (a flood cannot grow the inbox without bound).
CALLBACK_INBOX_MAX_PER_COMMUNITY = env.get_int("CALLBACK_INBOX_MAX_PER_COMMUNITY", 2000, minimum=1)
#: The id of a standalone VK app whose implicit flow gives a community admin's user token
#: (the panel's «Подключить сообщество» links to it for a pasted key, the fallback to VK ID).
VK_APP_ID = env.get_int("VK_APP_ID", None, minimum=1)
#: VK ID (OAuth 2.1 with PKCE): the browser signs in at ``{VK_ID_URL}authorize``, the server
#: exchanges the code and renews the admin's user token at ``{VK_ID_URL}oauth2/auth``
#: (``gameplay.vkid``; the tests and ``make demo`` point it at the local VK's ``/vkid/``).
VK_ID_URL = env.get_http_url("VK_ID_URL", "https://id.vk.com/").rstrip("/") + "/"
#: The id of the VK ID app (id.vk.com → «Мои приложения») a community admin signs in through
#: on «Подключить сообщество»; its trusted redirect URL is PUBLIC_URL/panel/communities/vkid/.
VK_ID_APP_ID = env.get_int("VK_ID_APP_ID", None, minimum=1)
#: The environment's community signed in with VK ID: the refresh token and the device id VK ID
#: issued with it. Used once: after the first renewal the pair lives in the database.
VK_USER_REFRESH_TOKEN, VK_USER_DEVICE_ID = env.get_vk_user_renewal(
    group_id=VK_GROUP_ID, app_id=VK_ID_APP_ID
)
#: A renewable user token is renewed this many seconds before it expires (at most a quarter of
#: its lifetime before: VK ID's keys live an hour).
VK_USER_TOKEN_RENEW_SECONDS = env.get_int("VK_USER_TOKEN_RENEW_SECONDS", 300, minimum=1)
#: How often runbot looks for communities connected or disconnected in the panel.
VK_COMMUNITIES_REFRESH_SECONDS = env.get_int("VK_COMMUNITIES_REFRESH_SECONDS", 5, minimum=1)
#: Several runbots share the communities by lease (vkbot.supervisor): each renews its leases
#: every RUNBOT_LEASE_RENEW_SECONDS; a lease not renewed for RUNBOT_LEASE_TTL_SECONDS (a dead
#: runbot's) is taken over by another.
RUNBOT_LEASE_RENEW_SECONDS, RUNBOT_LEASE_TTL_SECONDS = env.get_runbot_lease()

# --- Secrets at rest (gameplay.models.secrets) ---------------------------------------------------

#: Fernet keys for the communities' tokens, the encrypting one first (rotation:
#: docs/operations.md, "Tokens at rest").
TOKEN_ENCRYPTION_KEYS = env.get_fernet_keys("TOKEN_ENCRYPTION_KEYS")
#: The salt of the fallback derivation from SECRET_KEY (without TOKEN_ENCRYPTION_KEYS).
SALT_KEY = "vkmafia.community-secrets"

# --- Outbox delivery (vkbot.delivery) ----------------------------------------------------------

# After a commit that queued Outbox rows, enqueue the drain job on the "vk" queue (at most one
# waiting at a time). Off: rows stay pending until a worker or `manage.py deliver` drains them.
OUTBOX_DELIVERY_ENABLED = env.get_bool("OUTBOX_DELIVERY_ENABLED", True)
OUTBOX_DELIVERY_QUEUE = "vk"
OUTBOX_DELIVERY_JOB = "vkbot.delivery.jobs.drain_outbox"
# Requests per second per token, shared by every worker through Redis (VK.md: 20 and 3).
VK_GROUP_RPS = env.get_int("VK_GROUP_RPS", 20, minimum=1)
VK_USER_RPS = env.get_int("VK_USER_RPS", 3, minimum=1)
# The limiter's window per token: VK's 1 s plus a margin for the jitter between the moment a
# worker asks and the moment VK counts (a loaded host delays either by a few hundred ms).
VK_RATE_WINDOW_SECONDS = {"group": 1.2, "user": 1.5}
VK_HTTP_TIMEOUT_SECONDS = env.get_int("VK_HTTP_TIMEOUT_SECONDS", 20, minimum=1)
# How long a worker holds the rows it is sending; an expired lease lets another worker re-send
# them (a no-op at VK: same random_id / guid).
OUTBOX_LEASE_SECONDS = env.get_int("OUTBOX_LEASE_SECONDS", 60, minimum=2)
# Retries on VK errors 6/9/10 and network errors: exponential backoff from the base, capped,
# with jitter; after OUTBOX_MAX_ATTEMPTS the row fails and the GM is told.
OUTBOX_RETRY_BASE_MS = env.get_int("OUTBOX_RETRY_BASE_MS", 1000, minimum=1)
OUTBOX_RETRY_MAX_SECONDS = env.get_int("OUTBOX_RETRY_MAX_SECONDS", 600, minimum=1)
OUTBOX_MAX_ATTEMPTS = env.get_int("OUTBOX_MAX_ATTEMPTS", 20, minimum=1)
# The longest a community's replies are held while its Callback API events are still being
# applied, so that a burst's replies share execute requests (vkbot/delivery/coalesce.py);
# a community with nothing waiting in the Callback inbox is never held. 0: never hold.
OUTBOX_COALESCE_SECONDS = env.get_seconds("OUTBOX_COALESCE_SECONDS", 0.25, minimum=0, maximum=2)

# --- Auth --------------------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "admin:login"
# Where a login lands without a safe ``next`` (one of another site is dropped): «Мои игры».
LOGIN_REDIRECT_URL = "admin:index"
# django-axes throttles the admin login: AXES_FAILURE_LIMIT wrong passwords for one user name
# from one address lock that pair out for AXES_COOLOFF_MINUTES (failures are database rows, so
# every web process shares them; SQLite and PostgreSQL alike). The GM reads a Russian answer
# (panel.access.login_locked_out).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.get_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env.get_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "panel.access.login_locked_out"
# The lockout itself is logged by that callable (one WARNING line), not axes' chatter.
AXES_VERBOSE = False
# Axes' own admin section (its attempts and logs) is English and not ours to translate: it is
# left out of the admin for everybody. The throttling works without it; an operator reads the
# lockout in the log and lifts it with ``manage.py axes_reset`` (or axes_reset_username).
AXES_ENABLE_ADMIN = False

# --- HTTPS (with DEBUG off) --------------------------------------------------------------------

# The site runs behind a TLS-terminating proxy. With DEBUG off every one of these is on unless
# the environment says otherwise; with DEBUG on (the demo, the tests) they are off.
_PRODUCTION = not DEBUG
SESSION_COOKIE_SECURE = env.get_bool("SESSION_COOKIE_SECURE", _PRODUCTION)
CSRF_COOKIE_SECURE = env.get_bool("CSRF_COOKIE_SECURE", _PRODUCTION)
SECURE_SSL_REDIRECT = env.get_bool("SECURE_SSL_REDIRECT", _PRODUCTION)
SECURE_HSTS_SECONDS = env.get_int(
    "SECURE_HSTS_SECONDS", 365 * 24 * 3600 if _PRODUCTION else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.get_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _PRODUCTION)
SECURE_HSTS_PRELOAD = env.get_bool("SECURE_HSTS_PRELOAD", _PRODUCTION)
# The header the proxy sets to "https" on a request that came over TLS (the proxy must set or
# strip it on every request). "off": requests are never taken as HTTPS from a header.
SECURE_PROXY_SSL_HEADER = env.get_proxy_ssl_header(
    "SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto" if _PRODUCTION else "off"
)
# The addresses (IPs, CIDR networks) of the proxies in front of the web: only a request from
# one of them keeps its X-Forwarded-* headers, and the client's address, which the login
# throttling keys on, is read from X-Forwarded-For back to the first address that is no trusted
# proxy (config.proxies). Default: loopback with DEBUG off (a TLS proxy on the same host), none
# with DEBUG on; "none" trusts no one (REMOTE_ADDR is the client).
TRUSTED_PROXIES = env.get_networks(
    "TRUSTED_PROXIES", ("127.0.0.1/32", "::1/128") if _PRODUCTION else ()
)
AXES_CLIENT_IP_CALLABLE = "config.proxies.client_address"

# --- Internationalisation ----------------------------------------------------------------------

LANGUAGE_CODE = env.get_str("LANGUAGE_CODE", "ru")
TIME_ZONE = env.get_time_zone("TIME_ZONE", "Europe/Moscow")
USE_I18N = True
USE_TZ = True

# --- Static files ------------------------------------------------------------------------------

STATIC_URL = "static/"
# Where collectstatic puts the files the web serves (whitenoise). Default: staticfiles/.
STATIC_ROOT = Path(env.get_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Production (DEBUG false) serves hashed, compressed files collected by collectstatic.
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# --- Logging -----------------------------------------------------------------------------------

LOG_LEVEL = env.get_choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "plain",
        },
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
}
