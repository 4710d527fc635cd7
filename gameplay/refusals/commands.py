"""Commands that cannot be done now (``InvalidCommand``): the wrong moment, an unknown id."""

from __future__ import annotations

from typing import Any

from gameplay.rules.errors import InvalidCommand

from .base import Worded


class AlreadyPlaying(Worded, InvalidCommand):
    pass


class AlreadyRunning(Worded, InvalidCommand):
    pass


class ExportNotStarted(Worded, InvalidCommand):
    """The export of a game that has not started (there is no play to write down)."""


class AlreadySignedUp(Worded, InvalidCommand):
    pass


class ChatAlreadyClosed(Worded, InvalidCommand):
    pass


class ChatAlreadyOpen(Worded, InvalidCommand):
    pass


class ChatBeingCreated(Worded, InvalidCommand):
    pass


class ChatNotLinked(Worded, InvalidCommand):
    pass


class ChatNumberImpossible(Worded, InvalidCommand):
    pass


class ChatNumberMissing(Worded, InvalidCommand):
    pass


class ChatOpenNoNewChat(Worded, InvalidCommand):
    pass


class ChatOpensInRunningGame(Worded, InvalidCommand):
    pass


class DealTooLate(Worded, InvalidCommand):
    pass


class EditReasonMissing(Worded, InvalidCommand):
    pass


class ExtendOnlyOpenPhase(Worded, InvalidCommand):
    pass


class ExtensionNotMinutes(Worded, InvalidCommand):
    pass


class ExtensionTooLong(Worded, InvalidCommand):
    pass


class FlagAlreadyResolved(Worded, InvalidCommand):
    pass


class GameAlreadyOver(Worded, InvalidCommand):
    pass


class GameFinished(Worded, InvalidCommand):
    pass


class GameNotInProgress(Worded, InvalidCommand):
    pass


class ModkillNotForgivable(Worded, InvalidCommand):
    pass


class NewRoundTooLate(Worded, InvalidCommand):
    pass


class NightDeathNotAlive(Worded, InvalidCommand):
    pass


class NoActivePhase(Worded, InvalidCommand):
    pass


class NoSuchFlag(Worded, InvalidCommand):
    pass


class NoSuchGame(Worded, InvalidCommand):
    pass


class NoSuchSignup(Worded, InvalidCommand):
    pass


class NoSuchStrike(Worded, InvalidCommand):
    pass


class NoSuchThemeText(Worded, InvalidCommand):
    pass


class NobodyAdded(Worded, InvalidCommand):
    pass


class PlayerAlreadyListed(Worded, InvalidCommand):
    """The GM adds a VK user who is already among the players or in the reserve."""


class NotAChat(Worded, InvalidCommand):
    pass


class NotDealtYet(Worded, InvalidCommand):
    pass


class NotSignedUp(Worded, InvalidCommand):
    pass


class NotVkUser(Worded, InvalidCommand):
    pass


class NothingToRetry(Worded, InvalidCommand):
    pass


class PhaseChanged(Worded, InvalidCommand):
    pass


class PlayerLineBad(Worded, InvalidCommand):
    pass


class PlayerLineDuplicate(Worded, InvalidCommand):
    pass


class PlayerListEmpty(Worded, InvalidCommand):
    pass


class RecruitmentClosed(Worded, InvalidCommand):
    pass


class RelayEmpty(Worded, InvalidCommand):
    pass


class RemovalWhileRunning(Worded, InvalidCommand):
    pass


class ReplacementNotNow(Worded, InvalidCommand):
    pass


class ScreenName(Worded, InvalidCommand):
    pass


class SeatAlreadyOut(Worded, InvalidCommand):
    pass


class SettingsFrozen(Worded, InvalidCommand):
    pass


class SettingsNotChangeable(Worded, InvalidCommand):
    pass


class SignupClosed(Worded, InvalidCommand):
    pass


class StoryNotNow(Worded, InvalidCommand):
    pass


class StoryTooLong(Worded, InvalidCommand):
    pass


class StrikeAlreadyForgiven(Worded, InvalidCommand):
    pass


class ThemeTextBroken(Worded, InvalidCommand):
    pass


class ThemeTextTooLong(Worded, InvalidCommand):
    pass


class UnknownFlagDecision(Worded, InvalidCommand):
    pass


class VkUserMissing(Worded, InvalidCommand):
    pass


class VkUserUnreadable(Worded, InvalidCommand):
    pass


class WithdrawTooLate(Worded, InvalidCommand):
    pass


class NoSuchDelivery(Worded, InvalidCommand):
    pass


class ChatCreationNotRetried(Worded, InvalidCommand):
    pass


class DeliveryStillQueued(Worded, InvalidCommand):
    pass


class AlreadyDelivered(Worded, InvalidCommand):
    pass


class RoundNotNeeded(Worded, InvalidCommand):
    pass


class AlreadyDealt(Worded, InvalidCommand):
    pass


class NobodyToRemind(Worded, InvalidCommand):
    pass


class RemindedRecently(Worded, InvalidCommand):
    pass


class CountNotDay(Worded, InvalidCommand):
    pass


class CountTooSoon(Worded, InvalidCommand):
    """A player asked for a vote count within minutes of the last one in that topic
    (``last``, ``next``: when it was posted and when the next may be asked for)."""


class ReopenReasonMissing(Worded, InvalidCommand):
    pass


class ModkillReasonMissing(Worded, InvalidCommand):
    """A modkill without a reason: the player is told why they are out (P5), so there must be
    one."""


class NightNotUnderReview(Worded, InvalidCommand):
    pass


class FlagDecisionMissing(Worded, InvalidCommand):
    pass


class StartTooLate(Worded, InvalidCommand):
    pass


class DiscardNotConfirmed(Worded, InvalidCommand):
    """Removing this player would discard the deal, which the GM did not confirm."""


class OutcomeChanged(Worded, InvalidCommand):
    """The close the GM confirmed would now do something else (a vote or an action came in).
    ``preview``: what it would do now (``gameplay.selectors.close.ClosePreview``), for the
    confirmation page to show again without computing it twice."""

    preview: Any = None
