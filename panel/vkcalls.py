"""The panel's calls to VK (``panel.connect``, «Подключить сообщество»): one token's calls,
each after its token's shared rate limiter (``outbox.ratelimit``, the one the delivery waits
for too: VK counts both against one budget), VK's errors turned into the refusals of the step
they happened in, run synchronously from the web request.

Tokens never reach a log line: vkbottle's debug lines carry a request's data (the Callback
secret among them), so its logger is held at INFO during the calls; an exception whose text
may hold the URL is logged by its type alone.

vkbottle (and aiohttp with it) is imported where a call is made, not with the module: the
URLconf imports the panel, and every process that loads it (the web, ``manage.py check``, the
bot's and the worker's checks) would pay about a second of CPU for a library only
«Подключить сообщество» uses.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.views.decorators.debug import sensitive_variables
from redis.exceptions import RedisError

from gameplay.refusals import (
    VkAnswerUnreadable,
    VkRefusedSetup,
    VkTooManyRequests,
    VkUnreachable,
)
from outbox.ratelimit import RateLimiter, limiter_for

if TYPE_CHECKING:
    from vkbottle.api.request_rescheduler import ABCRequestRescheduler
    from vkbottle.http import AiohttpClient

log = logging.getLogger(__name__)

#: VK's «too many requests», «flood control», «internal error», «unknown error»: not the
#: token's fault; the admin is asked to try again shortly.
BUSY_CODES = frozenset({1, 6, 9, 10})


class Vk:
    """One token's calls: VK's errors become the refusals of the step they happened in."""

    def __init__(self, token: str, client: AiohttpClient, kind: str) -> None:
        from vkbottle import API

        self.api = API(token, http_client=client, request_rescheduler=_no_retry())
        self.api.API_URL = (
            settings.VK_API_URL
            if settings.VK_API_URL.endswith("/")
            else (settings.VK_API_URL + "/")
        )
        self.api.API_VERSION = settings.VK_API_VERSION
        self.limiter = _limiter(token, kind)

    async def call(self, method: str, step: str, **params: Any) -> Any:
        import aiohttp
        from vkbottle import VKAPIError

        await _wait_for_slot(self.limiter, method)
        try:
            answer = await self.api.request(method, params)
        except VKAPIError as e:
            log.warning("Connecting a community: VK error %s on %s", e.code, method)
            if e.code in BUSY_CODES:
                raise VkTooManyRequests() from None
            raise VkError(e.code, step) from None
        except _Unreadable:
            log.warning("Connecting a community: an unreadable answer to %s", method)
            raise VkAnswerUnreadable(step=step) from None
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            log.warning(
                "Connecting a community: VK unreachable on %s (%s)", method, type(e).__name__
            )
            raise VkUnreachable() from None
        except Exception as e:  # noqa: BLE001 - its text may hold the URL with the token
            log.error("Connecting a community: %s on %s", type(e).__name__, method)
            raise VkAnswerUnreadable(step=step) from None
        if not isinstance(answer, dict) or "response" not in answer:
            raise VkAnswerUnreadable(step=step)
        return answer["response"]


def _limiter(token: str, kind: str) -> RateLimiter | None:
    """The token's shared limiter (None when Redis cannot be reached: VK is asked anyway)."""
    try:
        return limiter_for(token, kind)
    except (RedisError, ValueError) as error:
        log.warning("Connecting a community: no rate limiter (%s); asking VK anyway", error)
        return None


async def _wait_for_slot(limiter: RateLimiter | None, method: str) -> None:
    if limiter is None:
        return
    try:
        await limiter.acquire_async()
    except RedisError as error:
        log.warning(
            "Connecting a community: the rate limiter is unavailable (%s) on %s", error, method
        )


class _Unreadable(Exception):
    pass


@cache
def _no_retry_class() -> type[ABCRequestRescheduler]:
    from vkbottle.api.request_rescheduler import ABCRequestRescheduler

    class _NoRetry(ABCRequestRescheduler):
        """vkbottle would ask again, without end, after an answer that is not JSON."""

        async def reschedule(
            self, ctx_api: Any, method: str, data: dict[str, Any], recent_response: Any
        ) -> dict[str, Any]:
            raise _Unreadable(method)

    return _NoRetry


def _no_retry() -> ABCRequestRescheduler:
    return _no_retry_class()()


class VkError(Exception):
    def __init__(self, code: int, step: str) -> None:
        super().__init__(code)
        self.code, self.step = code, step

    def refusal(self) -> VkRefusedSetup:
        return VkRefusedSetup(step=self.step, code=self.code)


@contextmanager
def _quiet_vkbottle() -> Iterator[None]:
    logger = logging.getLogger("vkbottle")
    level = logger.level
    logger.setLevel(max(level, logging.INFO))
    try:
        yield
    finally:
        logger.setLevel(level)


@sensitive_variables()
def run(work: Any, *args: Any) -> Any:
    import aiohttp
    from vkbottle.http import AiohttpClient

    @sensitive_variables()
    async def go() -> Any:
        timeout = aiohttp.ClientTimeout(total=float(settings.VK_HTTP_TIMEOUT_SECONDS))
        client = AiohttpClient(timeout=timeout)
        try:
            return await work(client, *args)
        finally:
            await client.close()

    with _quiet_vkbottle():
        return async_to_sync(go)()
