"""Running ``manage.py runbot`` in a test while someone acts in another thread."""

from __future__ import annotations

import io
import os
import signal
import threading
from collections.abc import Callable

from django.core.management import call_command
from django.db import connections


def run_runbot(user: Callable[[io.StringIO], None]) -> str:
    """``manage.py runbot --wait 1`` in this thread while ``user`` (given runbot's stdout) acts
    in another and then sends SIGTERM; returns runbot's stdout. Whatever ``user`` raises fails
    the test."""
    out = io.StringIO()
    problems: list[str] = []

    def act() -> None:
        try:
            user(out)
        except BaseException as error:  # noqa: BLE001 - reported below
            problems.append(f"{type(error).__name__}: {error}")
        finally:
            connections.close_all()  # this thread's
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=act)
    helper.start()
    call_command("runbot", "--wait", "1", stdout=out)
    helper.join(60)
    assert problems == [], problems
    assert not helper.is_alive(), "the acting thread did not finish"
    return out.getvalue()
