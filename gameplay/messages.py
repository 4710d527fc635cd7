"""Every text players, spectators, the board and the GM's flags read: one home, rendered here.

The texts are Django templates, one file per message, under ``templates/messages/<audience>/``
(``player``: private messages; ``board``: posts in the game's topic; ``spectators``: the
spectator chat; ``gm``: what the GM reads in moderation flags; ``refusals``: the text of every
typed refusal, players' and GMs', one file per ``RuleViolation`` class — :func:`refusal`).
``render("player/vote_accepted", target=..., early=False)`` renders one. Templates rather than
a package of Python message modules because a text is then data, not code. A GM's own theme
texts are not rendered by this engine but in the GM language (``gameplay.gmtext``): the same
syntax, a sandboxed subset of its tags and filters, within a budget; a text that does not
compile there is refused with its line and the reason (:class:`MessageError`).

The engine is configured for plain text: no autoescaping, and a line holding only template
tags (``{% if %}``, ``{% endif %}``, ``{# #}``) leaves no line in the output. A variable that
does not exist renders as a marker and :func:`render` raises :class:`MessageError` on it: a
text never goes out with a hole in it. Grammar (``gameplay.templatetags.grammar``, built in):

- ``{{ seat|case:"accs" }}`` — a :class:`Person` («№22 Сергея Воробьёва»), a name, a list of
  either, in a case; ``{{ seat|name_case:"accs" }}`` the name alone;
- ``{{ n|count:"голос" }}`` — «1 голос», «3 голоса», «5 голосов» (also «живой игрок»);
- ``{% g seat "погиб" "погибла" "погибает" %}`` — the verb for the player's gender, the neutral
  wording when VK did not tell it;
- ``{% role r "ablt" %}``, ``{% item i %}`` — a role's or an item's name (the game's theme);
- ``{{ items|join_ru }}`` — «а, б и в».
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.template import Context, Engine, Template, TemplateDoesNotExist, TemplateSyntaxError
from django.template.loaders.filesystem import Loader as FilesystemLoader

from gameplay import grammar
from gameplay.rules.errors import RuleViolation

ROOT = Path(__file__).resolve().parent.parent / "templates" / "messages"
AUDIENCES = ("player", "board", "spectators", "gm", "refusals")

#: What a missing variable renders as; :func:`render` refuses any text that holds it.
MISSING = "\x00missing:%s\x00"
MISSING_MARK = "\x00missing:"
_MISSING_RE = re.compile("\x00missing:(.*?)\x00")
_TAG = r"\{%(?:(?!%\}).)*%\}|\{#(?:(?!#\}).)*#\}"
_CONTROL = re.compile(
    r"^\{[%#]\s*(if|elif|else|endif|for|empty|endfor|with|endwith|comment|endcomment)\b|^\{#"
)
_TAG_ONLY_LINE = re.compile(rf"^[ \t]*(?:(?:{_TAG})[ \t]*)+\n", re.M)
#: Marks a line of output tags only (``{% include %}``, ``{% theme_slot %}``): when it renders
#: empty, the line goes.
_EMPTY_LINE_MARK = "\ue0ff\ue0fe"


class MessageError(ValueError):
    """A message text that does not render: ``line`` (1-based, 0 when unknown) and ``reason``
    in Russian, for a GM editing a theme."""

    def __init__(self, reason: str, line: int = 0) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"строка {line}: {reason}" if line else reason)


@dataclass(frozen=True)
class Person:
    """A player as a sentence names them: seat number, VK name, VK ``sex``."""

    number: int | None
    name: str
    sex: int = grammar.UNKNOWN

    def __str__(self) -> str:
        return f"№{self.number} {self.name}" if self.number else self.name

    @classmethod
    def of(cls, seat: Any, *, name: str | None = None) -> Person:
        """A seat (anything with ``number``, ``name`` and ``sex``) as a Person."""
        return cls(
            getattr(seat, "number", None),
            name if name is not None else seat.name,
            int(getattr(seat, "sex", 0) or 0),
        )

    @classmethod
    def of_event(cls, data: dict[str, Any], people: dict[int, Person]) -> Person | None:
        """Whom a logged decision was about (a strike, a modkill): the player the event names,
        as a seat may have changed hands since (strikes are the person's, not the seat's);
        else, for an event logged before it named them, the seat's holder in ``people``."""
        seat = data.get("seat")
        if data.get("name"):
            return cls(seat, str(data["name"]), int(data.get("sex") or 0))
        return people.get(seat)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def engine() -> Engine:
    return Engine(
        dirs=[str(ROOT)],
        loaders=[
            (
                "django.template.loaders.cached.Loader",
                [("gameplay.messages.PlainTextLoader", [str(ROOT)])],
            )
        ],
        autoescape=False,
        debug=True,  # syntax errors carry their line
        string_if_invalid=MISSING,
        builtins=["gameplay.templatetags.grammar"],
    )


def prepare(source: str) -> str:
    """Plain-text whitespace: a line of control tags only (``{% if %}``, ``{% endfor %}``…)
    leaves nothing; a line of other tags only leaves nothing when they render nothing; the
    file's trailing newline goes."""

    def line(m: re.Match[str]) -> str:
        tags = re.findall(_TAG, m.group(0))
        if all(_CONTROL.match(t) for t in tags):
            return "".join(tags)
        return "".join(tags) + _EMPTY_LINE_MARK + "\n"

    return _TAG_ONLY_LINE.sub(line, source).rstrip("\n")


class PlainTextLoader(FilesystemLoader):
    """The file system loader with :func:`prepare` applied (for ``{% include %}`` too)."""

    def get_contents(self, origin: Any) -> str:
        return prepare(super().get_contents(origin))


def _template(name: str) -> Template:
    try:
        return engine().get_template(f"{name}.txt")
    except TemplateDoesNotExist:
        raise MessageError(f"нет текста «{name}»") from None
    except TemplateSyntaxError as e:
        raise MessageError(_syntax_reason(e), _error_line(e, "")) from None


def names() -> list[str]:
    """Every message the project has (``audience/name``)."""
    return sorted(str(p.relative_to(ROOT).with_suffix("")) for p in ROOT.glob("*/*.txt"))


def render(name: str, **context: Any) -> str:
    """The message ``name`` («player/vote_accepted») rendered with ``context``."""
    return render_template(_template(name), context)


def refusal(err: RuleViolation) -> str:
    """The text of a typed refusal: ``refusals/<its text>`` rendered with its ``params``.
    A class without a text of its own reads its parent's (``InvalidCommand``'s, say)."""
    name = _refusal_name(type(err))
    if name is None:
        raise MessageError(f"нет текста «{err.text_name()}»")
    return render(name, **err.params)


#: The text each refusal class reads (:func:`_refusal_name`), by class.
_REFUSAL_NAMES: dict[type[RuleViolation], str | None] = {}


def _refusal_name(violation: type[RuleViolation]) -> str | None:
    """The text a refusal of class ``violation`` reads: its own, else its nearest parent's
    (the files ship with the code, so the answer is looked up once per class)."""
    if violation in _REFUSAL_NAMES:
        return _REFUSAL_NAMES[violation]
    name = None
    for cls in violation.__mro__:
        if not issubclass(cls, RuleViolation):
            break
        if (ROOT / f"{cls.text_name()}.txt").exists():
            name = cls.text_name()
            break
    _REFUSAL_NAMES[violation] = name
    return name


def clear_caches(*, templates: bool = True) -> None:
    """Forget what this process has cached about the texts: which text each refusal class
    reads and, unless ``templates`` is False, the compiled message templates (the engine
    and its cached loader). For a process whose text files change, or a measure of cold
    renders (bench/gmtext.py)."""
    _REFUSAL_NAMES.clear()
    if templates:
        engine.cache_clear()


def render_template(template: Template, context: dict[str, Any]) -> str:
    try:
        text = template.render(Context(context, autoescape=False))
    except MessageError:
        raise
    except Exception as e:  # a filter on a wrong value, say
        raise MessageError(f"текст не отрисовывается: {e}") from None
    missing = _MISSING_RE.search(text)
    if missing:
        raise MessageError(f"неизвестная переменная «{missing.group(1)}»")
    return _tidy(text)


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n") if line.strip() != _EMPTY_LINE_MARK]
    text = "\n".join(lines).replace(_EMPTY_LINE_MARK, "").strip()
    return re.sub(r"\n{3,}", "\n\n", text)


def _syntax_reason(e: TemplateSyntaxError) -> str:
    msg = str(e)
    if "Invalid block tag" in msg:
        tag = re.search(r"'([^']+)'", msg)
        return f"неизвестный или незакрытый тег «{tag.group(1) if tag else '?'}»"
    if "Unclosed tag" in msg:
        return "незакрытый тег {% … %}"
    if "Invalid filter" in msg:
        f = re.search(r"'([^']+)'", msg)
        return f"неизвестный фильтр «{f.group(1) if f else '?'}»"
    if "Could not parse" in msg:
        return "не удалось разобрать выражение в {{ … }}"
    return f"ошибка шаблона ({msg})"


def _error_line(e: TemplateSyntaxError, source: str) -> int:
    info = getattr(e, "template_debug", None)
    if info and info.get("line"):
        return int(info["line"])
    token = getattr(e, "token", None)
    if token is not None and getattr(token, "lineno", None):
        return int(token.lineno)
    return 0


# --- values the texts share ------------------------------------------------------------------


MOSCOW = ZoneInfo("Europe/Moscow")


def known_zone(name: str) -> ZoneInfo | None:
    """The IANA zone named ``name``, or None for anything that is not one (unknown, empty, a
    path, or a folder of the zone database such as «America», which raises an OSError)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def zone_of(name: str) -> ZoneInfo:
    """The zone named ``name``; an empty or unknown name is Moscow (a bad value never breaks a
    text)."""
    return known_zone(name or "Europe/Moscow") or MOSCOW


def zone_label(name: str, at: datetime | None = None) -> str:
    """A time zone as Russians name it, by its offset from Moscow at ``at`` (now by default):
    «МСК», «МСК+2», «МСК−1», «МСК+2:30». A zone that does not exist reads as Moscow."""
    at = at or datetime.now(MOSCOW)
    # An aware datetime always has an offset.
    diff = cast(timedelta, at.astimezone(zone_of(name)).utcoffset()) - cast(
        timedelta, at.astimezone(MOSCOW).utcoffset()
    )
    minutes = int(diff.total_seconds() // 60)
    if minutes == 0:
        return "МСК"
    h, m = divmod(abs(minutes), 60)
    return f"МСК{'+' if minutes > 0 else '−'}{h}" + (f":{m:02d}" if m else "")


def moment(dt: datetime, tz: str, fmt: str = "%d.%m %H:%M") -> str:
    """A moment in the game's time zone with that zone's name: «01.12 14:33 МСК»."""
    return f"{dt.astimezone(zone_of(tz)):{fmt}} {zone_label(tz, dt)}"


def when(dt: datetime | None, tz: str) -> str:
    """A deadline as players read it: «01.12 21:15 МСК», or the GM's decision when there is
    none."""
    if dt is None:
        return "решения ведущего"
    return moment(dt, tz)


def players_page_url() -> str:
    """The players' page (docs/players.md, served at /players/) at the deployment's public
    address (``PUBLIC_URL``); empty when the address is not configured."""
    base = getattr(settings, "PUBLIC_URL", "")
    return f"{base.rstrip('/')}/players/" if base else ""


def closes_in(left: timedelta) -> str:
    """«через 3 ч», «через 1 ч 30 мин», «через 45 мин» or «менее чем через минуту» (rounded
    down to whole minutes)."""
    minutes = max(0, int(left.total_seconds()) // 60)
    if minutes == 0:
        return "менее чем через минуту"
    hours, minutes = divmod(minutes, 60)
    parts = ([f"{hours} ч"] if hours else []) + ([f"{minutes} мин"] if minutes else [])
    return "через " + " ".join(parts)
