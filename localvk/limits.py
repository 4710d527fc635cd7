"""Request-rate limits: VK's per-token requests per second and per-peer flood control."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable

Clock = Callable[[], float]


class SlidingWindowLimiter:
    """At most ``limit`` accepted events in any ``window`` seconds (a sliding window)."""

    def __init__(self, limit: int, window: float = 1.0, clock: Clock = time.monotonic) -> None:
        if limit < 1:
            raise ValueError("limit must be positive")
        self.limit = limit
        self.window = window
        self._clock = clock
        self._accepted: deque[float] = deque()

    def try_acquire(self, now: float | None = None) -> bool:
        """Count one event if the window has room; False (and nothing counted) otherwise."""
        moment = self._clock() if now is None else now
        while self._accepted and moment - self._accepted[0] >= self.window:
            self._accepted.popleft()
        if len(self._accepted) >= self.limit:
            return False
        self._accepted.append(moment)
        return True

    def reset(self) -> None:
        self._accepted.clear()


class TokenRateLimits:
    """One :class:`SlidingWindowLimiter` per access token, sized by the token's kind."""

    def __init__(self, per_kind: dict[str, int], clock: Clock = time.monotonic) -> None:
        self.per_kind = dict(per_kind)
        self._clock = clock
        self._limiters: dict[str, SlidingWindowLimiter] = {}

    def try_acquire(self, token: str, kind: str, now: float | None = None) -> bool:
        limit = self.per_kind.get(kind)
        if limit is None:
            return True
        limiter = self._limiters.get(token)
        if limiter is None:
            limiter = SlidingWindowLimiter(limit, clock=self._clock)
            self._limiters[token] = limiter
        return limiter.try_acquire(now)

    def reset(self) -> None:
        self._limiters.clear()


class FloodControl:
    """VK's error 9: too many messages from one sender to one peer within an hour."""

    def __init__(self, per_hour: int, clock: Clock = time.monotonic) -> None:
        self.per_hour = per_hour
        self._clock = clock
        self._sent: dict[tuple[int, int], deque[float]] = {}

    def allows(self, sender: int, peer_id: int) -> bool:
        """Whether one more message fits; does not count it (see :meth:`count`)."""
        history = self._history(sender, peer_id)
        return len(history) < self.per_hour

    def count(self, sender: int, peer_id: int) -> None:
        self._history(sender, peer_id).append(self._clock())

    def _history(self, sender: int, peer_id: int) -> deque[float]:
        history = self._sent.setdefault((sender, peer_id), deque())
        now = self._clock()
        while history and now - history[0] >= 3600.0:
            history.popleft()
        return history

    def reset(self) -> None:
        self._sent.clear()


def max_in_window(times: Iterable[float], window: float = 1.0) -> int:
    """The largest number of the given moments that fall in one half-open ``window``."""
    ordered = sorted(times)
    best = 0
    start = 0
    for end, moment in enumerate(ordered):
        while moment - ordered[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best
