"""Exponential back-off with jitter, for every loop that retries (the long poll, the runbot
supervisor, the Callback applier). Its own module so that a process importing it (the web's
Callback applier) loads nothing of VK's client."""

from __future__ import annotations

import random


class Backoff:
    """Exponential back-off with jitter: ``initial``, ×2 each time, at most ``maximum``."""

    def __init__(self, initial: float = 1.0, maximum: float = 60.0) -> None:
        self.initial = initial
        self.maximum = maximum
        self._next = initial

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.maximum)
        return delay * random.uniform(0.8, 1.2)

    def reset(self) -> None:
        self._next = self.initial
