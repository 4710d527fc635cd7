"""Fault injection for API calls: transient VK errors, slow answers, dropped connections and
HTML 502 pages; for the long poll: 502 pages; and for the Callback API: events delivered twice.

Every API request draws the same number of values from one seeded RNG (one more while 502
pages are injected), so a test that makes the same requests in the same order sees the same
faults. Long polls and Callback events draw from RNGs of their own of the same seed, so polling
and pushing events do not change which API calls fail.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .errors import ERROR_TEXTS

DropMode = Literal["before", "after"]


@dataclass(frozen=True)
class FaultConfig:
    """What to inject.

    ``error_rates`` maps a VK error code (6, 9, 10, …) to the share of requests answered with it.
    ``delay`` seconds are added to a ``delay_rate`` share of requests. ``drop_rate`` is the
    share of connections closed before the call runs (nothing happens on the server);
    ``drop_after_rate`` the share closed after the call ran (its effects stay, the answer is
    lost: what exactly-once delivery must survive). ``bad_gateway_rate`` is the share of
    requests answered with an HTML page and HTTP 502, as VK's front answers while VK is down
    (nothing happens on the server): API calls, and long polls (``a_check``) unless
    ``methods`` leaves ``a_check`` out. ``inner_error_rates`` maps an error code to the share of
    API calls inside an ``execute`` that fail with it on their own (the call answers ``false``
    and the program goes on, as VK does). ``methods`` restricts all of it to some methods (None:
    every method; ``execute`` and the methods called inside it are told apart).
    ``callback_duplicate_rate`` is the share of events the Callback API pusher
    (:mod:`localvk.callback`) sends twice, to different URLs.
    """

    error_rates: Mapping[int, float] = field(default_factory=dict)
    inner_error_rates: Mapping[int, float] = field(default_factory=dict)
    delay: float = 0.0
    delay_rate: float = 1.0
    drop_rate: float = 0.0
    drop_after_rate: float = 0.0
    bad_gateway_rate: float = 0.0
    methods: frozenset[str] | None = None
    callback_duplicate_rate: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for code, rate in self.error_rates.items():
            if code not in ERROR_TEXTS:
                raise ValueError(f"unknown VK error code {code}")
            _check_rate(f"error_rates[{code}]", rate)
        if sum(self.error_rates.values()) > 1.0:
            raise ValueError("error rates add up to more than 1")
        for code, rate in self.inner_error_rates.items():
            if code not in ERROR_TEXTS:
                raise ValueError(f"unknown VK error code {code}")
            _check_rate(f"inner_error_rates[{code}]", rate)
        if sum(self.inner_error_rates.values()) > 1.0:
            raise ValueError("inner error rates add up to more than 1")
        if self.delay < 0:
            raise ValueError("delay must not be negative")
        _check_rate("delay_rate", self.delay_rate)
        _check_rate("drop_rate", self.drop_rate)
        _check_rate("drop_after_rate", self.drop_after_rate)
        _check_rate("bad_gateway_rate", self.bad_gateway_rate)
        _check_rate("callback_duplicate_rate", self.callback_duplicate_rate)
        if self.drop_rate + self.drop_after_rate > 1.0:
            raise ValueError("drop rates add up to more than 1")

    @property
    def active(self) -> bool:
        return bool(
            any(self.error_rates.values())
            or any(self.inner_error_rates.values())
            or self.delay
            or self.drop_rate
            or self.drop_after_rate
            or self.bad_gateway_rate
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "error_rates": {str(code): rate for code, rate in self.error_rates.items()},
            "inner_error_rates": {str(code): rate for code, rate in self.inner_error_rates.items()},
            "delay": self.delay,
            "delay_rate": self.delay_rate,
            "drop_rate": self.drop_rate,
            "drop_after_rate": self.drop_after_rate,
            "bad_gateway_rate": self.bad_gateway_rate,
            "methods": sorted(self.methods) if self.methods is not None else None,
            "callback_duplicate_rate": self.callback_duplicate_rate,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultConfig:
        """Build from JSON (as posted to ``/_test/faults``); ValueError on anything wrong."""
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fields: {', '.join(sorted(unknown))}")
        raw_rates = data.get("error_rates") or {}
        raw_inner = data.get("inner_error_rates") or {}
        if not isinstance(raw_rates, Mapping) or not isinstance(raw_inner, Mapping):
            raise ValueError("error_rates and inner_error_rates must be objects")
        try:
            rates = {int(code): float(rate) for code, rate in raw_rates.items()}
            inner = {int(code): float(rate) for code, rate in raw_inner.items()}
            methods = data.get("methods")
            return cls(
                error_rates=rates,
                inner_error_rates=inner,
                delay=float(data.get("delay", 0.0)),
                delay_rate=float(data.get("delay_rate", 1.0)),
                drop_rate=float(data.get("drop_rate", 0.0)),
                drop_after_rate=float(data.get("drop_after_rate", 0.0)),
                bad_gateway_rate=float(data.get("bad_gateway_rate", 0.0)),
                methods=frozenset(str(m) for m in methods) if methods is not None else None,
                callback_duplicate_rate=float(data.get("callback_duplicate_rate", 0.0)),
                seed=int(data.get("seed", 0)),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class FaultDecision:
    error_code: int | None = None
    delay: float = 0.0
    drop: DropMode | None = None
    bad_gateway: bool = False

    @property
    def any(self) -> bool:
        return (
            self.error_code is not None
            or self.delay > 0
            or self.drop is not None
            or self.bad_gateway
        )


NO_FAULT = FaultDecision()


def _check_rate(name: str, rate: float) -> None:
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1")


class FaultInjector:
    """Decides, per API request, which fault (if any) to inject."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self._rng = random.Random(self.config.seed)
        self._callback_rng = random.Random(f"callback:{self.config.seed}")
        self._longpoll_rng = random.Random(f"longpoll:{self.config.seed}")
        self._inner_rng = random.Random(f"inner:{self.config.seed}")
        self.injected: dict[str, int] = {}

    def configure(self, config: FaultConfig | None = None, **changes: Any) -> FaultConfig:
        """Replace the configuration (or change some fields) and reseed the RNG."""
        base = config or self.config
        if changes:
            for key in ("error_rates", "inner_error_rates"):
                if key in changes:
                    changes[key] = {int(k): float(v) for k, v in changes[key].items()}
            if changes.get("methods") is not None:
                changes["methods"] = frozenset(changes["methods"])
            base = replace(base, **changes)
        self.config = base
        self._rng = random.Random(base.seed)
        self._callback_rng = random.Random(f"callback:{base.seed}")
        self._longpoll_rng = random.Random(f"longpoll:{base.seed}")
        self._inner_rng = random.Random(f"inner:{base.seed}")
        return base

    def clear(self) -> None:
        self.configure(FaultConfig())
        self.injected.clear()

    def decide(self, method: str) -> FaultDecision:
        config = self.config
        if not config.active or (config.methods is not None and method not in config.methods):
            return NO_FAULT
        error_draw, delay_draw, drop_draw = (self._rng.random() for _ in range(3))
        bad_gateway = bool(config.bad_gateway_rate) and self._rng.random() < config.bad_gateway_rate
        decision = FaultDecision(
            error_code=self._pick_error(error_draw),
            delay=config.delay if config.delay and delay_draw < config.delay_rate else 0.0,
            drop=self._pick_drop(drop_draw),
            bad_gateway=bad_gateway,
        )
        self._count(decision)
        return decision

    def inner_error(self, method: str) -> int | None:
        """The error a call inside an ``execute`` fails with on its own, if any (drawn from an
        RNG of its own: the requests' faults stay the same)."""
        config = self.config
        if not config.inner_error_rates or (
            config.methods is not None and method not in config.methods
        ):
            return None
        draw = self._inner_rng.random()
        threshold = 0.0
        for code, rate in sorted(config.inner_error_rates.items()):
            threshold += rate
            if draw < threshold:
                key = f"inner_error_{code}"
                self.injected[key] = self.injected.get(key, 0) + 1
                return code
        return None

    def bad_gateway_longpoll(self) -> bool:
        """Whether the long-poll server answers the next ``a_check`` with a 502 page."""
        config = self.config
        if not config.bad_gateway_rate or (
            config.methods is not None and "a_check" not in config.methods
        ):
            return False
        if self._longpoll_rng.random() >= config.bad_gateway_rate:
            return False
        self.injected["bad_gateway_longpoll"] = self.injected.get("bad_gateway_longpoll", 0) + 1
        return True

    def duplicate_callback(self) -> bool:
        """Whether the Callback API sends the next event twice."""
        rate = self.config.callback_duplicate_rate
        if not rate or self._callback_rng.random() >= rate:
            return False
        self.injected["callback_duplicate"] = self.injected.get("callback_duplicate", 0) + 1
        return True

    def _pick_error(self, draw: float) -> int | None:
        threshold = 0.0
        for code, rate in sorted(self.config.error_rates.items()):
            threshold += rate
            if draw < threshold:
                return code
        return None

    def _pick_drop(self, draw: float) -> DropMode | None:
        if draw < self.config.drop_rate:
            return "before"
        if draw < self.config.drop_rate + self.config.drop_after_rate:
            return "after"
        return None

    def _count(self, decision: FaultDecision) -> None:
        if decision.error_code is not None:
            key = f"error_{decision.error_code}"
            self.injected[key] = self.injected.get(key, 0) + 1
        if decision.delay:
            self.injected["delay"] = self.injected.get("delay", 0) + 1
        if decision.drop is not None:
            key = f"drop_{decision.drop}"
            self.injected[key] = self.injected.get(key, 0) + 1
        if decision.bad_gateway:
            self.injected["bad_gateway"] = self.injected.get("bad_gateway", 0) + 1
