"""Night input: what players send at night (RULES.md §4), each submission validated as it
arrives, and the standing submissions a night resolves on (rules/night_resolution.py, §5).

Which acts and targets are allowed is decided in rules/targets.py (the bot's buttons offer
the same); ``validate_action`` adds the actor's checks (V8, P7) and the role strike's guess.
The doctor's "accepted heal the night before" (``NightContext.last_heal_target``) is the heal
that stood at the previous night's close, whether or not it took effect (blocked, or the
doctor died in step 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidGuess
from .roles import GUESSABLE_ROLES, Act, Item, Role
from .state import Table
from .targets import NightContext, require_act, require_target
from .validation import require_living_actor

__all__ = ["NightContext", "NightInput", "Submission", "validate_action"]


@dataclass(frozen=True, slots=True)
class Submission:
    """One night action as it stands: who sent what at whom."""

    actor: int
    act: Act
    target: int
    guess: Role | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, object] = {"actor": self.actor, "act": self.act.value, "target": self.target}
        if self.guess is not None:
            d["guess"] = self.guess.value
        return d


def validate_action(
    table: Table,
    ctx: NightContext,
    actor: int,
    act: Act,
    target: int,
    guess: Role | None = None,
) -> Submission:
    """Check one night action against §4 and P7; raise a ``RuleViolation`` or accept it."""
    seat = require_living_actor(table, actor)
    require_act(seat, act, role_strike_used=ctx.role_strike_used)
    if act is Act.ROLE_STRIKE:
        if guess not in GUESSABLE_ROLES:
            raise InvalidGuess()
    else:
        guess = None
    require_target(table, ctx, actor, act, target)
    return Submission(actor=actor, act=act, target=target, guess=guess)


@dataclass(frozen=True, slots=True)
class NightInput:
    """The submissions standing at the night's close (later ones already replaced earlier)."""

    number: int
    #: Role actions (check, commissar shot, heal, maniac shot) by actor.
    role_actions: Mapping[int, Submission] = field(default_factory=dict)
    mafia_shot: Submission | None = None
    role_strike: Submission | None = None
    items: Mapping[Item, Submission] = field(default_factory=dict)

    @classmethod
    def from_submissions(cls, number: int, submissions: Iterable[Submission]) -> NightInput:
        """Build the standing actions from submissions in arrival order (later replaces)."""
        role_actions: dict[int, Submission] = {}
        items: dict[Item, Submission] = {}
        mafia_shot = role_strike = None
        for s in submissions:
            if s.act is Act.MAFIA_SHOT:
                mafia_shot = s
            elif s.act is Act.ROLE_STRIKE:
                role_strike = s
            elif s.act.item is not None:
                items[s.act.item] = s
            else:
                role_actions[s.actor] = s
        return cls(number, role_actions, mafia_shot, role_strike, items)
