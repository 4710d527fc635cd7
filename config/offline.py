"""Whether this process runs a command that serves nothing, said by its entry point.

``manage.py replay tests/scenarios/…``, ``verify``, ``migrate`` and the like serve no request
and sign nothing (no session, no CSRF token, no signed value outlives them), so they run with no
configuration at all, as on a fresh clone, though DEBUG is off by default: ``config/settings.py``
gives them a throwaway SECRET_KEY and the local ALLOWED_HOSTS. ``manage.py`` declares the command
it runs (:func:`declare`) before Django reads the settings; every other entry point (WSGI, ASGI,
the tests) declares none, and its settings need SECRET_KEY and ALLOWED_HOSTS when DEBUG is off.
"""

from __future__ import annotations

#: The management commands that run with no configuration.
COMMANDS = frozenset({"replay", "verify", "migrate", "showmigrations", "makemigrations"})

_command = ""


def declare(command: str) -> None:
    """The management command this process runs; called before the settings are read."""
    global _command
    _command = command


def offline() -> bool:
    """Whether the command declared serves nothing (:data:`COMMANDS`)."""
    return _command in COMMANDS
