"""The buttons a player gets, said without VK: button payloads (what a pressed button sends
back) and keyboards as rows of labelled buttons (no database; the labels are rendered texts).

The services attach a keyboard to a message as :meth:`Keyboard.to_json` (what an Outbox row
stores); the bot renders it as VK's keyboard JSON when it delivers the row
(``vkbot.keyboards``), and decodes what a pressed button sends back (:func:`decode`).

A payload is compact JSON (VK.md: at most 255 characters) naming the game (``g``), the phase
(``p``; 0 when the button is not tied to one), the action (``a``) and, where it applies, the
target seat (``t``), the guessed role of a role strike (``r``), an early vote (``e``) and a page
offset (``o``). A payload is only a suggestion: the bot re-validates every field against the
database and the rules, so a forged one changes nothing.

The layouts stay within VK's limits by construction (an inline keyboard: at most 10 buttons,
5 a row, 6 rows; ``vkbot.keyboards`` checks them all when it renders). The labels are texts
players read: ``templates/messages/player/button.txt`` (:func:`label`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gameplay.messages import Person, render

MAX_PAYLOAD = 255
#: Buttons of one inline keyboard (VK's limit).
INLINE_BUTTONS = 10
#: Targets on one page of a paged inline keyboard (4 rows of 2, plus a navigation row; fewer
#: when the navigation row carries extra buttons).
PAGE_SIZE = 8
#: Targets per row (names stay readable on a phone).
PER_ROW = 2

#: Button colours: ``secondary`` plain, ``primary`` the main choice, ``positive`` a helping
#: act, ``negative`` a harmful one (VK shows them white, blue, green and red).
SECONDARY, PRIMARY, POSITIVE, NEGATIVE = "secondary", "primary", "positive", "negative"
COLORS = frozenset({SECONDARY, PRIMARY, POSITIVE, NEGATIVE})

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
        fields: dict[str, Any] = {
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


@dataclass(frozen=True, slots=True)
class Button:
    """One button. ``typed``: pressing it sends its label as the player's message (the menu
    under the input field); otherwise pressing it sends only the payload (no message in the
    chat)."""

    label: str
    payload: Payload | None = None
    color: str = SECONDARY
    typed: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"label": self.label, "color": self.color}
        if self.payload is not None:
            data["payload"] = self.payload.encode()
        if self.typed:
            data["typed"] = True
        return data


@dataclass(frozen=True, slots=True)
class Keyboard:
    """Rows of buttons; ``inline``: under one message, else the menu under the input field
    (kept until another replaces it)."""

    rows: tuple[tuple[Button, ...], ...]
    inline: bool = True

    def to_json(self) -> dict[str, Any]:
        """The keyboard as an Outbox row stores it (``rows``: lists of buttons)."""
        return {"inline": self.inline, "rows": [[b.to_json() for b in row] for row in self.rows]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Keyboard:
        """What :meth:`to_json` wrote (raises ``BadPayload`` on a payload that is not ours)."""
        rows = []
        for row in data.get("rows") or ():
            buttons = []
            for b in row:
                raw = b.get("payload")
                buttons.append(Button(
                    label=str(b["label"]), payload=None if raw is None else decode(raw),
                    color=str(b.get("color", SECONDARY)), typed=bool(b.get("typed", False)),
                ))  # fmt: skip
            rows.append(tuple(buttons))
        return cls(tuple(rows), inline=bool(data.get("inline", True)))


@lru_cache(maxsize=64)
def label(name: str) -> str:
    """The label of button ``name`` («menu», «forward»…: templates/messages/player/button.txt)."""
    return render("player/button", button=name)


def target_label(number: int, name: str) -> str:
    """A target seat's button: the player as a sentence names them («№3 Аня»)."""
    return str(Person(number, name))


def chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _inline(rows: Sequence[Sequence[Button]]) -> dict[str, Any]:
    return Keyboard(tuple(tuple(r) for r in rows if r), inline=True).to_json()


def targets_keyboard(
    targets: Sequence[tuple[int, str]],
    base: Payload,
    *,
    offset: int = 0,
    color: str = SECONDARY,
    extra: Sequence[Button] = (),
    memo: dict[Any, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An inline keyboard of target seats (``(number, name)``), paged: each target button is
    ``base`` with ``t`` set; «◀»/«▶» buttons are ``base`` with another offset. ``extra`` buttons
    (at most 2) go in the last row. ``memo``: the keyboards built so far for a batch of
    messages (many players get the same page), by what they are built from; a keyboard found
    there is returned as it is (the same object), one built is added."""
    targets = list(targets)
    extra = list(extra)[:2]
    size = PAGE_SIZE - len(extra)
    whole = len(targets) + len(extra) <= INLINE_BUTTONS and offset == 0
    if whole:
        page = targets
    else:
        last = (max(len(targets) - 1, 0) // size) * size
        offset = max(0, min(offset - offset % size, last))
        page = targets[offset : offset + size]
    back = not whole and offset > 0
    forward = not whole and offset + size < len(targets)
    key = (tuple(page), base, color, tuple(extra), offset, back, forward)
    if memo is not None and key in memo:
        return memo[key]
    rows = chunks(
        [Button(target_label(n, name), base.but(target=n, offset=0), color) for n, name in page],
        PER_ROW,
    )
    nav: list[Button] = []
    if back:
        nav.append(Button(label("back"), base.but(target=None, offset=max(0, offset - size))))
    nav += extra
    if forward:
        nav.append(Button(label("forward"), base.but(target=None, offset=offset + size)))
    if nav:
        rows.append(nav)
    board = _inline(rows)
    if memo is not None:
        memo[key] = board
    return board


def choice_keyboard(choices: Sequence[tuple[str, Payload]], color: str = PRIMARY) -> dict:
    """An inline keyboard of a few labelled choices, two a row."""
    buttons = [Button(text, payload, color) for text, payload in choices[:INLINE_BUTTONS]]
    return _inline(chunks(buttons, PER_ROW))


#: The persistent menu (text buttons under the input field; their labels are commands too).
MENU_ACTIONS = (MENU, STATUS, HELP)


def menu_keyboard() -> dict[str, Any]:
    row = tuple(Button(label(a), Payload(a), PRIMARY, typed=True) for a in MENU_ACTIONS)
    return Keyboard((row,), inline=False).to_json()
