"""VK API errors as the local server reports them.

The texts are VK's own (VKCOM/vk-api-schema ``errors.json``); a detail, where VK gives one,
follows the base text after a colon, e.g. ``"One of the parameters specified was missing or
invalid: peer_id is undefined"``.
"""

from __future__ import annotations

from typing import Any

ERROR_TEXTS: dict[int, str] = {
    1: "Unknown error occurred",
    3: "Unknown method passed",
    5: "User authorization failed",
    6: "Too many requests per second",
    8: "Invalid request",
    9: "Flood control",
    10: "Internal server error",
    12: "Unable to compile code",
    13: "Runtime error occurred during code invocation",
    14: "Captcha needed",
    15: "Access denied",
    27: "Group authorization failed",
    29: "Rate limit reached",
    100: "One of the parameters specified was missing or invalid",
    104: "Not found",
    113: "Invalid user id",
    125: "Invalid group id",
    901: "Can't send messages for users without permission",
    909: "Can't edit this message, because it's too old",
    910: "Can't sent this message, because it's too big",
    911: "Keyboard format is invalid",
    914: "Message is too long",
    917: "You don't have access to this chat",
    919: "You can't see invite link for this chat",
    924: "Can't edit this message",
    925: "You are not admin of this chat",
    927: "Chat does not exist",
    932: "Your community can't interact with this peer",
    935: "User not found in chat",
    2000: "Servers number limit is reached",
}

# Error codes the fault injector may produce (any code above is accepted; these are the usual).
TRANSIENT_ERROR_CODES: frozenset[int] = frozenset({6, 9, 10})


class VKError(Exception):
    """A VK API error: ``code`` and the full ``message`` VK would put in ``error_msg``."""

    def __init__(self, code: int, detail: str | None = None, *, message: str | None = None) -> None:
        base = ERROR_TEXTS.get(code, "Unknown error occurred")
        if message is None:
            message = f"{base}: {detail}" if detail else base
        super().__init__(message)
        self.code = code
        self.message = message

    def to_error(self, request_params: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """The ``error`` object of VK's answer."""
        error: dict[str, Any] = {"error_code": self.code, "error_msg": self.message}
        if request_params is not None:
            error["request_params"] = request_params
        return error


def param_error(detail: str) -> VKError:
    """Error 100, the answer to any missing or malformed parameter."""
    return VKError(100, detail)


def group_auth_error() -> VKError:
    """Error 27: a user-only method called with a community token."""
    return VKError(27, "method is unavailable with group auth.")
