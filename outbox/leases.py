"""The delivery worker's lease on Outbox rows: claim, record the plan, release.

The delivery worker (``vkbot.delivery``) drains pending rows in rounds:

1. :func:`outbox_claim` leases due rows: ``locked_until`` is set to the lease's end, and that
   exact value is the lease's fence — every later write of the round is conditional on it, so
   a worker whose lease expired (it was slow, or killed and replaced) changes nothing.
2. :func:`outbox_record` stores, *before* the call to VK, how the rows will be sent: the
   ``random_id`` each row's recipients get (the row's own, or the lowest row's of a group of
   rows with the same text merged into one ``peer_ids`` send) and the board comment a post is
   merged into (its ``guid`` and members). A retry after a crash re-sends exactly that, so VK
   drops the repeat.
3. :func:`outbox.outcomes.outbox_settle` records what VK answered.

A ``create_chat`` row creates something VK cannot de-duplicate (``messages.createChat`` has no
``random_id``), so it is sent at most once: :func:`outbox_record` stores ``create_chat_asked``
before the call (:mod:`outbox.results`), only an answer saying VK did not act removes it, and a
row still marked when it is claimed again is failed and flagged to the GM instead of being sent.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel, OutboxStatus

from . import dbrows
from .results import board_group

#: At most this many board topics are looked at per claim.
MAX_TOPICS_PER_CLAIM = 50


@dataclass(frozen=True)
class Lease:
    """A worker's hold on the rows it claimed: ``until`` is the ``locked_until`` written on
    them, and every write of the round is conditional on it."""

    until: datetime

    def seconds_left(self, now: datetime | None = None) -> float:
        return (self.until - (now or timezone.now())).total_seconds()


def _due(now: datetime) -> Q:
    return (
        Q(status=OutboxStatus.PENDING)
        & (Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        & (Q(locked_until__isnull=True) | Q(locked_until__lt=now))
    )


def is_due(row: Outbox, now: datetime) -> bool:
    return (
        row.status == OutboxStatus.PENDING
        and (row.next_attempt_at is None or row.next_attempt_at <= now)
        and (row.locked_until is None or row.locked_until < now)
    )


def outbox_due_exists(now: datetime | None = None) -> bool:
    """Whether any row is due for sending now (pending, not in backoff, not leased)."""
    return Outbox.objects.filter(_due(now or timezone.now())).exists()


@transaction.atomic
def outbox_claim(
    *,
    limit: int,
    lease_seconds: float,
    channels: Collection[str] | None = None,
    now: datetime | None = None,
    max_topics: int = MAX_TOPICS_PER_CLAIM,
) -> tuple[Lease, list[Outbox]]:
    """Lease up to ``limit`` due rows (plus up to ``limit`` board posts of up to
    ``max_topics`` topics) for one round.

    Board posts are taken per topic in order: a post waits while an earlier post of its topic
    is pending (in backoff, or being sent by another worker), and the pending rows recorded as
    one comment are taken together or not at all. Each claim counts as an attempt.
    """
    now = now or timezone.now()
    lease = Lease(now + timedelta(seconds=lease_seconds))
    wanted = set(channels) if channels is not None else set(OutboxChannel.values)
    rows: list[Outbox] = []
    others = sorted(wanted - {OutboxChannel.BOARD})
    if others and limit > 0:
        rows.extend(
            Outbox.objects.select_for_update(skip_locked=True)
            .filter(_due(now), channel__in=others)
            .order_by("id")[:limit]
        )
    if OutboxChannel.BOARD in wanted and limit > 0:
        rows.extend(_claim_board(now, limit, max_topics))
    if not rows:
        return lease, []
    ids = [row.pk for row in rows]
    Outbox.objects.filter(pk__in=ids).update(locked_until=lease.until, attempts=F("attempts") + 1)
    for row in rows:
        row.locked_until = lease.until
        row.attempts += 1
    rows.sort(key=lambda row: row.pk)
    return lease, rows


def _claim_board(now: datetime, limit: int, max_topics: int) -> list[Outbox]:
    topics = list(
        Outbox.objects.filter(_due(now), channel=OutboxChannel.BOARD)
        .order_by()
        .values_list("topic_id", flat=True)
        .distinct()[: max(1, min(max_topics, MAX_TOPICS_PER_CLAIM))]
    )
    if not topics:
        return []
    # Locked in id order (as every other write here), so two transactions never deadlock.
    pending = list(
        Outbox.objects.select_for_update()
        .filter(status=OutboxStatus.PENDING, channel=OutboxChannel.BOARD, topic_id__in=topics)
        .order_by("id")
    )
    by_topic: dict[int, list[Outbox]] = {}
    for row in pending:
        by_topic.setdefault(int(row.topic_id or 0), []).append(row)
    taken: list[Outbox] = []
    for topic_rows in by_topic.values():
        prefix: list[Outbox] = []
        for row in topic_rows:
            if not is_due(row, now) or len(prefix) >= limit:
                break
            prefix.append(row)
        taken.extend(_whole_groups(prefix, {row.pk for row in topic_rows}))
        if len(taken) >= limit:
            break
    return taken


def _whole_groups(prefix: list[Outbox], pending: set[int]) -> list[Outbox]:
    """The prefix up to the first recorded comment whose pending members are not all in it
    (members already sent or failed do not hold it back: the comment is re-sent whole)."""
    ids = {row.pk for row in prefix}
    for index, row in enumerate(prefix):
        if not (set(board_group(row)) & pending) <= ids:
            return prefix[:index]
    return prefix


def held(lease: Lease, ids: Iterable[int]) -> dict[int, Outbox]:
    """The rows among ``ids`` still held under ``lease``, locked, in id order."""
    rows = (
        Outbox.objects.select_for_update()
        .filter(pk__in=list(ids), locked_until=lease.until, status=OutboxStatus.PENDING)
        .order_by("id")
    )
    return {row.pk: row for row in rows}


@transaction.atomic
def outbox_record(*, lease: Lease, results: Mapping[int, dict[str, Any]]) -> set[int]:
    """Store each row's new ``result`` (how it will be sent) before the call to VK; returns the
    ids still held under ``lease`` (the others must not be sent by this worker)."""
    rows = held(lease, results)
    for row in rows.values():
        row.result = results[row.pk]
    dbrows.update_each(list(rows.values()), ["result"])
    return set(rows)


@transaction.atomic
def outbox_release(*, lease: Lease, ids: Iterable[int]) -> int:
    """Give rows back unsent (due again at once; the claim does not count as an attempt)."""
    rows = held(lease, ids)
    return Outbox.objects.filter(pk__in=list(rows)).update(
        locked_until=None, attempts=F("attempts") - 1
    )
