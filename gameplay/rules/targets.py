"""What a player may send, and at whom (RULES.md §4 at night, V1 by day): the one answer the
rules' validation and the bot's buttons both use.

``validate_action`` (rules/night.py) and ``validate_vote`` (rules/day.py) refuse, with the
reason, what :func:`require_act`, :func:`require_target` and :func:`require_vote_target` here
refuse; :func:`night_acts`, :func:`valid_targets` and :func:`vote_targets` list exactly what
they let through, so the buttons never offer what the rules would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .errors import (
    ActionNotAvailable,
    HealRepeat,
    ItemNotHeld,
    ItemSpent,
    RoleStrikeUsed,
    RuleViolation,
    SelfTargetForbidden,
    SelfVote,
    TargetNotAlive,
    VoteTargetNotAlive,
)
from .roles import ROLE_ACTS, SELF_TARGET_ALLOWED, Act
from .state import SeatState, Table
from .validation import require_living_actor


@dataclass(frozen=True, slots=True)
class NightContext:
    """What validation needs beyond the table."""

    number: int
    role_strike_used: bool = False
    #: The target of the doctor's heal that stood at the previous night's close.
    last_heal_target: int | None = None


# --- night ---------------------------------------------------------------------------------


def require_act(seat: SeatState, act: Act, *, role_strike_used: bool) -> None:
    """§4: ``act`` is the seat's to send: its item while unused, or an act of its role (the
    mafia's role strike while the game has not spent it); a ``RuleViolation`` says why not."""
    item = act.item
    if item is not None:
        if seat.item is not item:
            raise ItemNotHeld()
        if seat.item_used:
            raise ItemSpent()
    elif act not in ROLE_ACTS[seat.role]:
        raise ActionNotAvailable()
    if act is Act.ROLE_STRIKE and role_strike_used:
        raise RoleStrikeUsed()


def require_target(table: Table, ctx: NightContext, actor: int, act: Act, target: int) -> None:
    """§4: ``target`` may receive ``act`` from ``actor``: a seat of the game (V8), alive, not
    the sender unless the act may be aimed at oneself, not the doctor's previous heal."""
    target_seat = table.seat(target)
    if target == actor and act not in SELF_TARGET_ALLOWED:
        raise SelfTargetForbidden()
    if not target_seat.alive:
        raise TargetNotAlive()
    if act is Act.HEAL and ctx.last_heal_target is not None and target == ctx.last_heal_target:
        raise HealRepeat()


def night_acts(seat: SeatState, *, role_strike_used: bool) -> list[Act]:
    """Everything ``seat`` may send tonight, in ``Act`` order (its role's acts, then its item):
    exactly the acts :func:`require_act` lets through. Empty for a seat that is out."""
    if not seat.alive:
        return []
    out = []
    for act in Act:
        try:
            require_act(seat, act, role_strike_used=role_strike_used)
        except RuleViolation:
            continue
        out.append(act)
    return out


def valid_targets(table: Table, ctx: NightContext, actor: int, act: Act) -> list[int]:
    """The seats ``actor`` may aim ``act`` at tonight, in seat order: exactly those
    ``validate_action`` accepts (the buttons offer these and no others; any guess of a role
    strike is the guess's business, not the target's). Empty when the act is not the actor's
    to send."""
    try:
        seat = require_living_actor(table, actor)
        require_act(seat, act, role_strike_used=ctx.role_strike_used)
    except RuleViolation:
        return []
    out = []
    for target in table.alive:
        try:
            require_target(table, ctx, actor, act, target.number)
        except RuleViolation:
            continue
        out.append(target.number)
    return out


# --- day -----------------------------------------------------------------------------------


class Seated(Protocol):
    """A seat as :func:`vote_targets` reads it: the rules' ``SeatState`` or a stored seat."""

    @property
    def number(self) -> int | None: ...

    @property
    def alive(self) -> bool: ...


S = TypeVar("S", bound=Seated)


def require_vote_target(table: Table, voter: int, target: int) -> None:
    """V1: a vote goes to a seat of the game (V8), not the voter's own, and a living one."""
    target_seat = table.seat(target)
    if target == voter:
        raise SelfVote()
    if not target_seat.alive:
        raise VoteTargetNotAlive()


def vote_targets(seats: Iterable[S], voter: int | None) -> list[S]:
    """Whom ``voter`` (a seat number) may vote for, in the order given: every living seat but
    their own — exactly the targets :func:`require_vote_target` accepts."""
    return [s for s in seats if s.alive and s.number != voter]
