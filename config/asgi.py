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
