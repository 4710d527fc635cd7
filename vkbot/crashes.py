"""What the pipeline does when a handler crashes on an update (``vkbot.pipeline``): the crash
noted on the event's record and logged (the texts people wrote redacted), and an apology to
the user who sent the update."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from django.db import InterfaceError, OperationalError, transaction

from gameplay import unit_of_work
from gameplay.messages import render
from gameplay.models import VkEvent
from gameplay.services.common import send_message

logger = logging.getLogger("vkbot.pipeline")

#: Errors that mean the database itself is unavailable (the pipeline lets them through).
_INFRASTRUCTURE_ERRORS = (OperationalError, InterfaceError)

#: Update types a user causes, and where the user's id sits in ``object``.
_USER_PATHS: dict[str, tuple[str, ...]] = {
    "message_new": ("message", "from_id"),
    "message_event": ("user_id",),
    "board_post_new": ("from_id",),
    "board_post_edit": ("from_id",),
    "board_post_restore": ("from_id",),
}


def sender_of(update: Mapping[str, Any]) -> int | None:
    """The VK user who caused the update (a positive id), if the update says."""
    path = _USER_PATHS.get(str(update.get("type")))
    value: Any = update.get("object")
    for key in path or ():
        value = value.get(key) if isinstance(value, Mapping) else None
    if path is None or isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value > 0 else None


class Crashed(Exception):
    """A handler crashed on the lone update of a transaction: raised out of the transaction, so
    that all of it rolls back, for ``vkbot.pipeline`` to record the crash in a fresh one."""

    def __init__(
        self, update: Mapping[str, Any], event_id: str, kind: str, source: str, error: Exception
    ) -> None:
        super().__init__(event_id)
        self.update = update
        self.event_id = event_id
        self.kind = kind
        self.source = source
        self.error = error


def note_crash(group_id: int | None, event_id: str, exc: Exception) -> None:
    """What went wrong, on the event's record, for the operator."""
    note = f"{type(exc).__name__}: {exc}"[:2000]
    VkEvent.objects.filter(group_id=group_id or 0, event_id=event_id).update(error=note)


def log_crash(
    update: Mapping[str, Any], event_id: str, kind: str, source: str, exc: Exception
) -> None:
    logger.error(
        "The handler failed on VK event %s (%s) from %s; its changes were rolled back and "
        "the event will not be retried. Update: %s",
        event_id, kind, source, dump(update),
        exc_info=exc,
    )  # fmt: skip


def apologise(update: Mapping[str, Any], event_id: str) -> None:
    user_id = sender_of(update)
    if user_id is None:
        return
    try:
        with transaction.atomic():
            send_message(
                game=None,
                peer_ids=[user_id],
                text=render("player/internal_error"),
                kind="internal_error",
            )
            unit_of_work.flush()
    except _INFRASTRUCTURE_ERRORS:
        raise
    except Exception:
        logger.exception("Could not queue the apology to VK user %s (event %s)", user_id, event_id)


#: Keys whose string values are what people wrote (messages, board posts): never logged.
_TEXT_KEYS = frozenset({"text", "message", "title", "caption", "description"})


def redacted(value: Any, depth: int = 0) -> Any:
    """``value`` with what people wrote replaced by its length: logs at INFO and above (a
    crash's dump included) never hold a night action, a mafia message or a card's text."""
    if depth > 40:
        return "<nested too deep>"
    if isinstance(value, Mapping):
        return {
            k: f"<{len(v)} chars>"
            if k in _TEXT_KEYS and isinstance(v, str)
            else redacted(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v, depth + 1) for v in value]
    return value


def dump(update: Any) -> str:
    """An update for the log, texts redacted (see :func:`redacted`)."""
    try:
        return json.dumps(redacted(update), ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return f"<an unprintable {type(update).__name__}>"
