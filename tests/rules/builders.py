"""Builders for the rules tests: tables and nights written the way RULES.md talks about them.

Seats are numbered from 1 in the order the roles are given. Night actions are tuples
``(actor, act, target)`` or ``(actor, "role_strike", target, guess)`` and go through
``validate_action`` first, as the bot's submissions do, so a test that sets up an illegal
action fails loudly instead of silently testing nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from gameplay.rules import (
    Act,
    Item,
    NightContext,
    NightInput,
    NightResolution,
    Role,
    SeatState,
    Table,
    resolve_night,
    validate_action,
)

M = Role.MAFIA
C = Role.COMMISSAR
D = Role.DOCTOR
K = Role.MANIAC
T = Role.CIVILIAN

CYRILLIC = re.compile(r"[А-Яа-яЁё]")


def make_table(
    *roles: Role,
    dead: Iterable[int] = (),
    items: Mapping[Item, int] | None = None,
    used: Iterable[Item] = (),
    strikes: Mapping[int, int] | None = None,
) -> Table:
    """A table with seats 1..len(roles); ``items`` maps an item to its holder's seat."""
    dead_set = set(dead)
    used_set = set(used)
    holder = {seat: item for item, seat in (items or {}).items()}
    strikes = strikes or {}
    return Table.of(
        SeatState(
            number=n,
            role=role,
            alive=n not in dead_set,
            strikes=strikes.get(n, 0),
            item=holder.get(n),
            item_used=holder.get(n) in used_set,
        )
        for n, role in enumerate(roles, start=1)
    )


#: The standard night table: 1 and 2 mafia, 3 commissar, 4 doctor, 5 maniac, 6–10 civilians;
#: 6 holds the clock, 7 the red button, 8 the book. Two mafia against eight others: a few deaths
#: never end the game, so each test sees the step it is about.
STANDARD_ROLES = (M, M, C, D, K, T, T, T, T, T)
STANDARD_ITEMS = {Item.CLOCK: 6, Item.RED_BUTTON: 7, Item.BOOK: 8}


def standard_table(
    *,
    items: Mapping[Item, int] | None = None,
    dead: Iterable[int] = (),
    strikes: Mapping[int, int] | None = None,
) -> Table:
    return make_table(
        *STANDARD_ROLES,
        items=STANDARD_ITEMS if items is None else items,
        dead=dead,
        strikes=strikes,
    )


def run_night(
    table: Table,
    *actions: tuple,
    number: int = 1,
    role_strike_used: bool = False,
    last_heal_target: int | None = None,
) -> NightResolution:
    """Validate each action in arrival order, then resolve the night."""
    ctx = NightContext(number, role_strike_used, last_heal_target)
    subs = []
    for action in actions:
        actor, act, target, *rest = action
        guess = Role(rest[0]) if rest else None
        subs.append(validate_action(table, ctx, actor, Act(act), target, guess))
    return resolve_night(table, NightInput.from_submissions(number, subs))
