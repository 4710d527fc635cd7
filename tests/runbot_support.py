"""Running ``manage.py runbot`` in a test while someone acts in another thread, or in a thread
of its own (:class:`RunbotThread`)."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import connections

from vkbot.management.commands import runbot
from vkbot.supervisor import Supervisor


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


class _Runbot(runbot.Command):
    """runbot's command, its loop and supervisor handed to the :class:`RunbotThread`."""

    def __init__(self, thread: RunbotThread, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.thread = thread

    async def serve(self, supervisor: Supervisor) -> None:
        self.thread.loop, self.thread.supervisor = asyncio.get_running_loop(), supervisor
        self.thread.started.set()
        try:
            await super().serve(supervisor)
        finally:
            # asgiref's database thread (the long poll's sync_to_async) closes its own.
            await sync_to_async(connections.close_all, thread_sensitive=True)()


class RunbotThread:
    """``manage.py runbot`` (the command itself: ``call_command``) in a thread of this process,
    for a test whose main thread is busy (a browser's event loop): the same handle(), serve()
    and Supervisor as the process, without the cost of another Python starting Django and
    importing vkbottle. Signals reach only the main thread, so :meth:`stop` asks the loop to
    stop as runbot's SIGTERM handler does. ``output()`` is runbot's stdout so far."""

    def __init__(self, *args: str) -> None:
        self._args = args
        self._out = io.StringIO()
        self.started = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.supervisor: Supervisor | None = None
        self._error: BaseException | None = None
        self._signals = runbot.STOP_SIGNALS
        self._thread = threading.Thread(target=self._run, name="runbot", daemon=True)

    def output(self) -> str:
        return self._out.getvalue()

    def _run(self) -> None:
        try:
            call_command(_Runbot(self), *self._args, stdout=self._out)
        except BaseException as error:  # noqa: BLE001 - raised by stop()
            self._error = error
        finally:
            self.started.set()
            connections.close_all()  # this thread's (community_sync_env)

    def __enter__(self) -> RunbotThread:
        # serve() sets no signal handler off the main thread: stop() does their work. The
        # module's constant is back as it was once the thread has ended or failed to start.
        setattr(runbot, "STOP_SIGNALS", ())  # noqa: B010 - a module constant, for a while
        try:
            self._thread.start()
            if not self.started.wait(60):
                raise AssertionError(f"runbot did not start in 60 s\n{self.output()}")
            if self._error is not None or self.loop is None:
                raise AssertionError(f"runbot failed to start: {self._error!r}\n{self.output()}")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        try:
            loop, supervisor = self.loop, self.supervisor
            if loop is not None and supervisor is not None and self._thread.is_alive():
                try:
                    loop.call_soon_threadsafe(supervisor.request_stop)
                except RuntimeError:  # the loop has closed: the thread is ending on its own
                    pass
            if self._thread.ident is not None:  # started
                self._thread.join(30)
        finally:
            setattr(runbot, "STOP_SIGNALS", self._signals)  # noqa: B010
        assert not self._thread.is_alive(), f"runbot did not stop in 30 s\n{self.output()}"
        if self._error is not None:
            raise AssertionError(f"runbot failed: {self._error!r}\n{self.output()}")

    def __exit__(self, *exc: object) -> None:
        self.stop()
