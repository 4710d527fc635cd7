"""Refusals of play with a rule of their own: a stale button (V7), the mafia's channel (G5), the
spectator chat (G6), no open phase."""

from __future__ import annotations

from gameplay.rules.errors import (
    ActionNotAvailable,
    DeadCannotAct,
    PhaseNotOpen,
    RuleViolation,
    WrongPhase,
)


class TargetMissing(RuleViolation):
    """A night command without a player to aim it at."""


class VoteTargetMissing(RuleViolation):
    """A vote without a player to vote for."""


class StaleButton(RuleViolation):
    """A button of a phase that is over (or a night re-opened for the mafia's shot only)."""

    rule = "V7"


class NotMafia(RuleViolation):
    """A «!» message from a player who is not a living mafia member."""

    rule = "G5"


class SpectatorRefused(RuleViolation):
    """Not let into the spectator chat; ``bar``: why (``SpectatorBar``, or ``closed``)."""

    rule = "G6"


class NoOpenPhase(PhaseNotOpen):
    """«Напомнить» with no open phase."""


class OutOfGame(DeadCannotAct):
    """A player who is out writes a game command: what being out means, and thanks."""


class VoteAtNight(WrongPhase):
    """A vote by night: when voting opens, and what can be done now."""


class ActByDay(WrongPhase):
    """A night action by day: when it is taken, and what can be done now."""


class NoShot(ActionNotAvailable):
    """«выстрел» from a role without a shot."""


class NightUnderReview(PhaseNotOpen):
    """A night action after the night closed, while the GM reviews its result."""


class NightReopenedForMafiaShot(PhaseNotOpen):
    """Another act while the GM has re-opened the night for the mafia's shot only (G2)."""
