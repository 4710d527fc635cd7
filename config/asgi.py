"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

from config.env import EnvError, exit_on_env_error

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

try:
    application: ASGIHandler = get_asgi_application()
except EnvError as error:
    exit_on_env_error(error)

# The environment's community is recorded once per web process (gameplay.startup).
from gameplay.startup import sync_env_community  # noqa: E402 - needs the apps loaded above

sync_env_community("web")
