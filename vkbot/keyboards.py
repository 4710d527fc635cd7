"""VK keyboards: the buttons an Outbox row stores (``gameplay.buttons.Keyboard.to_json``)
rendered as VK's keyboard JSON when the row is delivered.

Limits (VK.md, dev.vk.com "Bot keyboards"): a regular keyboard holds 5 buttons a row, 10 rows,
40 buttons; an inline one 5 a row, 6 rows, 10 buttons; a label at most 40 characters (a longer
one is cut with «…»). A layout that breaks them raises ``ValueError``.

Rows written before the buttons were stored without VK (they hold VK's JSON: ``buttons``) are
delivered as they are.
"""

from __future__ import annotations

from typing import Any

from gameplay.buttons import BadPayload, Button, Keyboard, Payload, decode

MAX_LABEL = 40
REGULAR = (5, 10, 40)  # per row, rows, buttons
INLINE = (5, 6, 10)


def label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def button(b: Button) -> dict[str, Any]:
    """A typed button is VK's text button (pressing it sends its label as a message); any
    other a callback button (pressing it sends ``message_event``, no message in the chat)."""
    if b.typed:
        action: dict[str, Any] = {"type": "text", "label": label(b.label)}
        if b.payload is not None:
            action["payload"] = b.payload.encode()
        return {"action": action, "color": b.color}
    payload = b.payload.encode() if b.payload is not None else ""
    return {"action": {"type": "callback", "label": label(b.label), "payload": payload},
            "color": b.color}  # fmt: skip


def render(board: Keyboard, *, one_time: bool = False) -> dict[str, Any]:
    """VK's keyboard of ``board``, within VK's limits (``ValueError`` on a layout that breaks
    them)."""
    per_row, max_rows, max_buttons = INLINE if board.inline else REGULAR
    rows = [[button(b) for b in r] for r in board.rows if r]
    if len(rows) > max_rows or sum(len(r) for r in rows) > max_buttons:
        raise ValueError("too many buttons for a VK keyboard")
    if any(len(r) > per_row for r in rows):
        raise ValueError("too many buttons in a row")
    out: dict[str, Any] = {"inline": board.inline, "buttons": rows}
    if not board.inline:
        out["one_time"] = one_time
    return out


def of_row(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """VK's keyboard for what an Outbox row stores: its buttons rendered, a row written by the
    older code (VK's JSON already) as it is, None for no keyboard."""
    if not stored:
        return None
    if "buttons" in stored:
        return stored
    return render(Keyboard.from_json(stored))


# --- reading keyboards (tests, the leak scan) ------------------------------------------------


def labels_of(board: dict[str, Any] | None) -> list[str]:
    """Every button label of a keyboard (VK's JSON or as an Outbox row stores it)."""
    if not isinstance(board, dict):
        return []
    out = []
    for row in (of_row(board) or {}).get("buttons") or []:
        for b in row:
            action = b.get("action") or {}
            if isinstance(action.get("label"), str):
                out.append(action["label"])
    return out


def payloads_of(board: dict[str, Any] | None) -> list[Payload]:
    """Every decodable payload of a keyboard (VK's JSON or as an Outbox row stores it)."""
    out: list[Payload] = []
    if not isinstance(board, dict):
        return out
    for row in (of_row(board) or {}).get("buttons") or []:
        for b in row:
            try:
                out.append(decode((b.get("action") or {}).get("payload")))
            except BadPayload:
                continue
    return out
