"""Refusals of play with a rule of their own: a stale button (V7), the mafia's channel (G5), the
spectator chat (G6), no open phase."""

from __future__ import annotations

from gameplay.rules.errors import PhaseNotOpen, RuleViolation

from .base import Worded


class TargetMissing(Worded, RuleViolation):
    """A night command without a player to aim it at."""


class VoteTargetMissing(Worded, RuleViolation):
    """A vote without a player to vote for."""


class StaleButton(Worded, RuleViolation):
    """A button of a phase that is over (or a night re-opened for the mafia's shot only)."""

    rule = "V7"


class NotMafia(Worded, RuleViolation):
    """A «!» message from a player who is not a living mafia member."""

    rule = "G5"


class SpectatorRefused(Worded, RuleViolation):
    """Not let into the spectator chat; ``bar``: why (``SpectatorBar``, or ``closed``)."""

    rule = "G6"


class NoOpenPhase(Worded, PhaseNotOpen):
    """«Напомнить» with no open phase."""
