"""What the Callback API pusher (:mod:`localvk.callback`) is configured with: a
:class:`CallbackConfig`, built from JSON (``/_test/callback``) or from the command-line options
of ``python -m localvk`` and ``manage.py runlocalvk``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .state import LocalVK


@dataclass(frozen=True)
class CallbackConfig:
    """Where and how events are pushed (see :mod:`localvk.callback`)."""

    urls: tuple[str, ...]
    confirmation_code: str
    secret: str = ""
    concurrency: int = 4
    retries: int = 4
    backoff: float = 0.1
    timeout: float = 10.0
    confirm_interval: float = 1.0
    #: The event types pushed (``groups.setCallbackSettings``); None: every type.
    events: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.urls, str):
            raise ValueError("urls must be a list of URLs")
        object.__setattr__(self, "urls", tuple(str(url) for url in self.urls))
        if not self.urls:
            raise ValueError("the Callback API needs at least one server URL")
        for url in self.urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"not an http(s) URL: {url!r}")
        if not isinstance(self.confirmation_code, str) or not self.confirmation_code:
            raise ValueError("the Callback API needs a confirmation code")
        if not isinstance(self.secret, str):
            raise ValueError("secret must be a string")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.retries < 0:
            raise ValueError("retries must not be negative")
        if self.backoff < 0 or self.timeout <= 0 or self.confirm_interval <= 0:
            raise ValueError("backoff must not be negative; timeout and confirm_interval > 0")
        if self.events is not None:
            if isinstance(self.events, str) or not all(isinstance(e, str) for e in self.events):
                raise ValueError("events must be a list of event types")
            object.__setattr__(self, "events", tuple(sorted(set(self.events))))

    def pushes(self, event_type: str) -> bool:
        return self.events is None or event_type in self.events

    def to_dict(self) -> dict[str, Any]:
        """The settings, without the confirmation code and the secret (only whether set)."""
        data = asdict(self)
        data["urls"] = list(self.urls)
        data["secret"] = bool(self.secret)
        data["confirmation_code"] = bool(self.confirmation_code)
        data["events"] = None if self.events is None else list(self.events)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallbackConfig:
        """Build from JSON (as posted to ``/_test/callback``); ValueError on anything wrong."""
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fields: {', '.join(sorted(unknown))}")
        urls = data.get("urls")
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise ValueError("urls must be a list of URLs")
        events = data.get("events")
        if events is not None and (
            not isinstance(events, list) or not all(isinstance(e, str) for e in events)
        ):
            raise ValueError("events must be a list of event types")
        try:
            return cls(
                urls=tuple(urls),
                confirmation_code=str(data.get("confirmation_code") or ""),
                secret=str(data.get("secret") or ""),
                concurrency=int(data.get("concurrency", 4)),
                retries=int(data.get("retries", 4)),
                backoff=float(data.get("backoff", 0.1)),
                timeout=float(data.get("timeout", 10.0)),
                confirm_interval=float(data.get("confirm_interval", 1.0)),
                events=None if events is None else tuple(events),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from None


# --- command-line options (python -m localvk and manage.py runlocalvk) ---------------


def add_callback_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Callback API (instead of or beside the long poll)")
    group.add_argument(
        "--callback-url",
        action="append",
        dest="callback_urls",
        default=None,
        metavar="URL",
        help="POST every event to this Callback API server URL (repeatable: the URLs take "
        "turns, as behind a load balancer), e.g. http://127.0.0.1:8000/vk/callback/",
    )
    group.add_argument(
        "--callback-confirmation",
        default=None,
        metavar="CODE",
        help="the confirmation code the server must answer (VK shows it in the settings)",
    )
    group.add_argument(
        "--callback-secret", default=None, metavar="KEY", help="the secret key sent in events"
    )
    group.add_argument(
        "--callback-concurrency", type=int, default=4, help="posts in flight at once (4)"
    )
    group.add_argument(
        "--callback-retries", type=int, default=4, help="retries of a failed post (4)"
    )
    group.add_argument(
        "--callback-duplicate-rate",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="fault injection: the share of events sent twice, to different URLs (0)",
    )


def callback_config_from_args(
    urls: Sequence[str] | None,
    *,
    confirmation_code: str | None,
    secret: str | None,
    concurrency: int = 4,
    retries: int = 4,
) -> CallbackConfig | None:
    """The pusher's configuration from the options (None without ``--callback-url``);
    ValueError with an operator-facing message on anything wrong."""
    if not urls:
        if confirmation_code or secret:
            raise ValueError("--callback-confirmation and --callback-secret need --callback-url")
        return None
    if not confirmation_code:
        raise ValueError(
            "--callback-url needs the confirmation code the server answers "
            "(--callback-confirmation CODE)"
        )
    return CallbackConfig(
        urls=tuple(urls),
        confirmation_code=confirmation_code,
        secret=secret or "",
        concurrency=concurrency,
        retries=retries,
    )


def configure_callbacks(
    state: LocalVK,
    urls: Sequence[str] | None,
    *,
    confirmation_code: str | None,
    secret: str | None,
    concurrency: int = 4,
    retries: int = 4,
    duplicate_rate: float = 0.0,
) -> None:
    """Set ``state`` up to push to ``urls`` as the command-line options say."""
    config = callback_config_from_args(
        urls,
        confirmation_code=confirmation_code,
        secret=secret,
        concurrency=concurrency,
        retries=retries,
    )
    if duplicate_rate and config is None:
        raise ValueError("--callback-duplicate-rate needs --callback-url")
    state.callbacks.configure(config)
    if duplicate_rate:
        state.faults.configure(callback_duplicate_rate=duplicate_rate)
