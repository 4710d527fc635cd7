"""The rights (scopes) of a community token, as VK numbers them.

A community token is created in the community's settings ("Работа с API") with some of these
rights ticked; ``groups.getTokenPermissions`` reports them as a bit mask and a list. A method
that needs a right the token lacks is refused with error 15 ("Access denied: no access to call
this method", VK's answer to a token without the scope: e.g. ``messages.send`` without
``messages``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: VK's bits of the community token rights (dev.vk.com, "Права доступа для токена сообщества").
SCOPE_BITS: dict[str, int] = {
    "stories": 1,
    "photos": 4,
    "app_widget": 64,
    "messages": 4096,
    "docs": 131072,
    "manage": 262144,
}
#: What a community token has unless told otherwise (what the bot needs, and the usual extras).
DEFAULT_SCOPES: frozenset[str] = frozenset({"messages", "manage", "photos", "docs"})


def parse_scopes(value: str | Iterable[str] | None) -> frozenset[str]:
    """Scopes from ``"messages,manage"`` or a list (None: :data:`DEFAULT_SCOPES`); ValueError
    naming an unknown one. An empty string or list is a token without rights."""
    if value is None:
        return DEFAULT_SCOPES
    items = value.split(",") if isinstance(value, str) else list(value)
    scopes = set()
    for item in items:
        if not isinstance(item, str):
            raise ValueError("scopes should be names, e.g. messages,manage")
        name = item.strip().lower()
        if not name:
            continue
        if name not in SCOPE_BITS:
            known = ", ".join(SCOPE_BITS)
            raise ValueError(f"unknown community token scope {name!r} (known: {known})")
        scopes.add(name)
    return frozenset(scopes)


def mask(scopes: Iterable[str]) -> int:
    return sum(SCOPE_BITS[name] for name in set(scopes))


def token_permissions(scopes: Iterable[str]) -> dict[str, Any]:
    """The answer of ``groups.getTokenPermissions``: ``{"mask", "permissions": [{setting,
    name}]}``, in the order of the bits."""
    owned = set(scopes)
    return {
        "mask": mask(owned),
        "permissions": [
            {"setting": bit, "name": name} for name, bit in SCOPE_BITS.items() if name in owned
        ],
    }
