"""What a raw VK update says, read without the database: its event id (or a stable one
derived from it), its community, the user who caused it, whether it is an update at all; and
how it is written to the log (what people wrote is never logged)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from gameplay.models import VkEvent

#: The size of ``VkEvent.event_id``.
EVENT_ID_MAX = VkEvent._meta.get_field("event_id").max_length or 80

#: Update types a user causes, and where the user's id sits in ``object``.
_USER_PATHS: dict[str, tuple[str, ...]] = {
    "message_new": ("message", "from_id"),
    "message_event": ("user_id",),
    "board_post_new": ("from_id",),
    "board_post_edit": ("from_id",),
    "board_post_restore": ("from_id",),
}


class BadUpdate(ValueError):
    """Not a VK update object (no ``type``): nothing to apply."""


def event_id_of(update: Mapping[str, Any]) -> str:
    """The update's ``event_id``; for an update without one (old API versions), a stable id
    derived from its canonical JSON (``secret`` left out), so a redelivery gets the same id.
    An id longer than the table allows is replaced by its hash."""
    raw = update.get("event_id")
    if isinstance(raw, str | int) and not isinstance(raw, bool) and str(raw).strip():
        event_id = str(raw).strip()
        if len(event_id) <= EVENT_ID_MAX:
            return event_id
        return "sha256:" + hashlib.sha256(event_id.encode()).hexdigest()
    body = {key: value for key, value in update.items() if key != "secret"}
    canonical = json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


#: The ids a community's ``vk_id`` column (a 64-bit integer) holds: any other is no community,
#: and must not reach a query (SQLite cannot even take it as a parameter).
GROUP_ID_RANGE = range(-(2**63), 2**63)


def group_id_of(update: Mapping[str, Any]) -> int | None:
    """The update's ``group_id`` as an int, or None if missing, not a finite number, or
    beyond what a community's id can be (:data:`GROUP_ID_RANGE`)."""
    raw = update.get("group_id")
    if isinstance(raw, bool):
        return None
    try:
        group_id = int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return group_id if group_id in GROUP_ID_RANGE else None


def sender_of(update: Mapping[str, Any]) -> int | None:
    """The VK user who caused the update (a positive id), if the update says."""
    path = _USER_PATHS.get(str(update.get("type")))
    value: Any = update.get("object")
    for key in path or ():
        value = value.get(key) if isinstance(value, Mapping) else None
    if path is None or isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value > 0 else None


def check_update(update: Any) -> str:
    if not isinstance(update, Mapping):
        raise BadUpdate(f"a VK update must be an object, got {type(update).__name__}")
    kind = update.get("type")
    if not isinstance(kind, str) or not kind:
        raise BadUpdate("a VK update must have a string 'type'")
    return kind


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
