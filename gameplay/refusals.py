"""The refusals of the services, the selectors and the panel that no rule of the game decides
(a command at the wrong moment, an unknown id, a malformed setting): typed, as the rules'
refusals are (:mod:`gameplay.rules.errors`). Each class says *what* was refused; its keyword
arguments are the facts its text needs, and its Russian text is
``templates/messages/refusals/<class name in snake case>.txt`` (rendered by
:func:`gameplay.messages.refusal`). They subclass the rules' ``InvalidCommand`` (a command that
cannot be done now), ``SetupError`` (a game setting that cannot be) or ``NotEnoughPlayers``, so
``except`` clauses and the panel's and the bot's handling see them as before.

``str()`` of one is its text (as it was when the text was the exception's message), so a log
line or ``pytest.raises(match=...)`` reads the words.
"""

from __future__ import annotations

from gameplay.rules.errors import (
    InvalidCommand,
    NotEnoughPlayers,
    PhaseNotOpen,
    RuleViolation,
    SetupError,
)


class _Worded:
    """``str()`` is the text a person reads."""

    def __str__(self) -> str:
        return self.reason  # type: ignore[attr-defined,no-any-return]


# --- commands that cannot be done now --------------------------------------------------------


class AlreadyPlaying(_Worded, InvalidCommand):
    pass


class AlreadyRunning(_Worded, InvalidCommand):
    pass


class AlreadySignedUp(_Worded, InvalidCommand):
    pass


class ChatAlreadyClosed(_Worded, InvalidCommand):
    pass


class ChatAlreadyOpen(_Worded, InvalidCommand):
    pass


class ChatBeingCreated(_Worded, InvalidCommand):
    pass


class ChatNotLinked(_Worded, InvalidCommand):
    pass


class ChatNumberImpossible(_Worded, InvalidCommand):
    pass


class ChatNumberMissing(_Worded, InvalidCommand):
    pass


class ChatOpenNoNewChat(_Worded, InvalidCommand):
    pass


class ChatOpensInRunningGame(_Worded, InvalidCommand):
    pass


class DealTooLate(_Worded, InvalidCommand):
    pass


class EditReasonMissing(_Worded, InvalidCommand):
    pass


class ExtendOnlyOpenPhase(_Worded, InvalidCommand):
    pass


class ExtensionNotMinutes(_Worded, InvalidCommand):
    pass


class ExtensionTooLong(_Worded, InvalidCommand):
    pass


class FlagAlreadyResolved(_Worded, InvalidCommand):
    pass


class GameAlreadyOver(_Worded, InvalidCommand):
    pass


class GameFinished(_Worded, InvalidCommand):
    pass


class GameNotInProgress(_Worded, InvalidCommand):
    pass


class ModkillNotForgivable(_Worded, InvalidCommand):
    pass


class NewRoundTooLate(_Worded, InvalidCommand):
    pass


class NightDeathNotAlive(_Worded, InvalidCommand):
    pass


class NoActivePhase(_Worded, InvalidCommand):
    pass


class NoSuchFlag(_Worded, InvalidCommand):
    pass


class NoSuchGame(_Worded, InvalidCommand):
    pass


class NoSuchSignup(_Worded, InvalidCommand):
    pass


class NoSuchStrike(_Worded, InvalidCommand):
    pass


class NoSuchThemeText(_Worded, InvalidCommand):
    pass


class NobodyAdded(_Worded, InvalidCommand):
    pass


class NotAChat(_Worded, InvalidCommand):
    pass


class NotDealtYet(_Worded, InvalidCommand):
    pass


class NotSignedUp(_Worded, InvalidCommand):
    pass


class NotVkUser(_Worded, InvalidCommand):
    pass


class NothingToRetry(_Worded, InvalidCommand):
    pass


class PhaseChanged(_Worded, InvalidCommand):
    pass


class PlayerLineBad(_Worded, InvalidCommand):
    pass


class PlayerLineDuplicate(_Worded, InvalidCommand):
    pass


class PlayerListEmpty(_Worded, InvalidCommand):
    pass


class RecruitmentClosed(_Worded, InvalidCommand):
    pass


class RelayEmpty(_Worded, InvalidCommand):
    pass


class RemovalWhileRunning(_Worded, InvalidCommand):
    pass


class ReplacementNotNow(_Worded, InvalidCommand):
    pass


class ScreenName(_Worded, InvalidCommand):
    pass


class SeatAlreadyOut(_Worded, InvalidCommand):
    pass


class SettingsFrozen(_Worded, InvalidCommand):
    pass


class SettingsNotChangeable(_Worded, InvalidCommand):
    pass


class SignupClosed(_Worded, InvalidCommand):
    pass


class StoryNotNow(_Worded, InvalidCommand):
    pass


class StoryTooLong(_Worded, InvalidCommand):
    pass


class StrikeAlreadyForgiven(_Worded, InvalidCommand):
    pass


class ThemeTextBroken(_Worded, InvalidCommand):
    pass


class ThemeTextTooLong(_Worded, InvalidCommand):
    pass


class UnknownFlagDecision(_Worded, InvalidCommand):
    pass


class VkUserMissing(_Worded, InvalidCommand):
    pass


class VkUserUnreadable(_Worded, InvalidCommand):
    pass


class WithdrawTooLate(_Worded, InvalidCommand):
    pass


class NoSuchDelivery(_Worded, InvalidCommand):
    pass


class ChatCreationNotRetried(_Worded, InvalidCommand):
    pass


class DeliveryStillQueued(_Worded, InvalidCommand):
    pass


class AlreadyDelivered(_Worded, InvalidCommand):
    pass


class RoundNotNeeded(_Worded, InvalidCommand):
    pass


class AlreadyDealt(_Worded, InvalidCommand):
    pass


class NobodyToRemind(_Worded, InvalidCommand):
    pass


class RemindedRecently(_Worded, InvalidCommand):
    pass


class CountNotDay(_Worded, InvalidCommand):
    pass


class ReopenReasonMissing(_Worded, InvalidCommand):
    pass


class NightNotUnderReview(_Worded, InvalidCommand):
    pass


class FlagDecisionMissing(_Worded, InvalidCommand):
    pass


class StartTooLate(_Worded, InvalidCommand):
    pass


# --- settings that cannot be -----------------------------------------------------------------


class CountsLocked(_Worded, SetupError):
    pass


class EarlyCloseRuleUnknown(_Worded, SetupError):
    pass


class GameNameMissing(_Worded, SetupError):
    pass


class GmPagesInvalid(_Worded, SetupError):
    pass


class ItemTwice(_Worded, SetupError):
    pass


class NoGm(_Worded, SetupError):
    pass


class NoSuchTheme(_Worded, SetupError):
    pass


class NotStaff(_Worded, SetupError):
    pass


class PhaseLengthOutOfRange(_Worded, SetupError):
    pass


class RemindersOutOfRange(_Worded, SetupError):
    pass


class UnknownTimeZone(_Worded, SetupError):
    pass


class TopicTaken(_Worded, SetupError):
    pass


class SpectatorChatTaken(_Worded, SetupError):
    pass


class CountsAfterDeal(_Worded, SetupError):
    pass


# --- the roster and the roles ----------------------------------------------------------------


class RosterMismatch(_Worded, NotEnoughPlayers):
    pass


class SeatNumbersInvalid(_Worded, NotEnoughPlayers):
    pass


# --- refusals of the services with a rule of their own ------------------------------------------


class StaleButton(_Worded, RuleViolation):
    """A button of a phase that is over (or a night re-opened for the mafia's shot only)."""

    rule = "V7"


class NotMafia(_Worded, RuleViolation):
    """A «!» message from a player who is not a living mafia member."""

    rule = "G5"


class SpectatorRefused(_Worded, RuleViolation):
    """Not let into the spectator chat; ``bar``: why (``SpectatorBar``, or ``closed``)."""

    rule = "G6"


class NoOpenPhase(_Worded, PhaseNotOpen):
    """«Напомнить» with no open phase."""


class DiscardNotConfirmed(_Worded, InvalidCommand):
    """Removing this player would discard the deal, which the GM did not confirm."""


class OutcomeChanged(_Worded, InvalidCommand):
    """The close the GM confirmed would now do something else (a vote or an action came in)."""
