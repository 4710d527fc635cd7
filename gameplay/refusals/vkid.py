"""Signing a community's admin in with VK ID (``InvalidCommand``): what can go wrong between
«Войти через VK ID» and the token in hand. The flow itself is the panel's
(``panel.signin``); VK ID's protocol is ``gameplay.vkid``."""

from __future__ import annotations

from gameplay.rules.errors import InvalidCommand


class VkIdNotConfigured(InvalidCommand):
    """The deployment has no VK ID app (VK_ID_APP_ID) or no public address (PUBLIC_URL)."""


class VkIdSignInLost(InvalidCommand):
    """The answer VK ID sent the browser back with matches no sign-in of this session (none
    started, finished already, too old, or another browser's)."""


class VkIdCancelled(InvalidCommand):
    """The admin did not allow the access in VK ID (or VK ID refused the request)."""


class VkIdCodeRefused(InvalidCommand):
    """VK ID did not exchange the sign-in's code for a token."""


class VkIdRightMissing(InvalidCommand):
    """The admin allowed VK ID's sign-in without a right the board needs (``right``)."""
