"""What became of the rows a worker leased: sent, retry later, failed, or due again.

:func:`outbox_settle` records what VK answered for a round's rows still held under the lease:
sent (with VK's ids in ``result``), retry later (exponential backoff with jitter; failed after
``OUTBOX_MAX_ATTEMPTS``), or failed (VK's error in ``last_error``). A failure the GM should know
of becomes a ModerationFlag of kind ``delivery`` (:mod:`outbox.flags`) — one open flag per
player (or topic) collects them.

A retry (``gameplay.services.retries.outbox_retry``, or any code that puts a row back to
pending with ``attempts`` 0) makes the delivery try the recipients VK refused again, under the
same ``random_id``.

When VK answers a ``create_chat`` row with the chat, the chat is linked to the game in the same
transaction as the row's outcome: that is a service's write, so such a round is settled by
``gameplay.services.settle.delivery_settle``, which locks the games first
(:func:`lock_games_of`), settles the rows here (:func:`settle_held`) and links the chats.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from gameplay.messages import render
from gameplay.models import Game, Outbox, OutboxStatus

from . import dbrows
from .flags import flag_failed_delivery
from .leases import Lease, held

log = logging.getLogger(__name__)

Outcome = Literal["sent", "retry", "failed", "again", "held"]


@dataclass(frozen=True)
class Failure:
    """Why VK did not take something: its error code and text, or a network error (no code)."""

    code: int | None
    message: str
    #: Set when retries stopped: the number of attempts made.
    gave_up_after: int | None = None

    def __str__(self) -> str:
        text = (
            f"network error: {self.message}"
            if self.code is None
            else f"VK error {self.code}: {self.message}"
        )
        if self.gave_up_after is not None:
            text += f" (gave up after {self.gave_up_after} attempts)"
        return text

    @property
    def for_gm(self) -> str:
        why = render("gm/vk_error", code=self.code, message=self.message)
        if self.gave_up_after is not None:
            why = render("gm/delivery_gave_up", attempts=self.gave_up_after, why=why)
        return why


@dataclass
class Settlement:
    """What became of one leased row in a round.

    ``sent``: done (``undelivered`` lists recipients VK refused for good, flagged to the GM);
    ``retry``: not (all) done, try again after a backoff (``waiting``: recipients still to
    reach, for the GM if the row gives up); ``failed``: VK refused it for good (flagged unless
    ``flag`` is false); ``again``: due again at once (an invite whose link is now known);
    ``held``: recipients waited for an earlier row to them (each peer reads its rows in
    order): due again at once, and the claim is not counted as an attempt.
    ``created_chat``: the peer id of the chat VK created for a sent ``create_chat`` row.
    """

    outbox_id: int
    outcome: Outcome
    result: dict[str, Any] | None = None
    failure: Failure | None = None
    undelivered: Mapping[int, Failure] = field(default_factory=dict)
    waiting: Sequence[int] = ()
    flag: bool = True
    created_chat: int | None = None


def retry_delay(attempts: int, *, rng: random.Random | None = None) -> float:
    """Seconds before attempt ``attempts + 1``: exponential from ``OUTBOX_RETRY_BASE_MS``,
    capped at ``OUTBOX_RETRY_MAX_SECONDS``, with jitter (between half and all of it)."""
    base = settings.OUTBOX_RETRY_BASE_MS / 1000.0
    cap = float(settings.OUTBOX_RETRY_MAX_SECONDS)
    delay = min(cap, base * 2.0 ** min(max(attempts - 1, 0), 40))
    return delay / 2 + (rng or random).uniform(0, delay / 2)


def created_chats(settlements: Sequence[Settlement]) -> list[Settlement]:
    """The settlements of ``create_chat`` rows VK answered with the chat it created."""
    return [s for s in settlements if s.created_chat is not None and s.outcome == "sent"]


@transaction.atomic
def outbox_settle(
    *, lease: Lease, settlements: Sequence[Settlement], now: datetime | None = None
) -> int:
    """Apply a round's outcomes to the rows still held under ``lease``; returns how many.

    A round with a created chat links it to its game, a service's write: it is settled by
    ``gameplay.services.settle.delivery_settle`` (raises ValueError here)."""
    if created_chats(settlements):
        raise ValueError("a created chat is linked by gameplay.services.settle.delivery_settle")
    return len(settle_held(lease=lease, settlements=settlements, now=now))


def settle_held(
    *, lease: Lease, settlements: Sequence[Settlement], now: datetime | None = None
) -> dict[int, Outbox]:
    """:func:`outbox_settle` in the caller's transaction: the rows settled, by id."""
    now = now or timezone.now()
    rows = held(lease, [s.outbox_id for s in settlements])
    changed: dict[int, Outbox] = {}
    for settlement in settlements:
        row = rows.get(settlement.outbox_id)
        if row is None:
            continue  # the lease expired and another worker has the row: its outcome counts
        _apply(row, settlement, now)
        changed[row.pk] = row
    _save_settled(list(changed.values()))
    return changed


def lock_games_of(outbox_ids: Sequence[int]) -> None:
    """Lock the games of these rows, in id order: the services' order (game before Outbox
    rows), for a settlement that writes to the games too."""
    game_ids = set(
        Outbox.objects.filter(pk__in=list(outbox_ids), game__isnull=False).values_list(
            "game_id", flat=True
        )
    )
    list(Game.objects.select_for_update().filter(pk__in=game_ids).order_by("pk").values("pk"))


#: Fields an outcome sets besides ``result``.
_OUTCOME_FIELDS = (
    "status", "attempts", "locked_until", "next_attempt_at", "last_error", "sent_at"
)  # fmt: skip


def _save_settled(rows: list[Outbox]) -> None:
    """Save settled rows, each updated once: a second update of a row in the same transaction
    would have PostgreSQL check its foreign key to the game (a share lock on the game row,
    which the bot may hold while it waits for this transaction: a deadlock)."""
    dbrows.update_each(rows, ["result", *_OUTCOME_FIELDS])


def _apply(row: Outbox, settlement: Settlement, now: datetime) -> None:
    if settlement.result is not None:
        row.result = settlement.result
    row.locked_until = None
    failure = settlement.failure
    outcome = settlement.outcome
    undelivered = dict(settlement.undelivered)
    if outcome == "retry" and row.attempts >= settings.OUTBOX_MAX_ATTEMPTS:
        why = failure or Failure(None, "no answer")
        failure = Failure(why.code, why.message, gave_up_after=row.attempts)
        undelivered.update({peer: failure for peer in settlement.waiting})
        if settlement.waiting:
            result = dict(row.result or {})
            failed = dict(result.get("failed") or {})
            failed.update({str(peer): str(failure) for peer in settlement.waiting})
            result["failed"] = failed
            row.result = result
        sent = (row.result or {}).get("sent") or {}
        outcome = "sent" if sent and settlement.waiting else "failed"
    if outcome == "sent":
        row.status = OutboxStatus.SENT
        row.sent_at = now
        row.next_attempt_at = None
        row.last_error = _summary(undelivered) if undelivered else ""
    elif outcome == "again":
        row.next_attempt_at = None
    elif outcome == "held":
        row.next_attempt_at = None
        row.attempts = max(row.attempts - 1, 0)
    elif outcome == "retry":
        row.next_attempt_at = now + timedelta(seconds=retry_delay(row.attempts))
        row.last_error = str(failure) if failure else ""
    else:
        row.status = OutboxStatus.FAILED
        row.next_attempt_at = None
        row.last_error = str(failure) if failure else "failed"
    if settlement.flag and (outcome == "failed" or undelivered):
        _flag(row, failure, undelivered)


def _summary(undelivered: Mapping[int, Failure]) -> str:
    parts = [f"{peer}: {failure}" for peer, failure in sorted(undelivered.items())]
    return "not delivered to " + "; ".join(parts)


def _flag(row: Outbox, failure: Failure | None, undelivered: Mapping[int, Failure]) -> None:
    if row.game_id is None:
        log.warning("Outbox #%s (no game) failed: %s", row.pk, failure or _summary(undelivered))
        return
    why = (failure or Failure(None, "?")).for_gm
    flag_failed_delivery(row, why, {peer: f.for_gm for peer, f in undelivered.items()})
