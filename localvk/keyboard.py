"""Validation of the ``keyboard`` parameter of ``messages.send`` against VK's limits.

Limits (dev.vk.com, "Bot keyboards"): a regular keyboard holds at most 5 buttons in a row,
10 rows and 40 buttons; an inline keyboard 5 in a row, 6 rows and 10 buttons; a button payload
is a JSON string of at most 255 characters; a label at most 40 characters.

A keyboard that is not JSON at all is error 100 (a malformed parameter); a JSON keyboard that
breaks VK's format or limits is error 911 "Keyboard format is invalid: …", as VK answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import VKError, param_error

MAX_PAYLOAD_LENGTH = 255
MAX_LABEL_LENGTH = 40

BUTTON_TYPES = frozenset(
    {
        "text",
        "open_link",
        "location",
        "vkpay",
        "open_app",
        "callback",
        "intent_subscribe",
        "intent_unsubscribe",
    }
)
COLORS = frozenset({"primary", "secondary", "negative", "positive"})
LABELLED_TYPES = frozenset({"text", "callback", "open_link", "open_app"})
COLORED_TYPES = frozenset({"text", "callback"})


@dataclass(frozen=True)
class KeyboardLimits:
    per_row: int
    rows: int
    buttons: int


REGULAR_LIMITS = KeyboardLimits(per_row=5, rows=10, buttons=40)
INLINE_LIMITS = KeyboardLimits(per_row=5, rows=6, buttons=10)


def _invalid(detail: str) -> VKError:
    return VKError(911, detail)


def validate_keyboard(raw: str) -> dict[str, Any]:
    """Parse and check a keyboard; return it as a dict or raise :class:`VKError`."""
    try:
        keyboard = json.loads(raw)
    except ValueError:
        raise param_error("keyboard is not a valid JSON") from None
    if not isinstance(keyboard, dict):
        raise _invalid("keyboard should be an object")
    inline = keyboard.get("inline", False)
    one_time = keyboard.get("one_time", False)
    if not isinstance(inline, bool) or not isinstance(one_time, bool):
        raise _invalid("inline and one_time should be booleans")
    if inline and one_time:
        raise _invalid("one_time is not supported for inline keyboard")
    rows = keyboard.get("buttons")
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise _invalid("buttons should be an array of arrays")
    limits = INLINE_LIMITS if inline else REGULAR_LIMITS
    if len(rows) > limits.rows:
        raise _invalid(f"too many rows: {len(rows)}, max {limits.rows}")
    total = 0
    for row_number, row in enumerate(rows, start=1):
        if not row:
            raise _invalid(f"row {row_number} is empty")
        if len(row) > limits.per_row:
            raise _invalid(f"row {row_number} contains too much columns")
        for button in row:
            _validate_button(button, row_number)
        total += len(row)
    if total > limits.buttons:
        raise _invalid(f"too many buttons: {total}, max {limits.buttons}")
    return keyboard


def _validate_button(button: Any, row_number: int) -> None:
    if not isinstance(button, dict) or not isinstance(button.get("action"), dict):
        raise _invalid(f"button in row {row_number} should have an action object")
    action = button["action"]
    kind = action.get("type")
    if kind not in BUTTON_TYPES:
        raise _invalid(f"unknown button type {kind!r}")
    if kind in LABELLED_TYPES:
        label = action.get("label")
        if not isinstance(label, str) or not label:
            raise _invalid(f"{kind} button should have a label")
        if len(label) > MAX_LABEL_LENGTH:
            raise _invalid(f"label is too long (max {MAX_LABEL_LENGTH})")
    if kind == "open_link" and not isinstance(action.get("link"), str):
        raise _invalid("open_link button should have a link")
    color = button.get("color")
    if color is not None and (kind not in COLORED_TYPES or color not in COLORS):
        raise _invalid(f"invalid button color {color!r}")
    payload = action.get("payload")
    if payload is None:
        return
    if isinstance(payload, dict | list):
        payload = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    if not isinstance(payload, str):
        raise _invalid("payload should be a JSON string")
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise _invalid(f"payload is too long (max {MAX_PAYLOAD_LENGTH})")
    try:
        json.loads(payload)
    except ValueError:
        raise _invalid("payload should be a valid JSON") from None
