"""Settings, a roster or a deal that cannot be (``SetupError``, ``NotEnoughPlayers``)."""

from __future__ import annotations

from gameplay.rules.errors import NotEnoughPlayers, SetupError

from .base import Worded


class CountsLocked(Worded, SetupError):
    pass


class EarlyCloseRuleUnknown(Worded, SetupError):
    pass


class GameNameMissing(Worded, SetupError):
    pass


class GmPagesInvalid(Worded, SetupError):
    pass


class ItemTwice(Worded, SetupError):
    pass


class NoGm(Worded, SetupError):
    pass


class NoSuchTheme(Worded, SetupError):
    pass


class NotStaff(Worded, SetupError):
    pass


class PhaseLengthOutOfRange(Worded, SetupError):
    pass


class RemindersOutOfRange(Worded, SetupError):
    pass


class UnknownTimeZone(Worded, SetupError):
    pass


class TopicTaken(Worded, SetupError):
    pass


class SpectatorChatTaken(Worded, SetupError):
    pass


class SeedUnreadable(Worded, SetupError):
    """The round's seed is stored under a key the server no longer has (it reads as empty):
    a deal from it would not be the committed one."""


class CountsAfterDeal(Worded, SetupError):
    pass


class RosterMismatch(Worded, NotEnoughPlayers):
    pass


class SeatNumbersInvalid(Worded, NotEnoughPlayers):
    pass


class TopicRequiredInPlay(Worded, SetupError):
    """A dealt or running game's topic cleared: its posts (the roster, the tallies, the
    nights' results) would go nowhere and its board votes unanswered."""


class CommunityFixedInPlay(Worded, SetupError):
    """A dealt or running game moved to another community: its players, topics and chat are
    the first one's."""
