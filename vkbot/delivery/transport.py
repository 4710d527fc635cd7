"""Sending requests to VK: the project's vkbottle clients (``vkbot.vkapi``, so ``VK_API_URL``
holds), each request after the token's shared rate limiter allows it.

Each request goes out as its community (``Request.community``): with that community's
community token or its admin's user token, registered by :meth:`Transport.connect`; a request
of no community (None) uses the tokens the transport was built with (by default the
settings', ``VK_GROUP_TOKEN`` / ``VK_USER_TOKEN``). One client and one limiter per token,
whichever communities share it.

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
from outbox.ratelimit import RateLimiter, free_many, limiter_for
from vkbot.vkapi import make_api

from .batch import EXECUTE_FAILURE_CODES, CallResult, Request, TokenKind

log = logging.getLogger(__name__)

#: Requests of one round in flight at once per token, and in all (per worker).
CONCURRENCY = 4
TOTAL_CONCURRENCY = 16


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
        #: Per token: its client and its limiter (a token is never a key outside this process).
        self._by_token: dict[str, tuple[Any, RateLimiter]] = {}
        #: Per community (None: the transport's own tokens): the token of each kind.
        self._tokens: dict[int | None, dict[TokenKind, str]] = {}
        #: The limiters of the transport's own tokens, by kind.
        self._limiters: dict[str, RateLimiter] = {}
        self._given = dict(limiters or {})
        self.connect(None, group_token=group_token or "", user_token=user_token or "")
        self.concurrency = max(1, concurrency)
        self._runner = asyncio.Runner()
        self.requests_sent = 0

    def connect(self, community: int | None, *, group_token: str, user_token: str) -> None:
        """Requests of ``community`` go out with these tokens from now on (an empty one: that
        kind cannot be sent)."""
        tokens: dict[TokenKind, str] = {}
        pairs: tuple[tuple[TokenKind, str], ...] = (("group", group_token), ("user", user_token))
        for kind, token in pairs:
            if not token:
                continue
            tokens[kind] = token
            if token not in self._by_token:
                api = make_api(token, http_client=self._client, request_rescheduler=_NoReschedule())
                limiter = (self._given.get(kind) if community is None else None) or limiter_for(
                    token, kind
                )  # fmt: skip
                self._by_token[token] = (api, limiter)
            if community is None:
                self._limiters[kind] = self._by_token[token][1]
        self._tokens[community] = tokens

    def disconnect(self, community: int) -> None:
        self._tokens.pop(community, None)

    def has_token(self, kind: TokenKind, community: int | None = None) -> bool:
        return kind in self._tokens.get(community, {})

    def token(self, kind: TokenKind, community: int | None = None) -> str:
        """The token ``community``'s requests of ``kind`` go with now ("" when none)."""
        return self._tokens.get(community, {}).get(kind, "")

    def limiter(self, kind: TokenKind, community: int | None = None) -> RateLimiter | None:
        token = self._tokens.get(community, {}).get(kind)
        return self._by_token[token][1] if token is not None else None

    def free_slots(self, kind: TokenKind, community: int | None = None) -> tuple[int, float]:
        """Requests ``kind``'s token could send now without waiting for its limiter, and
        (when none) the seconds until one could; a limiter that cannot be asked says 1 (the
        send then reports the error)."""
        return self.free_slots_of(kind, [community]).get(community, (1, 0.0))

    def free_slots_of(
        self, kind: TokenKind, communities: Sequence[int | None]
    ) -> dict[int | None, tuple[int, float]]:
        """:meth:`free_slots` of several communities' tokens, asked of Redis at once (those
        without a ``kind`` token are left out)."""
        limiters: dict[int | None, Any] = {}
        for community in communities:
            limiter = self.limiter(kind, community)
            if limiter is not None:
                limiters[community] = limiter
        answers: dict[int | None, tuple[int, float]] = {}
        asked = {c: lim for c, lim in limiters.items() if hasattr(lim, "free")}
        for community in limiters:
            answers[community] = (1, 0.0)
        try:
            answers.update(zip(asked, free_many(list(asked.values())), strict=True))
        except RedisError:
            pass
        return answers

    def send(self, requests: Sequence[Request], *, timeout: float) -> list[list[CallResult]]:
        """Every request's per-call results, in order. Requests not answered within ``timeout``
        seconds are cancelled and count as network errors."""
        if not requests:
            return []
        return self._runner.run(self._send_all(list(requests), timeout))

    async def _send_all(self, requests: list[Request], timeout: float) -> list[list[CallResult]]:
        total = asyncio.Semaphore(max(self.concurrency, TOTAL_CONCURRENCY))
        gates: dict[str, asyncio.Semaphore] = {}
        tasks = []
        for request in requests:
            token = self._tokens.get(request.community, {}).get(request.token, "")
            gate = gates.setdefault(token, asyncio.Semaphore(self.concurrency))
            tasks.append(asyncio.create_task(self._send_one(request, gate, total)))
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

    async def _send_one(
        self, request: Request, gate: asyncio.Semaphore, total: asyncio.Semaphore
    ) -> list[CallResult]:
        async with gate, total:
            token = self._tokens.get(request.community, {}).get(request.token)
            if token is None:
                whose = "" if request.community is None else f" of community {request.community}"
                return request.failed(Failure(5, f"no {request.token} token{whose} is configured"))
            api, limiter = self._by_token[token]
            try:
                await limiter.acquire_async()
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
