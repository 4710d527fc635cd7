"""What a GM's text sees (:mod:`gameplay.gmtext`, the GM language): the message's context
copied as plain data — strings, numbers, :class:`~gameplay.messages.Person`, and read-only
lists and mappings of them (:class:`GmList`, :class:`GmMap`) — so no model, no theme object and
no list whose methods (``pop``, ``clear``) would change the message around the text. Walking a
whole list or mapping (comparing, searching, printing it) is paid from the render's budget."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import Enum
from typing import Any

from gameplay.gmtext import NODE_STEPS, current_budget
from gameplay.messages import Person

#: How deep :func:`data_of` copies nested lists and mappings.
_DATA_DEPTH = 4


class _Drop:
    """What :func:`data_of` leaves out."""


_DROP = _Drop()


def _pay_per_item(size: int) -> None:
    """Charge the render under way (if any) for walking ``size`` items."""
    spent = current_budget()
    if spent is not None:
        spent.charge(NODE_STEPS * size)


class GmList(tuple[Any, ...]):
    """A list of the message as a text sees it: read-only, and whatever walks it whole —
    comparing it, searching it, printing it — pays for each item (an ``if`` or a filter is
    charged as one step, and would otherwise hide a walk of the whole list)."""

    __slots__ = ()

    def _walked(self) -> None:
        _pay_per_item(len(self))

    def __eq__(self, other: object) -> bool:
        self._walked()
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._walked()
        return tuple.__ne__(self, other)

    def __lt__(self, other: tuple[Any, ...]) -> bool:
        self._walked()
        return tuple.__lt__(self, other)

    def __le__(self, other: tuple[Any, ...]) -> bool:
        self._walked()
        return tuple.__le__(self, other)

    def __gt__(self, other: tuple[Any, ...]) -> bool:
        self._walked()
        return tuple.__gt__(self, other)

    def __ge__(self, other: tuple[Any, ...]) -> bool:
        self._walked()
        return tuple.__ge__(self, other)

    def __contains__(self, item: object) -> bool:
        self._walked()
        return tuple.__contains__(self, item)

    def __repr__(self) -> str:
        self._walked()
        return tuple.__repr__(self)

    __str__ = __repr__
    __hash__ = tuple.__hash__


class GmMap(Mapping[str, Any]):
    """A mapping of the message (a seat's facts, a tally line) as a text sees it: read-only,
    and printing or comparing it pays for each key."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        _pay_per_item(len(self._items))
        return self._items == (other._items if isinstance(other, GmMap) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        _pay_per_item(len(self._items))
        return repr(self._items)

    __str__ = __repr__


def data_of(context: Any) -> dict[str, Any]:
    """The message's context as a GM's text sees it: plain data, read-only (lists become
    :class:`GmList`, dicts :class:`GmMap`), and nothing else (no theme, no model, no list's
    methods)."""
    flat = context.flatten() if hasattr(context, "flatten") else dict(context)
    out = {}
    for key, value in flat.items():
        if isinstance(key, str) and not key.startswith("_"):
            data = _data(value, 0)
            if data is not _DROP:
                out[key] = data
    return out


def _data(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, bool | int | float) and not isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return str(value)  # a marked-safe string, an enum's value: a plain one
    if isinstance(value, Person):
        return value
    if depth >= _DATA_DEPTH:
        return _DROP
    if isinstance(value, list | tuple):
        items = (_data(v, depth + 1) for v in value)
        return GmList(v for v in items if v is not _DROP)
    if isinstance(value, Mapping):
        pairs = ((k, _data(v, depth + 1)) for k, v in value.items() if isinstance(k, str))
        return GmMap({k: v for k, v in pairs if v is not _DROP})
    return _DROP
