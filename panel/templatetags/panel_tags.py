"""Small template helpers for the GM panel."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django import template
from django.db.models import Field
from django.utils import dateformat, timezone

from gameplay import grammar, messages
from gameplay.rules.facts import Fact, GmEdit, edit_from, line_from
from gameplay.rules.roles import ACT_TITLES, ITEM_TITLES, ROLE_TITLES, Act, Item, Role
from gameplay.templatetags import grammar as grammar_tags

register = template.Library()


@register.filter
def count(n: Any, phrase: str) -> str:
    """«21 живой игрок», «3 голоса», «5 записей»: the number and the agreed phrase."""
    return grammar.count(int(n or 0), phrase)


@register.filter
def g(person: Any, words: str) -> str:
    """``{{ seat|g:"казнён/казнена/казнь:" }}``: the word for the player's gender (VK's
    ``sex``), the neutral one when VK did not tell it — the messages' own ``{% g %}``."""
    male, female, neutral = words.split("/")
    return grammar_tags.g(person, male, female, neutral)


@register.filter
def name_case(seat: Any, case_name: str) -> str:
    """A seat's name in a case, for its player's gender: «Снять Марию Ефремову с игры?»."""
    return grammar.decline_name(seat.name, case_name, int(getattr(seat, "sex", 0) or 0))


@register.filter
def state(seat: Any) -> str:
    """A seat's state for the player's gender: «жива», «казнён», «убийство ночью»…"""
    from panel.labels import seat_state

    return seat_state(seat)


@register.filter
def hours(value: timedelta | None) -> str:
    """A duration as «24 ч» / «1 ч 30 мин»."""
    if not value:
        return "—"
    minutes = int(value.total_seconds() // 60)
    h, m = divmod(minutes, 60)
    if h and m:
        return f"{h} ч {m} мин"
    return f"{h} ч" if h else f"{m} мин"


@register.filter
def role_title(value: str) -> str:
    try:
        return ROLE_TITLES[Role(value)]
    except ValueError:
        return value or ""


@register.filter
def item_title(value: str) -> str:
    try:
        return ITEM_TITLES[Item(value)]
    except ValueError:
        return value or ""


@register.filter
def act_title(value: str) -> str:
    try:
        return ACT_TITLES[Act(value)]
    except ValueError:
        return value or ""


@register.filter
def seat_no(value: Any) -> str:
    """7 → «№7»; nothing → «—»."""
    return f"№{value}" if value not in (None, "") else "—"


@register.filter
def flag_status(value: str) -> str:
    """A moderation flag's status as the flags page names it: «принято решение»."""
    from gameplay.models import FlagStatus

    try:
        return FlagStatus(value).label.lower()
    except ValueError:
        return value or ""


@register.filter
def game_field(name: str) -> str:
    """A game setting's name as its form calls it: «длина дня»."""
    from django.core.exceptions import FieldDoesNotExist

    from gameplay.models import Game

    try:
        return str(cast("Field[Any, Any]", Game._meta.get_field(name)).verbose_name)
    except FieldDoesNotExist:
        return name


@register.filter
def slot_title(slot: str) -> str:
    """A theme text's slot as the texts page names it: «Начало дня»."""
    from gameplay import themes

    return themes.SLOTS.get(slot, "") or "текст"


@register.filter
def seats(values: Any) -> str:
    """[3, 5] → «№3, №5»; empty → «—»."""
    return ", ".join(f"№{v}" for v in values or []) or "—"


@register.filter
def get(mapping: Any, key: Any) -> Any:
    try:
        return mapping.get(key) if hasattr(mapping, "get") else mapping[key]
    except (KeyError, IndexError, TypeError):
        return None


@register.filter
def winner_title(value: str) -> str:
    from gameplay.rules import Winner

    try:
        return Winner(value).title
    except ValueError:
        return value or ""


@register.filter
def attr_name(seat: Any) -> str:
    return getattr(seat, "name", "") or ""


@register.filter
def outbox_kind(value: str) -> str:
    from panel.labels import outbox_kind_label

    return outbox_kind_label(value)


@register.filter
def seat_of(number: Any, names: Any) -> str:
    """A seat number as «№7 Анна» from a number → name mapping."""
    if number in (None, ""):
        return "—"
    name = names.get(number) if hasattr(names, "get") else ""
    return f"№{number} {name}".strip() if name else f"№{number}"


@register.filter
def zone_label(name: str, at: datetime | None = None) -> str:
    """A time zone as Russians name it, by its offset from Moscow: «МСК», «МСК+2», «МСК−1»."""
    return messages.zone_label(name, at or timezone.now())


@register.filter
def local_time(value: datetime | None, zone: str) -> str:
    """A moment in the game's time zone: «01.12 14:33 МСК»."""
    return "—" if value is None else messages.moment(value, zone)


@register.filter
def local_seconds(value: datetime | None, zone: str) -> str:
    """A moment to the second, for the log: «01.12 14:33:05 МСК»."""
    return "—" if value is None else messages.moment(value, zone, "%d.%m %H:%M:%S")


@register.filter
def local_date(value: datetime | None, zone: str = "") -> str:
    """A moment with its year, for what outlives a game: «1 декабря 2026, 14:33 МСК»."""
    if value is None:
        return "—"
    local = timezone.localtime(value, messages.zone_of(zone))
    return f"{dateformat.format(local, 'j E Y, H:i')} {messages.zone_label(zone, value)}"


@register.filter
def chat_name(peer_id: Any, title: str = "") -> str:
    """A chat's peer id as «беседа «ЗЗ — игра»» or «беседа №7»."""
    from panel.labels import chat_label

    try:
        return chat_label(int(peer_id), title or "")
    except (TypeError, ValueError):
        return "—"


@register.simple_tag
def who(number: Any, seats: Any, case_name: str = "nomn", role: bool = True) -> str:
    """A seat in an explanation, from a number → Seat mapping: «№3 Вера Ильина (комиссар)»,
    the name in ``case_name`` for its player's gender («защищает №3 Веру Ильину»), the role
    left out with ``role=False``; «№3» for a seat the mapping does not hold."""
    if number in (None, ""):
        return "—"
    seat = seats.get(number) if hasattr(seats, "get") else None
    if seat is None:
        return f"№{number}"
    name = grammar.decline_name(seat.name, case_name, int(getattr(seat, "sex", 0) or 0))
    title = role_title(seat.role).lower() if role and seat.role else ""
    return f"№{number} {name}" + (f" ({title})" if title else "")


@register.simple_tag
def explain(line: Any, seats: Any) -> str:
    """A line of the rules' explanation (a day's close, a night step) or a GM edit of a night,
    in the GM's words: ``templates/panel/explain/<code>.txt`` (an edit: ``gm_edit.txt``) with
    the line as ``f`` and ``seats`` (number → Seat) to name the players. The line may be the
    rules' object or its stored dict; a string (stored before facts) is shown as it is."""
    from panel import flash

    if isinstance(line, dict):
        line = line_from(line) if "code" in line else edit_from(line)
    if isinstance(line, Fact):
        name = line.code.value
    elif isinstance(line, GmEdit):
        name = "gm_edit"
    else:
        return str(line)
    return flash.render_line(f"panel/explain/{name}.txt", {"f": line, "seats": seats or {}})
