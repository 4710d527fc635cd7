"""Typed refusals: every rule a submission can break is a ``RuleViolation`` subclass.

A refusal says *what* was refused, never how it is worded: the class (``code``) and the facts
the text needs (``params``, keyword arguments). Its Russian text lives in the texts' home,
``templates/messages/refusals/<text>.txt`` (``text`` defaults to the class name in snake case),
and ``reason`` renders it through the renderer the ``gameplay`` app installs at start-up
(:func:`use_texts`; the rules themselves import no Django). The text is what the player or
the GM reads: it names the rule and the next step and nothing more (a refusal must never
reveal another player's role or action). ``rule`` is the rule reference of docs/rules.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

#: Renders a refusal's text; installed by ``gameplay.apps`` (``gameplay.messages.refusal``).
_texts: Callable[[RuleViolation], str] | None = None


def use_texts(render: Callable[[RuleViolation], str]) -> None:
    """Install the renderer of refusal texts (the gameplay app does, at start-up)."""
    global _texts
    _texts = render


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RuleViolation(Exception):
    """A submission or command the rules refuse. Nothing changes when one is raised."""

    rule: ClassVar[str] = ""
    #: The name of its text under templates/messages/refusals/ (default: the class, snake case).
    text: ClassVar[str] = ""

    def __init__(self, reason: str | None = None, **params: Any) -> None:
        self._reason = reason
        self.params = params
        super().__init__(reason or self.code)

    def __str__(self) -> str:
        return self.reason

    @property
    def code(self) -> str:
        return type(self).__name__

    @classmethod
    def text_name(cls) -> str:
        """``refusals/<text>``: the template its text renders from."""
        return f"refusals/{cls.text or _snake(cls.__name__)}"

    @property
    def reason(self) -> str:
        """The Russian text a person reads."""
        if self._reason is not None:
            return self._reason
        if _texts is not None:
            return _texts(self)
        return self.code  # no texts installed (the rules used on their own): the class says it


# --- who may act ---------------------------------------------------------------------------


class NotInGame(RuleViolation):
    """The sender has no seat in this game."""

    rule = "V8"


class DeadCannotAct(RuleViolation):
    """The sender is out of the game."""

    rule = "P7"


class PhaseNotOpen(RuleViolation):
    """The phase the submission is for has closed or not opened yet."""

    rule = "V7"


class WrongPhase(RuleViolation):
    """A day submission at night or a night one by day."""

    rule = "§2"


class GameNotRunning(RuleViolation):
    """The game has not started or is over."""

    rule = "§2"


# --- targets -------------------------------------------------------------------------------


class UnknownTarget(RuleViolation):
    """No seat of the game answers to the target given."""

    rule = "V8"


class TargetNotAlive(RuleViolation):
    """A night act aimed at a player who is out."""

    rule = "§4"


class SelfTargetForbidden(RuleViolation):
    """A night act aimed at its sender that §4 does not allow on oneself."""

    rule = "§4"


# --- day -----------------------------------------------------------------------------------


class SelfVote(RuleViolation):
    rule = "V1"


class VoteTargetNotAlive(RuleViolation):
    rule = "V1"


class EarlyVoteFinal(RuleViolation):
    """A change of an early vote from Day 3 on, while its target lives."""

    rule = "V6"


# --- night ---------------------------------------------------------------------------------


class ActionNotAvailable(RuleViolation):
    """A role act the sender's role does not have."""

    rule = "§4"


class RoleStrikeUsed(RuleViolation):
    """The mafia's one role strike of the game is spent."""

    rule = "§4"


class InvalidGuess(RuleViolation):
    """A role strike naming no role it may guess."""

    rule = "§4"


class HealRepeat(RuleViolation):
    """The doctor heals the player whose heal stood last night."""

    rule = "§4"


class ItemNotHeld(RuleViolation):
    rule = "§1"


class ItemSpent(RuleViolation):
    rule = "§1"


# --- setup and GM commands ------------------------------------------------------------------


class SetupError(RuleViolation):
    """A game setup (role counts, roster, seed) the rules cannot deal."""

    rule = "§1"


class NotEnoughPlayers(SetupError):
    """The players signed up are not as many as the roles."""


class TooFewPlayers(SetupError):
    """A default setup asked for fewer than four players."""


class NegativeRoleCount(SetupError):
    pass


class NoMafia(SetupError):
    pass


class SpecialRoleRepeated(SetupError):
    """More than one commissar, doctor or maniac."""


class TooFewOutsideMafia(SetupError):
    """Fewer than two players outside the mafia: the item draw needs them."""


class DecidedAtStart(SetupError):
    """Counts whose game is won before it starts (§7)."""


class ItemsUndealable(SetupError):
    """No draw can leave exactly one item with the mafia."""


class ItemDrawFailed(SetupError):
    """No accepted item draw within the draw limit (never seen: the limit is far)."""


class SeedNotUtf8(SetupError):
    pass


class BadRoster(SetupError):
    """A roster that is not distinct positive VK ids."""


class RosterSizeMismatch(SetupError):
    """A round's roster and the role counts differ in size; params ``players``, ``roles``."""


class InvalidCommand(RuleViolation):
    """A GM command the game's state does not allow."""

    rule = "G1"


class AlreadyOut(InvalidCommand):
    """A modkill of a player who is already out."""

    rule = "P5"


class ReplaceOnlyAlive(InvalidCommand):
    """A replacement of a player who is out."""

    rule = "P6"
