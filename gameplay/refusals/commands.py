"""Commands that cannot be done now (``InvalidCommand``): the wrong moment, an unknown id."""

from __future__ import annotations

from typing import Any

from gameplay.rules.errors import InvalidCommand


class AlreadyPlaying(InvalidCommand):
    pass


class AlreadyRunning(InvalidCommand):
    pass


class ExportNotStarted(InvalidCommand):
    """The export of a game that has not started (there is no play to write down)."""


class AlreadySignedUp(InvalidCommand):
    pass


class ChatAlreadyClosed(InvalidCommand):
    pass


class ChatAlreadyOpen(InvalidCommand):
    pass


class ChatBeingCreated(InvalidCommand):
    pass


class ChatNotLinked(InvalidCommand):
    pass


class ChatNumberImpossible(InvalidCommand):
    pass


class ChatNumberMissing(InvalidCommand):
    pass


class ChatOpenNoNewChat(InvalidCommand):
    pass


class ChatOpensInRunningGame(InvalidCommand):
    pass


class DealTooLate(InvalidCommand):
    pass


class EditReasonMissing(InvalidCommand):
    pass


class ExtendOnlyOpenPhase(InvalidCommand):
    pass


class ExtensionNotMinutes(InvalidCommand):
    pass


class ExtensionTooLong(InvalidCommand):
    pass


class FlagAlreadyResolved(InvalidCommand):
    pass


class GameAlreadyOver(InvalidCommand):
    pass


class GameFinished(InvalidCommand):
    pass


class GameNotInProgress(InvalidCommand):
    pass


class ModkillNotForgivable(InvalidCommand):
    pass


class NewRoundTooLate(InvalidCommand):
    pass


class NightDeathNotAlive(InvalidCommand):
    pass


class NoActivePhase(InvalidCommand):
    pass


class NoSuchFlag(InvalidCommand):
    pass


class NoSuchGame(InvalidCommand):
    pass


class NoSuchSignup(InvalidCommand):
    pass


class NoSuchStrike(InvalidCommand):
    pass


class NoSuchThemeText(InvalidCommand):
    pass


class NobodyAdded(InvalidCommand):
    pass


class PlayerAlreadyListed(InvalidCommand):
    """The GM adds a VK user who is already among the players or in the reserve."""


class NotAChat(InvalidCommand):
    pass


class NotDealtYet(InvalidCommand):
    pass


class NotSignedUp(InvalidCommand):
    pass


class NotVkUser(InvalidCommand):
    pass


class NothingToRetry(InvalidCommand):
    pass


class PhaseChanged(InvalidCommand):
    pass


class PlayerLineBad(InvalidCommand):
    pass


class PlayerLineDuplicate(InvalidCommand):
    pass


class PlayerListEmpty(InvalidCommand):
    pass


class PlayerListTooLong(InvalidCommand):
    pass


class RecruitmentClosed(InvalidCommand):
    pass


class RelayEmpty(InvalidCommand):
    pass


class RemovalWhileRunning(InvalidCommand):
    pass


class ReplacementNotNow(InvalidCommand):
    pass


class ScreenName(InvalidCommand):
    pass


class SeatAlreadyOut(InvalidCommand):
    pass


class SettingsFrozen(InvalidCommand):
    pass


class SettingsNotChangeable(InvalidCommand):
    pass


class SignupClosed(InvalidCommand):
    pass


class StoryNotNow(InvalidCommand):
    pass


class StoryTooLong(InvalidCommand):
    pass


class StrikeAlreadyForgiven(InvalidCommand):
    pass


class ThemeTextBroken(InvalidCommand):
    pass


class ThemeTextTooLong(InvalidCommand):
    pass


class UnknownFlagDecision(InvalidCommand):
    pass


class VkUserMissing(InvalidCommand):
    pass


class VkUserUnreadable(InvalidCommand):
    pass


class WithdrawTooLate(InvalidCommand):
    pass


class NoSuchDelivery(InvalidCommand):
    pass


class ChatCreationNotRetried(InvalidCommand):
    pass


class DeliveryStillQueued(InvalidCommand):
    pass


class AlreadyDelivered(InvalidCommand):
    pass


class RoundNotNeeded(InvalidCommand):
    pass


class AlreadyDealt(InvalidCommand):
    pass


class NobodyToRemind(InvalidCommand):
    pass


class RemindedRecently(InvalidCommand):
    pass


class CountNotDay(InvalidCommand):
    pass


class CountTooSoon(InvalidCommand):
    """A player asked for a vote count within minutes of the last one in that topic
    (``last``, ``next``: when it was posted and when the next may be asked for)."""


class ReopenReasonMissing(InvalidCommand):
    pass


class ModkillReasonMissing(InvalidCommand):
    """A modkill without a reason: the player is told why they are out (P5), so there must be
    one."""


class NightNotUnderReview(InvalidCommand):
    pass


class FlagDecisionMissing(InvalidCommand):
    pass


class StartTooLate(InvalidCommand):
    pass


class DiscardNotConfirmed(InvalidCommand):
    """Removing this player would discard the deal, which the GM did not confirm."""


class OutcomeChanged(InvalidCommand):
    """The close the GM confirmed would now do something else (a vote or an action came in).
    ``preview``: what it would do now (``gameplay.selectors.close.ClosePreview``), for the
    confirmation page to show again without computing it twice."""

    preview: Any = None
