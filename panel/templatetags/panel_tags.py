"""Small template helpers for the GM panel."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import template

from gameplay.rules.roles import ACT_TITLES, ITEM_TITLES, ROLE_TITLES, Act, Item, Role

register = template.Library()


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
