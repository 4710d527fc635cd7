"""Waiting in async tests: the asyncio counterpart of :func:`bench.procs.wait_for` (a condition
polled until it holds, with a deadline), so that no test sleeps on the assumption that
something has happened by then."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any


async def wait_until(
    condition: Callable[[], Any],
    *,
    timeout: float = 10.0,
    what: str = "the condition",
    interval: float = 0.01,
) -> Any:
    """Poll ``condition`` (a plain function, or one returning an awaitable) until its value is
    true; returns that value. Raises :class:`AssertionError` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {what} (last value {value!r})"
            )
        await asyncio.sleep(interval)
