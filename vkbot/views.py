"""The Callback API endpoint: VK POSTs each community event here as JSON.

Each event is routed by its ``group_id`` to that community's credentials
(``gameplay.selectors.communities.callback_keys``: a connected community, or the environment's
``VK_GROUP_ID`` with ``VK_CONFIRMATION_CODE``/``VK_CALLBACK_SECRET``). ``{"type":
"confirmation", "group_id": N}`` is answered with N's confirmation code; every other event
must carry N's secret (else HTTP 403, nothing recorded; also for a community this deployment
does not serve, or one disconnected in the panel). An accepted event, without its ``secret``,
is recorded in the Callback inbox (``gameplay.services.inbox.inbound_record``: committed, once
per event id and community) and answered at once with the plain text ``ok``, also for a
duplicate, so VK stops retrying; the process's applier is woken (:func:`vkbot.inbox.wake`),
which applies the inbox in slices across communities through the same pipeline as the long
poll, so an event VK delivers twice, or by both channels, changes the game once. A database
that cannot record it is a 503: VK posts the event again later; so is an event of a community
with ``CALLBACK_INBOX_MAX_PER_COMMUNITY`` events waiting already (a flood, or nothing applying
them): nothing is recorded, and the refusals are logged once a minute per community.

Bad input gets a 4xx, never a 500, and is looked at before anything else: a body over
``MAX_BODY_BYTES`` is a 413 unread, JSON nested deeper than ``MAX_DEPTH`` a 400 (VK's events
are a few levels deep; the JSON decoder's own recursion would otherwise escape as a 500), and
JSON beyond the standard (``NaN``, ``Infinity``, a number too large for a float such as
``1e400``) a 400: VK never sends it, and an infinite ``group_id`` cannot become an int.
"""

from __future__ import annotations

import json
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from gameplay.selectors.communities import CallbackKeys, callback_keys
from gameplay.selectors.inbox import inbound_pending, inbound_waits
from gameplay.services.inbox import inbound_record
from vkbot.inbox import wake
from vkbot.pipeline import event_id_of, group_id_of

logger = logging.getLogger(__name__)

CONFIRMATION = "confirmation"
#: VK's largest event (a 4096-character message with its attachments) is far below this.
MAX_BODY_BYTES = 64 * 1024
#: Arrays and objects inside each other, the event itself being depth 1.
MAX_DEPTH = 32
#: A community's inbox at its cap is logged at most this often (seconds), not per request.
FULL_LOG_SECONDS = 60.0
#: When each community's inbox at its cap was last logged (``time.monotonic``).
_full_logged: dict[int, float] = {}


def _too_deep(data: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests arrays and objects more than ``limit`` deep (no recursion)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class _NonStandardJson(ValueError):
    """A constant or number that standard JSON (RFC 8259) has no place for."""


def _reject_constant(name: str) -> object:
    raise _NonStandardJson(f"{name} is not standard JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NonStandardJson(f"{text} does not fit a float")
    return value


def _parse(body: bytes) -> object:
    """The body as standard JSON; ValueError (or RecursionError) for anything else."""
    return json.loads(body, parse_constant=_reject_constant, parse_float=_finite_float)


def _declared_length(request: HttpRequest) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


def _text(body: str, status: int = 200) -> HttpResponse:
    return HttpResponse(body, status=status, content_type="text/plain; charset=utf-8")


def _secret_ok(data: dict[str, Any], community: CallbackKeys) -> bool:
    expected = community.callback_secret
    given = data.get("secret")
    if not expected:
        logger.error(
            "Callback API event refused: no Callback API secret is set for community %s",
            community.group_id,
        )
        return False
    return isinstance(given, str) and constant_time_compare(given, expected)


def _log_full(group_id: int, cap: int) -> None:
    now = time.monotonic()
    last = _full_logged.get(group_id)
    if last is not None and now - last < FULL_LOG_SECONDS:
        return
    _full_logged[group_id] = now
    logger.warning(
        "Callback API: community %s has %d events waiting to be applied "
        "(CALLBACK_INBOX_MAX_PER_COMMUNITY); answering 503 to its new events so that VK posts "
        "them again later (logged at most once a minute)", group_id, cap,
    )  # fmt: skip


@csrf_exempt
@require_POST
def callback(request: HttpRequest) -> HttpResponse:
    length = _declared_length(request)
    if length is None:
        logger.warning("Callback API: a request with an unreadable Content-Length")
        return _text("bad request: Content-Length", 400)
    if length > MAX_BODY_BYTES:
        logger.warning("Callback API: refused a body of %d bytes", length)
        return _text("request entity too large", 413)
    body = request.body
    if len(body) > MAX_BODY_BYTES:
        logger.warning("Callback API: refused a body of %d bytes", len(body))
        return _text("request entity too large", 413)
    try:
        data = _parse(body)
    except _NonStandardJson as e:
        logger.warning("Callback API: the body is not standard JSON: %s", e)
        return _text("bad request: the body is not standard JSON", 400)
    except (ValueError, RecursionError):
        logger.warning("Callback API: the body is not JSON")
        return _text("bad request: the body is not JSON", 400)
    if _too_deep(data):
        logger.warning("Callback API: the body nests deeper than %d levels", MAX_DEPTH)
        return _text("bad request: nested too deep", 400)
    if not isinstance(data, dict) or not isinstance(data.get("type"), str) or not data["type"]:
        logger.warning("Callback API: the body is not a VK event object")
        return _text("bad request: not a VK event", 400)
    kind = data["type"]
    group_id = group_id_of(data)
    try:
        community = callback_keys(group_id) if group_id is not None else None
    except DatabaseError:
        logger.exception("Callback API: the database failed looking up group_id %r", group_id)
        return _text("temporarily unavailable", 503)
    if community is None:
        logger.warning(
            "Callback API: refused a %s event for group_id %r: not a community this "
            "deployment serves (unknown, or disconnected)", kind, data.get("group_id"),
        )  # fmt: skip
        return _text("forbidden", 403)
    if kind == CONFIRMATION:
        if not community.confirmation_code:
            logger.error("Callback API: confirmation asked for community %s, which has no "
                         "confirmation code", community.group_id)  # fmt: skip
            return _text("forbidden", 403)
        logger.info("Callback API: answered the confirmation request of community %s",
                    community.group_id)  # fmt: skip
        return _text(community.confirmation_code)
    if not _secret_ok(data, community):
        logger.warning("Callback API: refused a %s event for community %s with a wrong or "
                       "missing secret", kind, community.group_id)  # fmt: skip
        return _text("forbidden", 403)
    update = {key: value for key, value in data.items() if key != "secret"}
    event_id = event_id_of(update)
    retry = request.headers.get("X-Retry-Counter")
    if retry:
        logger.info("Callback API: event %s (%s) is VK's retry %s", event_id, kind, retry)
    cap = settings.CALLBACK_INBOX_MAX_PER_COMMUNITY
    try:
        new = inbound_record(group_id=community.group_id, event_id=event_id, update=update,
                             cap=cap)  # fmt: skip
        # Not recorded: a retry of an event that waits already, or the community at its cap.
        full = (
            not new
            and inbound_pending(group_id=community.group_id, up_to=cap) >= cap
            and not inbound_waits(group_id=community.group_id, event_id=event_id)
        )
    except DatabaseError:
        # Nothing was recorded: VK delivers the event again later.
        logger.exception("Callback API: the database failed on event %s", event_id)
        return _text("temporarily unavailable", 503)
    if full:  # nothing recorded: VK posts it again later, when the applier has caught up
        _log_full(community.group_id, cap)
        wake()
        return _text("temporarily unavailable: too many events waiting", 503)
    if not new:
        logger.info("Callback API: event %s (%s) already waits to be applied", event_id, kind)
    wake()
    return _text("ok")
