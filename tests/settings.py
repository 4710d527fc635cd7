"""The tests' settings: the project's own, with DEBUG on unless the environment says otherwise.

``DEBUG`` defaults to off (config/settings.py); the tests, like the demo, turn it on themselves.
It is set in ``os.environ`` so that every process a test starts (workers, the bot, the demo)
inherits it; those processes read ``config.settings``, the module the environment names again
once Django has taken this one.
"""

from __future__ import annotations

import os

os.environ.setdefault("DEBUG", "true")

from config.settings import *  # noqa: E402, F403

os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
