"""A game's theme: the story around the facts of its posts.

A theme fills story *slots* — the role and item cards, the welcome, the lines that open a day
and a night, the morning after a night, the end of a day, the end of the game. The facts (who
died, who was executed and their role, the tally, deadlines, strikes) are written by the
messages themselves (``templates/messages/``) and a theme cannot remove them: a slot is only
ever rendered *inside* a message, in the place the message gives it. One slot words a whole
post (:data:`WHOLE_POST_SLOTS`): the vote count, which decides nothing (the day's result
post states the tally) and is given its facts as data to lay out as forum GMs like.

A theme's texts (``templates/messages/themes/<key>/<slot>.txt``) and a game's own versions of
them (``Game.theme_texts``, written by its GM in the panel) are written in the GM language
(``gameplay.gmtext``: variables, grammar, ``if``, ``for`` over the game's lists, within a
budget of steps and the slot's length, :func:`output_limit`), rendered with a read-only copy of
the context of the message they appear in. A game's text that does not render falls back to
the theme's own text and the GM is told (a moderation flag, through the reporter the app
installs: :func:`use_reporter`), so a game's post never fails, nor waits, because of its story.

The roles keep their names in every theme («комиссар», «доктор», «маньяк»): players type them
(«удар N комиссар») and the rules' refusals use them; a theme tells who they are on the role
card. The ``{% role %}`` and ``{% item %}`` tags take ``role_names`` / ``item_names`` from the
context should a theme ever rename them for display.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from gameplay import gmtext, gmtext_data, messages
from gameplay.messages import MessageError

DEFAULT = "time_machine"

#: Theme key -> its title in the panel.
THEMES: dict[str, str] = {
    "time_machine": "Машина времени",
    "classic": "Классика",
}

#: Slot -> what it is, for the GM's editor.
SLOTS: dict[str, str] = {
    "welcome": "Приветствие в посте со стартом игры",
    "day_story": "Начало дня",
    "night_story": "Начало ночи",
    "morning": "Утро после ночи (перед итогами)",
    "execution": "Итоги дня (после фактов)",
    "vote_count": "Подсчёт голосов (весь пост)",
    "end": "Конец игры",
    "role_mafia": "Карточка роли: мафия",
    "role_commissar": "Карточка роли: комиссар",
    "role_doctor": "Карточка роли: доктор",
    "role_civilian": "Карточка роли: мирный житель",
    "role_maniac": "Карточка роли: маньяк",
    "item_clock": "Карточка предмета: старинные часы",
    "item_red_button": "Карточка предмета: красная кнопка",
    "item_book": "Карточка предмета: книга из будущего",
}


#: The slots a private message shows (a role card, a night prompt); the others are board posts.
PRIVATE_SLOTS = frozenset(s for s in SLOTS if s.startswith(("role_", "item_")))
#: Characters one slot may render to. A role card holds two private slots and its facts
#: (the mafia's names, the hash) within VK's 4,096; a board post one slot and its facts.
PRIVATE_SLOT_MAX = 1400
BOARD_SLOT_MAX = 4000
#: The slots that word a whole board post (the vote count: a line or two for every seat, and
#: a link per vote): they may fill several comments (the delivery splits a longer post) and
#: take several budgets' worth of steps, so that a table of 60 still gets its count.
WHOLE_POST_SLOTS = frozenset({"vote_count"})
WHOLE_POST_SHARE = 3


def output_limit(slot: str) -> int:
    """How long ``slot`` may render."""
    if slot in WHOLE_POST_SLOTS:
        return gmtext.BOARD_POST_MAX * WHOLE_POST_SHARE
    return PRIVATE_SLOT_MAX if slot in PRIVATE_SLOTS else BOARD_SLOT_MAX


def step_limit(slot: str) -> int:
    """The steps one render of ``slot`` may take."""
    return gmtext.STEPS * (WHOLE_POST_SHARE if slot in WHOLE_POST_SLOTS else 1)


#: Told when a game's own text does not render and the theme's stands in for it:
#: ``reporter(game_id=…, slot=…, error=MessageError)``; installed when the app starts.
_reporter: Callable[..., object] | None = None


def use_reporter(reporter: Callable[..., object] | None) -> None:
    global _reporter
    _reporter = reporter


def source(theme: str, slot: str) -> str:
    """The theme's own text of ``slot`` (the default theme's for an unknown theme)."""
    key = theme if theme in THEMES else DEFAULT
    path = messages.ROOT / "themes" / key / f"{slot}.txt"
    return path.read_text(encoding="utf-8").rstrip("\n") if path.is_file() else ""


@cache
def _compiled(theme: str, slot: str) -> gmtext.GmText:
    return gmtext.compile_text(source(theme, slot))


@dataclass
class Theme:
    """The theme of one game: its key, the game's own versions of some slots, and the game
    (``game_id``) whose GM is told when one of them does not render."""

    key: str = DEFAULT
    texts: dict[str, str] = field(default_factory=dict)
    game_id: int | None = None

    @property
    def title(self) -> str:
        return THEMES.get(self.key, THEMES[DEFAULT])

    def source(self, slot: str) -> str:
        return self.texts.get(slot) or source(self.key, slot)

    def render_slot(self, slot: str, context: Any) -> str:
        """``slot`` rendered in ``context`` (a message's template Context); the theme's own
        text, and the GM told, when the game's does not render."""
        data = gmtext_data.data_of(context)
        limit, steps = output_limit(slot), step_limit(slot)
        own = self.texts.get(slot)
        if own:
            try:
                return gmtext.render(gmtext.compile_text(own), data, output=limit, steps=steps)
            except MessageError as error:
                if self.game_id is not None and _reporter is not None:
                    _reporter(game_id=self.game_id, slot=slot, error=error)
        try:
            theme = self.key if self.key in THEMES else DEFAULT
            return gmtext.render(_compiled(theme, slot), data, output=limit, steps=steps)
        except MessageError:
            return ""


def of(game: Any) -> Theme:
    """The theme of ``game`` (anything with ``theme`` and ``theme_texts``; the default theme
    for anything else)."""
    key = getattr(game, "theme", "") or DEFAULT
    texts = getattr(game, "theme_texts", None) or {}
    pk = getattr(game, "pk", None)
    return Theme(
        key if key in THEMES else DEFAULT,
        dict(texts) if isinstance(texts, dict) else {},
        pk if isinstance(pk, int) else None,
    )
