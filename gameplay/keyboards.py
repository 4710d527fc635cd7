"""VK keyboards and button payloads, as pure Python (no Django): the services attach them to
prompts, the bot decodes what a pressed button sends back.

A payload is compact JSON (VK.md: at most 255 characters) naming the game (``g``), the phase
(``p``; 0 when the button is not tied to one), the action (``a``) and, where it applies, the
target seat (``t``), the guessed role of a role strike (``r``), an early vote (``e``) and a page
offset (``o``). A payload is only a suggestion: the bot re-validates every field against the
database and the rules, so a forged one changes nothing.

Limits (VK.md, dev.vk.com "Bot keyboards"): a regular keyboard holds 5 buttons a row, 10 rows,
40 buttons; an inline one 5 a row, 6 rows, 10 buttons; a label at most 40 characters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_PAYLOAD = 255
MAX_LABEL = 40
REGULAR = (5, 10, 40)  # per row, rows, buttons
INLINE = (5, 6, 10)
#: Targets on one page of a paged inline keyboard (4 rows of 2, plus a navigation row; fewer
#: when the navigation row carries extra buttons).
PAGE_SIZE = 8
#: Targets per row (names stay readable on a phone).
PER_ROW = 2

#: Button actions besides the night acts (gameplay.rules.Act values).
VOTE = "vote"
SIGNUP = "signup"
STATUS = "status"
HELP = "help"
MENU = "menu"
NIGHT_ACTS = frozenset(
    {
        "mafia_shot",
        "role_strike",
        "check",
        "commissar_shot",
        "heal",
        "maniac_shot",
        "clock",
        "red_button",
        "book",
    }
)
ACTIONS = NIGHT_ACTS | {VOTE, SIGNUP, STATUS, HELP, MENU}
GUESSES = frozenset({"commissar", "doctor", "maniac"})
_KEYS = frozenset({"g", "p", "a", "t", "r", "e", "o"})
_MAX_ID = 2**53


class BadPayload(ValueError):
    """A payload that is not one of ours (forged, truncated, from another bot)."""


@dataclass(frozen=True, slots=True)
class Payload:
    action: str
    game: int = 0
    phase: int = 0
    target: int | None = None
    guess: str | None = None
    early: bool = False
    offset: int = 0

    def encode(self) -> str:
        data: dict[str, Any] = {"g": self.game, "p": self.phase, "a": self.action}
        if self.target is not None:
            data["t"] = self.target
        if self.guess is not None:
            data["r"] = self.guess
        if self.early:
            data["e"] = 1
        if self.offset:
            data["o"] = self.offset
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        if len(text) > MAX_PAYLOAD:  # pragma: no cover - ids are bounded below
            raise ValueError("payload too long")
        return text

    def but(self, **changes: Any) -> Payload:
        fields = {
            "action": self.action,
            "game": self.game,
            "phase": self.phase,
            "target": self.target,
            "guess": self.guess,
            "early": self.early,
            "offset": self.offset,
        }
        fields.update(changes)
        return Payload(**fields)


def _int(value: Any, key: str, *, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < _MAX_ID:
        raise BadPayload(f"{key} must be a whole number")
    return value


def decode(raw: Any) -> Payload:
    """Parse what VK sends back (a JSON string in ``message_new``, an object in
    ``message_event``) or raise ``BadPayload``."""
    if isinstance(raw, str | bytes):
        if len(raw) > MAX_PAYLOAD * 4:
            raise BadPayload("payload too long")
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raise BadPayload("payload is not JSON") from None
    if not isinstance(raw, dict) or not raw.keys() <= _KEYS or "a" not in raw:
        raise BadPayload("payload is not a button of this bot")
    action = raw["a"]
    if not isinstance(action, str) or action not in ACTIONS:
        raise BadPayload("unknown action")
    target = raw.get("t")
    guess = raw.get("r")
    if guess is not None and (not isinstance(guess, str) or guess not in GUESSES):
        raise BadPayload("unknown role")
    early = raw.get("e", 0)
    if early not in (0, 1) or isinstance(early, float):
        raise BadPayload("e must be 0 or 1")
    return Payload(
        action=action,
        game=_int(raw.get("g", 0), "g"),
        phase=_int(raw.get("p", 0), "p"),
        target=None if target is None else _int(target, "t", low=1),
        guess=guess,
        early=bool(early),
        offset=_int(raw.get("o", 0), "o"),
    )


# --- buttons and keyboards -------------------------------------------------------------------


def label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def callback(text: str, payload: Payload, color: str = "secondary") -> dict[str, Any]:
    """A callback button: pressing it sends ``message_event`` (no message in the chat)."""
    return {
        "action": {"type": "callback", "label": label(text), "payload": payload.encode()},
        "color": color,
    }


def text_button(text: str, payload: Payload | None = None, color: str = "secondary") -> dict:
    """A text button: pressing it sends its label as a message (``message_new``)."""
    action: dict[str, Any] = {"type": "text", "label": label(text)}
    if payload is not None:
        action["payload"] = payload.encode()
    return {"action": action, "color": color}


def keyboard(
    rows: Sequence[Sequence[dict[str, Any]]], *, inline: bool, one_time: bool = False
) -> dict[str, Any]:
    """A keyboard within VK's limits (raises ``ValueError`` on a layout that breaks them)."""
    per_row, max_rows, max_buttons = INLINE if inline else REGULAR
    rows = [list(r) for r in rows if r]
    if len(rows) > max_rows or sum(len(r) for r in rows) > max_buttons:
        raise ValueError("too many buttons for a VK keyboard")
    if any(len(r) > per_row for r in rows):
        raise ValueError("too many buttons in a row")
    board: dict[str, Any] = {"inline": inline, "buttons": rows}
    if not inline:
        board["one_time"] = one_time
    return board


def chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def targets_keyboard(
    targets: Sequence[tuple[int, str]],
    base: Payload,
    *,
    offset: int = 0,
    color: str = "secondary",
    extra: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """An inline keyboard of target seats (``(number, name)``), paged: each target button is
    ``base`` with ``t`` set; «◀»/«▶» buttons are ``base`` with another offset. ``extra`` buttons
    (at most 2) go in the last row."""
    targets = list(targets)
    extra = list(extra)[:2]
    size = PAGE_SIZE - len(extra)
    whole = len(targets) + len(extra) <= INLINE[2] and offset == 0
    if whole:
        page = targets
    else:
        last = (max(len(targets) - 1, 0) // size) * size
        offset = max(0, min(offset - offset % size, last))
        page = targets[offset : offset + size]
    rows = chunks(
        [callback(f"№{n} {name}", base.but(target=n, offset=0), color) for n, name in page],
        PER_ROW,
    )
    nav: list[dict[str, Any]] = []
    if not whole and offset > 0:
        nav.append(callback("◀", base.but(target=None, offset=max(0, offset - size))))
    nav += extra
    if not whole and offset + size < len(targets):
        nav.append(callback("▶", base.but(target=None, offset=offset + size)))
    if nav:
        rows.append(nav)
    return keyboard(rows, inline=True)


def choice_keyboard(choices: Sequence[tuple[str, Payload]], color: str = "primary") -> dict:
    """An inline keyboard of a few labelled choices, two a row."""
    buttons = [callback(text, payload, color) for text, payload in choices[: INLINE[2]]]
    return keyboard(chunks(buttons, PER_ROW), inline=True)


#: The persistent menu (a regular keyboard of text buttons; their labels are commands too).
MENU_LABELS = (("Действия", MENU), ("Статус", STATUS), ("Помощь", HELP))


def menu_keyboard() -> dict[str, Any]:
    row = [text_button(text, Payload(action), "primary") for text, action in MENU_LABELS]
    return keyboard([row], inline=False)


def labels_of(board: dict[str, Any] | None) -> list[str]:
    """Every button label of a keyboard (for tests and the leak scan)."""
    if not isinstance(board, dict):
        return []
    out = []
    for row in board.get("buttons") or []:
        for button in row:
            action = button.get("action") or {}
            if isinstance(action.get("label"), str):
                out.append(action["label"])
    return out


def payloads_of(board: dict[str, Any] | None) -> list[Payload]:
    """Every decodable payload of a keyboard."""
    out = []
    if not isinstance(board, dict):
        return out
    for row in board.get("buttons") or []:
        for button in row:
            try:
                out.append(decode((button.get("action") or {}).get("payload")))
            except BadPayload:
                continue
    return out
