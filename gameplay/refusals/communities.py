"""Connecting a community and managing who runs games in it (``InvalidCommand``): what VK
said about a token, a community connected by someone else, a GM who is not one of its
members. The VK checks themselves are the panel's (``panel.connect``)."""

from __future__ import annotations

from gameplay.rules.errors import InvalidCommand


class CommunityTokenInvalid(InvalidCommand):
    """VK does not take the community token (error 5), or it is not a community's token."""


class CommunityRightMissing(InvalidCommand):
    """The community token lacks a right the bot needs (``right``: «сообщения сообщества»)."""


class UserTokenInvalid(InvalidCommand):
    """VK does not take the administrator's user token."""


class UserTokenRightMissing(InvalidCommand):
    """The user token lacks a right (``right``: groups, offline)."""


class UserNotCommunityAdmin(InvalidCommand):
    """The user token's owner (``user``) is not an administrator of ``community``."""


class VkUnreachable(InvalidCommand):
    """VK did not answer (network, timeout)."""


class VkRefusedSetup(InvalidCommand):
    """VK refused a setup call (``step``) with error ``code``."""


class CallbackAddressUnknown(InvalidCommand):
    """Callback mode without PUBLIC_URL: the deployment cannot tell VK where to send events."""


class CommunityOwnedByAnother(InvalidCommand):
    """Another owner connected the community already."""


class CommunityFromEnvironment(InvalidCommand):
    """The community is the environment's (VK_GROUP_ID): its tokens are the server's."""


class NotCommunityMember(InvalidCommand):
    """A game in a community the GM does not belong to."""


class GmNotCommunityMember(InvalidCommand):
    """A co-GM (``username``) who is not a member of the game's ``community``."""


class CommunityRequired(InvalidCommand):
    """A new game needs one of the user's communities."""


class NotCommunityOwner(InvalidCommand):
    """Only the community's owner (or an operator) manages its GMs and settings."""


class NoSuchPanelUser(InvalidCommand):
    """No panel account by that user name."""


class OwnerNotRemovable(InvalidCommand):
    """The community's owner cannot be removed from its GMs."""


class TopicOfAnotherCommunity(InvalidCommand):
    """A topic link points into another community than the game's."""


class TopicNotFound(InvalidCommand):
    """The community has no such topic (checked with the user token)."""


class CommunityTokenOfAnother(InvalidCommand):
    """Connecting ``community`` again with another community's token."""


class VkAnswerUnreadable(InvalidCommand):
    """VK's answer to a setup call (``step``) is not what its API says."""


class VkTooManyRequests(InvalidCommand):
    """VK asked for fewer requests (error 6, 9) or failed on its side (1, 10): not the token's
    fault; try again shortly."""
