"""Settings, a roster or a deal that cannot be (``SetupError``, ``NotEnoughPlayers``)."""

from __future__ import annotations

from gameplay.rules.errors import NotEnoughPlayers, SetupError


class CountsLocked(SetupError):
    pass


class EarlyCloseRuleUnknown(SetupError):
    pass


class GameNameMissing(SetupError):
    pass


class GmPagesInvalid(SetupError):
    pass


class ItemTwice(SetupError):
    pass


class NoGm(SetupError):
    pass


class NoSuchTheme(SetupError):
    pass


class NotStaff(SetupError):
    pass


class PhaseLengthOutOfRange(SetupError):
    pass


class RemindersOutOfRange(SetupError):
    pass


class UnknownTimeZone(SetupError):
    pass


class TopicTaken(SetupError):
    pass


class SpectatorChatTaken(SetupError):
    pass


class SeedUnreadable(SetupError):
    """The round's seed is stored under a key the server no longer has (it reads as empty):
    a deal from it would not be the committed one."""


class CountsAfterDeal(SetupError):
    pass


class RosterMismatch(NotEnoughPlayers):
    pass


class SeatNumbersInvalid(NotEnoughPlayers):
    pass


class TopicRequiredInPlay(SetupError):
    """A dealt or running game's topic cleared: its posts (the roster, the tallies, the
    nights' results) would go nowhere and its board votes unanswered."""


class CommunityFixedInPlay(SetupError):
    """A dealt or running game moved to another community: its players, topics and chat are
    the first one's."""
