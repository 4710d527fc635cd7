"""A game's theme: the story around the facts of its posts.

A theme fills story *slots* — the role and item cards, the welcome, the lines that open a day
and a night, the morning after a night, the end of a day, the end of the game. The facts (who
died, who was executed and their role, the tally, deadlines, strikes) are written by the
messages themselves (``templates/messages/``) and a theme cannot remove them: a slot is only
ever rendered *inside* a message, in the place the message gives it.

A theme's texts are message templates too (``templates/messages/themes/<key>/<slot>.txt``),
rendered with the context of the message they appear in. A game may override any slot of its
theme (``Game.theme_texts``); an override that does not render falls back to the theme's own
text, so a game's post never fails because of its story.

The roles keep their names in every theme («комиссар», «доктор», «маньяк»): players type them
(«удар N комиссар») and the rules' refusals use them; a theme tells who they are on the role
card. The ``{% role %}`` and ``{% item %}`` tags take ``role_names`` / ``item_names`` from the
context should a theme ever rename them for display.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.template import Template

from gameplay import messages

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


def source(theme: str, slot: str) -> str:
    """The theme's own text of ``slot`` (the default theme's for an unknown theme)."""
    key = theme if theme in THEMES else DEFAULT
    path = messages.ROOT / "themes" / key / f"{slot}.txt"
    return path.read_text(encoding="utf-8").rstrip("\n") if path.is_file() else ""


@cache
def _compiled(theme: str, slot: str) -> Template:
    return messages.compile_text(source(theme, slot))


@dataclass
class Theme:
    """The theme of one game: its key and the game's own versions of some slots."""

    key: str = DEFAULT
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return THEMES.get(self.key, THEMES[DEFAULT])

    def source(self, slot: str) -> str:
        return self.texts.get(slot) or source(self.key, slot)

    def render_slot(self, slot: str, context: Any) -> str:
        """``slot`` rendered in ``context`` (a template Context); the theme's own text when the
        game's override does not render."""
        own = self.texts.get(slot)
        if own:
            try:
                return _render_in(messages.compile_text(own), context)
            except messages.MessageError:
                pass
        try:
            return _render_in(_compiled(self.key if self.key in THEMES else DEFAULT, slot), context)
        except messages.MessageError:
            return ""


def _render_in(template: Template, context: Any) -> str:
    text = template.render(context)
    if messages.MISSING_MARK in text:
        raise messages.MessageError("неизвестная переменная")
    return text.strip()


def of(game: Any) -> Theme:
    """The theme of ``game`` (anything with ``theme`` and ``theme_texts``; the default theme
    for anything else)."""
    key = getattr(game, "theme", "") or DEFAULT
    texts = getattr(game, "theme_texts", None) or {}
    return Theme(key if key in THEMES else DEFAULT, dict(texts) if isinstance(texts, dict) else {})
