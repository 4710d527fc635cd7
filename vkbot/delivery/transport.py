"""Sending requests to VK: the project's vkbottle clients (``vkbot.vkapi``, so ``VK_API_URL``
holds), each request after the token's shared rate limiter allows it.

The worker is synchronous (Django ORM, rq); the requests of a round go out concurrently on a
private event loop, and no database call is made while it runs. Errors come back as values:
a VK error with its code, anything else (timeout, dropped connection, unreadable answer) as a
network error — both are retried by the caller with the same ids, so an answer lost after VK
acted is harmless.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import aiohttp
from django.conf import settings
from redis.exceptions import RedisError
from vkbottle import VKAPIError
from vkbottle.api.request_rescheduler import ABCRequestRescheduler
from vkbottle.http import AiohttpClient

from outbox.outcomes import Failure
from vkbot.vkapi import make_api

from .batch import EXECUTE_FAILURE_CODES, CallResult, Request, TokenKind
from .ratelimit import RateLimiter, limiter_for

log = logging.getLogger(__name__)

#: Requests of one round in flight at once (per worker).
CONCURRENCY = 4


class UnreadableAnswer(Exception):
    """VK answered with something that is not JSON (an HTML error page, a cut-off body)."""


class _NoReschedule(ABCRequestRescheduler):
    """vkbottle would retry an unreadable answer itself, forever and outside the limiter;
    here it is an error the delivery retries on its own terms."""

    async def reschedule(
        self, ctx_api: Any, method: str, data: dict[str, Any], recent_response: Any
    ) -> dict[str, Any]:
        raise UnreadableAnswer(f"unreadable answer to {method}: {str(recent_response)[:200]}")


class Transport:
    """The VK clients and limiters of one drain run; close it when done (a context manager)."""

    def __init__(
        self,
        *,
        group_token: str | None = None,
        user_token: str | None = None,
        limiters: dict[TokenKind, RateLimiter] | None = None,
        concurrency: int = CONCURRENCY,
        timeout: float | None = None,
    ) -> None:
        group_token = settings.VK_GROUP_TOKEN if group_token is None else group_token
        user_token = settings.VK_USER_TOKEN if user_token is None else user_token
        seconds = float(timeout if timeout is not None else settings.VK_HTTP_TIMEOUT_SECONDS)
        self._client = AiohttpClient(timeout=aiohttp.ClientTimeout(total=seconds))
        self._apis: dict[str, Any] = {}
        self._limiters: dict[str, RateLimiter] = dict(limiters or {})
        for kind, token in (("group", group_token), ("user", user_token)):
            if not token:
                continue
            self._apis[kind] = make_api(
                token, http_client=self._client, request_rescheduler=_NoReschedule()
            )
            if kind not in self._limiters:
                self._limiters[kind] = limiter_for(token, kind)
        self.concurrency = max(1, concurrency)
        self._runner = asyncio.Runner()
        self.requests_sent = 0

    def has_token(self, kind: TokenKind) -> bool:
        return kind in self._apis

    def free_slots(self, kind: TokenKind) -> tuple[int, float]:
        """Requests ``kind``'s token could send now without waiting for its limiter, and
        (when none) the seconds until one could; a limiter that cannot be asked says 1 (the
        send then reports the error)."""
        limiter = self._limiters.get(kind)
        if limiter is None or not hasattr(limiter, "free"):
            return 1, 0.0
        try:
            return limiter.free()
        except RedisError:
            return 1, 0.0

    def send(self, requests: Sequence[Request], *, timeout: float) -> list[list[CallResult]]:
        """Every request's per-call results, in order. Requests not answered within ``timeout``
        seconds are cancelled and count as network errors."""
        if not requests:
            return []
        return self._runner.run(self._send_all(list(requests), timeout))

    async def _send_all(self, requests: list[Request], timeout: float) -> list[list[CallResult]]:
        gate = asyncio.Semaphore(self.concurrency)
        tasks = [asyncio.create_task(self._send_one(request, gate)) for request in requests]
        done, pending = await asyncio.wait(tasks, timeout=max(timeout, 0.01))
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        results: list[list[CallResult]] = []
        for request, task in zip(requests, tasks, strict=True):
            if task in done and not task.cancelled() and task.exception() is None:
                results.append(task.result())
            else:
                error = None if task.cancelled() or task not in done else task.exception()
                if error is not None:
                    log.error("Delivery: sending %s failed", request.method, exc_info=error)
                why = f"internal error: {error!r}" if error else "not answered in time"
                results.append(request.failed(Failure(None, why)))
        return results

    async def _send_one(self, request: Request, gate: asyncio.Semaphore) -> list[CallResult]:
        async with gate:
            api = self._apis.get(request.token)
            if api is None:
                return request.failed(Failure(5, f"no {request.token} token is configured"))
            try:
                await self._limiters[request.token].acquire_async()
            except RedisError as error:
                return request.failed(Failure(None, f"rate limiter unavailable: {error}"))
            self.requests_sent += 1
            try:
                answer = await api.request(request.method, request.form())
            except VKAPIError as error:
                code = getattr(error, "code", None)
                message = str(getattr(error, "error_msg", error))
                if request.method == "execute" and code in EXECUTE_FAILURE_CODES:
                    log.error("Delivery: VK refused our execute program: %s %s", code, message)
                    return request.failed(Failure(None, f"execute failed: {code} {message}"))
                return request.failed(Failure(code if isinstance(code, int) else None, message))
            except (aiohttp.ClientError, TimeoutError, OSError, UnreadableAnswer) as error:
                return request.failed(Failure(None, f"{type(error).__name__}: {error}"))
            if not isinstance(answer, dict):
                return request.failed(Failure(None, f"unexpected answer: {str(answer)[:200]}"))
            return request.results(answer)

    def close(self) -> None:
        try:
            self._runner.run(self._client.close())
        finally:
            self._runner.close()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
