"""Facts the handlers want from VK before the pipeline opens its transaction.

A few updates need to know something only VK can tell: a sign-up wants the player's name
(``users.get``) and, from the board, whether the community may write to them
(``messages.isMessagesFromGroupAllowed``). The handlers say what they need for an update
(``vkbot.handlers.facts_needed(update)``, pure); :func:`prefetch` asks VK outside any
transaction, so no database lock waits on the network, and the answers reach
``vkbot.handlers.dispatch(update, facts=...)``. Anything VK does not answer in time stays
unknown: the handlers then fall back (a name like ``id123``), and the update is applied anyway.

The long poll asks for a polled batch at once (:func:`prefetch_batch`: one ``users.get`` for
every name it wants), in each community's loop while the runbot applies slices, so the slices
never wait on VK. A batch is one community's: its requests go with that community's token and
the answer to ``messages.isMessagesFromGroupAllowed`` is about that community, so facts are
not asked across communities.

Every request waits for the community token's shared rate limiter
(:func:`outbox.ratelimit.limiter_for`), the one the delivery uses: VK counts the bot's
requests and the delivery's against one budget, and a burst of sign-ups (a recruitment topic
filling up) must not trip error 6 for either.

vkbottle and aiohttp are imported where VK is asked, not with the module: the Callback view
imports it, so every process that loads the URLconf (the web, ``manage.py check``) would
otherwise pay about a second of CPU for them, and most updates need no fact from VK at all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from redis.exceptions import RedisError

from ops.outages import Outage
from outbox.ratelimit import RateLimiter, limiter_for

if TYPE_CHECKING:
    from vkbottle import API

logger = logging.getLogger(__name__)

#: Redis (the limiter's) as this process sees it: one line when it is lost, one when back.
_limiter_redis = Outage("Redis", logger, who="The request limiter")

T = TypeVar("T")

#: The most time the facts of one update may take.
TIMEOUT = 5.0


@dataclass(frozen=True)
class Wanted:
    """What the handlers want to know about which users, and the type they want it in."""

    names: tuple[int, ...]
    pm_allowed: tuple[int, ...]
    facts_type: Any

    @property
    def users(self) -> list[int]:
        return sorted({*self.names, *self.pm_allowed})


def wanted(update: Any) -> Wanted | None:
    """What the handlers need to know from VK for ``update`` (None: nothing). Pure: asks
    ``vkbot.handlers.facts_needed``; handlers without it need nothing."""
    from vkbot import handlers  # lazily: the handlers import the whole bot

    needed = getattr(handlers, "facts_needed", None)
    facts_type = getattr(handlers, "VkFacts", None)
    if needed is None or facts_type is None:
        return None
    try:
        request = needed(update)
        names = tuple(sorted(int(u) for u in request.names))
        pm_allowed = tuple(sorted(int(u) for u in request.pm_allowed))
    except Exception:
        logger.exception("facts_needed failed on a VK update; applying it without facts")
        return None
    if not names and not pm_allowed:
        return None
    return Wanted(names, pm_allowed, facts_type)


async def fetch(
    api: API, want: Wanted, *, group_id: int, timeout: float = TIMEOUT, token: str | None = None
) -> Any:
    """Ask VK for ``want`` (all of it within ``timeout``) with ``api``, the client of
    community ``group_id``'s token ``token`` (None: ``VK_GROUP_TOKEN``), whose rate limiter
    it waits for; what VK does not answer stays unknown. Never raises for VK or network
    trouble."""
    names: dict[int, str] = {}
    sexes: dict[int, int] = {}
    allowed: dict[int, bool] = {}

    limiter = group_limiter(token)

    async def ask() -> None:
        if want.names:
            found = await _guarded(
                "users.get", want.names, lambda: _names(api, want.names), limiter
            )
            for user_id, (name, sex) in (found or {}).items():
                names[user_id] = name
                if sex:
                    sexes[user_id] = sex
        for user_id in want.pm_allowed:
            may = await _guarded(
                "messages.isMessagesFromGroupAllowed",
                (user_id,),
                lambda user_id=user_id: _may_write(api, group_id, user_id),
                limiter,
            )
            if may is not None:
                allowed[user_id] = may

    try:
        await asyncio.wait_for(ask(), timeout)
    except TimeoutError:
        logger.warning("VK did not answer about users %s in %.1f s", want.users, timeout)
    return want.facts_type(names=names, pm_allowed=allowed, sexes=sexes)


def group_limiter(token: str | None = None) -> RateLimiter | None:
    """The community token's request limiter (``token``; None: ``VK_GROUP_TOKEN``), shared
    with the delivery (VK counts the bot's requests and the delivery's against one budget of
    ``VK_GROUP_RPS`` a second per token). None without a token, or when Redis cannot be
    reached (then the requests go unlimited)."""
    token = settings.VK_GROUP_TOKEN if token is None else token
    if not token:
        return None
    try:
        return limiter_for(token, "group")
    except (RedisError, ValueError) as exc:
        logger.warning("No request limiter for the community token (%s); asking VK anyway", exc)
        return None


async def wait_for_slot(limiter: RateLimiter | None, method: str) -> None:
    """Wait until ``limiter`` allows one more request (never raises: with Redis away, the
    request goes at once)."""
    if limiter is None:
        return
    try:
        await limiter.acquire_async()
    except RedisError as exc:
        _limiter_redis.lost(exc, then="calling VK without waiting for it")
        return
    _limiter_redis.back()


async def _guarded(
    method: str,
    users: tuple[int, ...],
    call: Callable[..., Awaitable[T]],  # called with no arguments
    limiter: RateLimiter | None = None,
) -> T | None:
    import aiohttp
    from vkbottle.exception_factory import VKAPIError

    await wait_for_slot(limiter, method)
    try:
        return await call()
    except (VKAPIError, aiohttp.ClientError, KeyError, TypeError, ValueError) as exc:
        logger.warning(
            "Could not ask VK for %s about users %s (%s: %s); the handlers get what is known",
            method, list(users), type(exc).__name__, exc,
        )  # fmt: skip
        return None


async def prefetch(
    api: API, update: Any, *, group_id: int, timeout: float = TIMEOUT, token: str | None = None
) -> Any | None:
    """The handlers' facts for ``update`` fetched with ``api`` (community ``group_id``'s
    client of ``token``, see :func:`fetch`), or None when none are needed."""
    want = wanted(update)
    if want is None:
        return None
    return await fetch(api, want, group_id=group_id, timeout=timeout, token=token)


async def prefetch_batch(
    api: API,
    updates: Sequence[Any],
    *,
    group_id: int,
    timeout: float = TIMEOUT,
    token: str | None = None,
) -> list[Any | None]:
    """:func:`prefetch` for a polled batch at once: each update's facts (None where none are
    needed, or for a None in ``updates``), asked of VK together — one ``users.get`` for every
    name the batch wants and one ``messages.isMessagesFromGroupAllowed`` per user, however
    many of its updates want them, all within ``timeout``. Each update gets the facts about
    the users it wants."""
    wants = [wanted(update) if update is not None else None for update in updates]
    asked = [want for want in wants if want is not None]
    if not asked:
        return [None] * len(updates)
    union = Wanted(
        tuple(sorted({user for want in asked for user in want.names})),
        tuple(sorted({user for want in asked for user in want.pm_allowed})),
        asked[0].facts_type,
    )
    known = await fetch(api, union, group_id=group_id, timeout=timeout, token=token)
    return [_part(known, want) if want is not None else None for want in wants]


def _part(known: Any, want: Wanted) -> Any:
    """The facts ``known`` about the users ``want`` asks for."""
    return want.facts_type(
        names={u: known.names[u] for u in want.names if u in known.names},
        pm_allowed={u: known.pm_allowed[u] for u in want.pm_allowed if u in known.pm_allowed},
        sexes={u: known.sexes[u] for u in want.names if u in known.sexes},
    )


async def _names(api: API, user_ids: tuple[int, ...]) -> dict[int, tuple[str, int]]:
    """Names and VK's ``sex`` (1 female, 2 male, 0 unknown) of the users."""
    answer = await api.request(
        "users.get", {"user_ids": ",".join(map(str, user_ids)), "fields": "sex"}
    )
    names: dict[int, tuple[str, int]] = {}
    for user in answer["response"]:
        name = f"{user.get('first_name', '')} {user.get('last_name', '')}".strip()
        sex = user.get("sex")
        if name:
            names[int(user["id"])] = (name, sex if sex in (1, 2) else 0)
    return names


async def _may_write(api: API, group_id: int, user_id: int) -> bool:
    answer = await api.request(
        "messages.isMessagesFromGroupAllowed", {"group_id": group_id, "user_id": user_id}
    )
    return bool(answer["response"]["is_allowed"])
