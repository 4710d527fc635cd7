"""The one place that builds vkbottle ``API`` clients for the project.

vkbottle reads the base URL and the API version from the ``API_URL`` and ``API_VERSION``
attributes of the ``API`` object (``self.API_URL + method``, ``version or self.API_VERSION``)
for every request; both are class attributes. :class:`ProjectAPI` sets them on the instance
from the settings ``VK_API_URL`` and ``VK_API_VERSION``, so each client talks to the configured
server (the real VK, or the local one in tests) without patching vkbottle globally.

Use :func:`group_api` for the community token (messages, long poll, chats) and
:func:`user_api` for the community admin's user token (board posts), see VK.md; with many
communities, :func:`community_api` for one community's token
(``gameplay.selectors.communities.credentials``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from vkbottle import API
from vkbottle.api.request_rescheduler import ABCRequestRescheduler

from config.env import EnvError
from gameplay.selectors.communities import Credentials


class ProjectAPI(API):
    """A vkbottle ``API`` whose base URL and version belong to this instance only."""

    def __init__(self, token: str, *, api_url: str, api_version: str, **options: Any) -> None:
        super().__init__(token, **options)
        self.API_URL = normalise_api_url(api_url)
        self.API_VERSION = api_version

    def __repr__(self) -> str:  # never shows the token
        return f"<ProjectAPI {self.API_URL} v{self.API_VERSION}>"


class UnreadableAnswer(ValueError):
    """VK answered with something that is not JSON (an HTML error page, a cut-off body)."""


class RaiseUnreadable(ABCRequestRescheduler):
    """vkbottle's default answers an unreadable answer by asking again itself, 5, 10, 15 … s
    apart for as long as it takes; with this one the caller gets :class:`UnreadableAnswer`
    and retries on its own schedule (the long poll: ``vkbot.longpoll``)."""

    async def reschedule(
        self, ctx_api: Any, method: str, data: dict[str, Any], recent_response: Any
    ) -> dict[str, Any]:
        raise UnreadableAnswer(f"unreadable answer to {method}: {str(recent_response)[:200]}")


def normalise_api_url(url: str) -> str:
    """``https://host/method`` or ``https://host/method/`` → the latter (vkbottle appends the
    method name to it directly)."""
    url = url.strip()
    if not url:
        raise EnvError("VK_API_URL must not be empty.")
    return url if url.endswith("/") else url + "/"


def make_api(
    token: str,
    *,
    api_url: str | None = None,
    api_version: str | None = None,
    **options: Any,
) -> ProjectAPI:
    """An ``API`` for ``token`` aimed at ``VK_API_URL`` / ``VK_API_VERSION`` (or the given
    overrides). ``options`` go to vkbottle's ``API`` (``http_client``, ``request_rescheduler``,
    ``ignore_errors``)."""
    return ProjectAPI(
        token,
        api_url=api_url if api_url is not None else settings.VK_API_URL,
        api_version=api_version if api_version is not None else settings.VK_API_VERSION,
        **options,
    )


def group_api(**options: Any) -> ProjectAPI:
    """The community-token client. Raises :class:`EnvError` if ``VK_GROUP_TOKEN`` is unset."""
    token = settings.VK_GROUP_TOKEN
    if not token:
        raise EnvError("VK_GROUP_TOKEN is not set (the community token is needed to talk to VK).")
    return make_api(token, **options)


def community_api(community: Credentials, **options: Any) -> ProjectAPI:
    """The client of one community's token. Raises :class:`EnvError` if it has none."""
    if not community.group_token:
        raise EnvError(f"Community {community.group_id} has no community token.")
    return make_api(community.group_token, **options)


def user_api(**options: Any) -> ProjectAPI:
    """The user-token client (board posts). Raises :class:`EnvError` if ``VK_USER_TOKEN`` is
    unset."""
    token = settings.VK_USER_TOKEN
    if not token:
        raise EnvError(
            "VK_USER_TOKEN is not set (a community admin's user token is needed for board posts)."
        )
    return make_api(token, **options)
