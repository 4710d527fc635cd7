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

Each peer (a player's private chat, a chat) reads its messages in the order of their rows: a
message row waiting for a retry (or being sent by another worker) holds the later rows of its
peers back, and only of those peers. :func:`outbox_claim` leaves out a row all of whose
recipients wait so (put off until the earliest retry it waits for), and names in
:attr:`Lease.held` the recipients of a claimed row that must wait; the round sends the rest,
each peer's rows in order (``vkbot.delivery.order``).

A ``create_chat`` row creates something VK cannot de-duplicate (``messages.createChat`` has no
``random_id``), so it is sent at most once: :func:`outbox_record` stores ``create_chat_asked``
before the call (:mod:`outbox.results`), only an answer saying VK did not act removes it, and a
row still marked when it is claimed again is failed and flagged to the GM instead of being sent.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Min, Q, Value
from django.db.models.expressions import Expression, Window
from django.db.models.functions import Coalesce, RowNumber
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel, OutboxStatus

from . import dbrows
from .results import PEER_CHANNELS, board_group, peers_left

#: At most this many board topics are looked at per claim.
MAX_TOPICS_PER_CLAIM = 50


@dataclass(frozen=True)
class Lease:
    """A worker's hold on the rows it claimed: ``until`` is the ``locked_until`` written on
    them, and every write of the round is conditional on it. ``held``: per claimed row, the
    recipients it must not be sent to in this round (an earlier row to them is pending
    outside the claim)."""

    until: datetime
    held: Mapping[int, frozenset[int]] = field(default_factory=dict, compare=False)

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


# --- communities ---------------------------------------------------------------------------------
# A row goes out as its community (``Outbox.group_id``); a row without one as the deployment's
# default community (``default_group``, the environment's), so both count as that community.


def _community(default_group: int | None) -> Expression | F:
    if default_group is None:
        return F("group_id")
    return Coalesce(F("group_id"), Value(int(default_group)))


def _of_groups(groups: Collection[int | None], default_group: int | None) -> Q:
    ids = {int(g) for g in groups if g is not None}
    q = Q(group_id__in=sorted(ids))
    if None in groups or (default_group is not None and default_group in ids):
        q |= Q(group_id__isnull=True)
    return q


def outbox_due_groups(
    *, channels: Collection[str], default_group: int | None = None, now: datetime | None = None
) -> set[int | None]:
    """The communities with rows of ``channels`` due now (None: rows of no community when
    there is no ``default_group``)."""
    rows = Outbox.objects.filter(_due(now or timezone.now()), channel__in=list(channels))
    found = set(rows.order_by().values_list("group_id", flat=True).distinct())
    return {default_group if g is None else int(g) for g in found}


def outbox_postpone(
    *,
    groups: Collection[int | None],
    channels: Collection[str],
    until: datetime,
    default_group: int | None = None,
    now: datetime | None = None,
) -> int:
    """Rows of ``channels`` of communities that cannot send now (disconnected, or without
    the token they need) wait until ``until``: still pending, not leased, no attempt counted.
    Returns how many rows were put off."""
    if not groups or not channels:
        return 0
    return (
        Outbox.objects.filter(_due(now or timezone.now()), channel__in=list(channels))
        .filter(_of_groups(groups, default_group))
        .update(next_attempt_at=until)
    )


@transaction.atomic
def outbox_claim(
    *,
    limit: int,
    lease_seconds: float,
    channels: Collection[str] | None = None,
    now: datetime | None = None,
    max_topics: int = MAX_TOPICS_PER_CLAIM,
    groups: Mapping[int | None, int] | None = None,
    board_groups: Mapping[int | None, int] | None = None,
    default_group: int | None = None,
) -> tuple[Lease, list[Outbox]]:
    """Lease up to ``limit`` due rows (plus up to ``limit`` board posts of up to
    ``max_topics`` topics) for one round.

    Fair across communities: the rows are taken in turns, each community's first due row,
    then each one's second, … (so one community's burst does not hold another's single reply
    back), each community's own rows in id order. ``groups`` (community → most rows) limits
    the communities taken and how many rows of each (None: every community, no bound);
    ``board_groups`` (community → most topics) the same for board posts. A row without a
    community counts as ``default_group``'s.

    Messages are taken per peer in order: a recipient of a row waits while an earlier row to
    it is pending outside the claim (:func:`_hold_for_order`; the lease's ``held``).

    Board posts are taken per topic in order: a post waits while an earlier post of its topic
    is pending (in backoff, or being sent by another worker), and the pending rows recorded as
    one comment are taken together or not at all. Topics are taken in turns across
    communities too, the one waiting longest first. Each claim counts as an attempt.
    """
    now = now or timezone.now()
    until = now + timedelta(seconds=lease_seconds)
    wanted = set(channels) if channels is not None else set(OutboxChannel.values)
    rows: list[Outbox] = []
    held: dict[int, frozenset[int]] = {}
    others = sorted(wanted - {OutboxChannel.BOARD})
    if others and limit > 0 and (groups is None or groups):
        taken, held = _hold_for_order(
            _claim_others(now, limit, others, groups, default_group), now, default_group
        )
        rows.extend(taken)
    if OutboxChannel.BOARD in wanted and limit > 0 and (board_groups is None or board_groups):
        rows.extend(_claim_board(now, limit, max_topics, board_groups, default_group))
    lease = Lease(until, held)
    if not rows:
        return lease, []
    ids = [row.pk for row in rows]
    Outbox.objects.filter(pk__in=ids).update(locked_until=lease.until, attempts=F("attempts") + 1)
    for row in rows:
        row.locked_until = lease.until
        row.attempts += 1
    rows.sort(key=lambda row: row.pk)
    return lease, rows


def _claim_others(
    now: datetime,
    limit: int,
    channels: list[str],
    groups: Mapping[int | None, int] | None,
    default_group: int | None,
) -> list[Outbox]:
    due = Outbox.objects.filter(_due(now), channel__in=channels)
    if groups is not None:
        due = due.filter(_of_groups(groups, default_group))
    community = _community(default_group)
    ranked = (
        due.annotate(
            community=community,
            turn=Window(RowNumber(), partition_by=[community], order_by=F("id").asc()),
        )
        .order_by("turn", "id")
        .values_list("id", "community", "turn")
    )
    if groups is not None:
        # The largest bound in SQL; each community's own in the loop below.
        ranked = ranked.filter(turn__lte=max(groups.values()))
    ids: list[int] = []
    for pk, group, turn in ranked[: limit * 2]:
        if groups is not None and turn > groups.get(group, 0):
            continue
        ids.append(pk)
        if len(ids) >= limit:
            break
    if not ids:
        return []
    return list(
        Outbox.objects.select_for_update(skip_locked=True)
        .filter(_due(now), pk__in=ids)
        .order_by("id")
    )


def _hold_for_order(
    rows: list[Outbox], now: datetime, default_group: int | None
) -> tuple[list[Outbox], dict[int, frozenset[int]]]:
    """The rows to claim, and the recipients of each that must wait: those with an earlier
    message row pending outside ``rows`` (in backoff, under another worker's lease, or locked
    by another claim right now). A row all of whose recipients wait is left out, and put off
    until the earliest retry it waits for when every row it waits for is in backoff (else it
    stays due: the lease it waits for ends soon)."""
    messages = [row for row in rows if row.channel in PEER_CHANNELS]
    if not messages:
        return rows, {}
    claimed = [row.pk for row in rows]
    communities = {_community_of(row, default_group) for row in messages}
    earlier = (
        Outbox.objects.filter(
            _of_groups(communities, default_group),
            status=OutboxStatus.PENDING,
            channel__in=PEER_CHANNELS,
            pk__lt=max(row.pk for row in messages),
        )
        .exclude(pk__in=claimed)
        .order_by("id")
        .only("id", "group_id", "peer_ids", "result", "next_attempt_at", "locked_until")
    )
    first: dict[tuple[int | None, int], Outbox] = {}  # per peer, the earliest such row
    for row in earlier:
        for peer in peers_left(row):
            first.setdefault((_community_of(row, default_group), peer), row)
    if not first:
        return rows, {}
    taken: list[Outbox] = []
    held: dict[int, frozenset[int]] = {}
    put_off: dict[datetime, list[int]] = {}
    for row in rows:
        left = peers_left(row) if row.channel in PEER_CHANNELS else []
        community = _community_of(row, default_group)
        waits = {
            peer: first[(community, peer)]
            for peer in left
            if (community, peer) in first and first[(community, peer)].pk < row.pk
        }
        if not waits:
            taken.append(row)
        elif len(waits) < len(left):
            taken.append(row)
            held[row.pk] = frozenset(waits)
        else:
            retries = [b.next_attempt_at for b in waits.values() if _in_backoff(b, now)]
            if len(retries) == len(waits):
                put_off.setdefault(min(t for t in retries if t is not None), []).append(row.pk)
    for until, ids in put_off.items():
        Outbox.objects.filter(pk__in=ids).update(next_attempt_at=until)
    return taken, held


def _community_of(row: Outbox, default_group: int | None) -> int | None:
    return int(row.group_id) if row.group_id is not None else default_group


def _in_backoff(row: Outbox, now: datetime) -> bool:
    """Pending, free, and due later (waiting for its retry)."""
    free = row.locked_until is None or row.locked_until < now
    return free and row.next_attempt_at is not None and row.next_attempt_at > now


def _claim_board(
    now: datetime,
    limit: int,
    max_topics: int,
    board_groups: Mapping[int | None, int] | None = None,
    default_group: int | None = None,
) -> list[Outbox]:
    due = Outbox.objects.filter(_due(now), channel=OutboxChannel.BOARD)
    if board_groups is not None:
        due = due.filter(_of_groups(board_groups, default_group))
    waiting = (
        due.annotate(community=_community(default_group))
        .values("community", "topic_id")
        .annotate(first=Min("id"))
        .order_by("first")
    )
    queues: dict[int | None, list[int]] = {}
    for entry in waiting:
        queues.setdefault(entry["community"], []).append(int(entry["topic_id"] or 0))
    topics = _in_turns(queues, max(1, min(max_topics, MAX_TOPICS_PER_CLAIM)), board_groups)
    if not topics:
        return []
    # Locked in id order (as every other write here), so two transactions never deadlock.
    pending = list(
        Outbox.objects.select_for_update()
        .filter(
            status=OutboxStatus.PENDING,
            channel=OutboxChannel.BOARD,
            topic_id__in=sorted({topic for _, topic in topics}),
        )
        .order_by("id")
    )
    by_topic: dict[tuple[int | None, int], list[Outbox]] = {key: [] for key in topics}
    for row in pending:
        group = int(row.group_id) if row.group_id is not None else default_group
        key = (group, int(row.topic_id or 0))
        if key in by_topic:
            by_topic[key].append(row)
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


def _in_turns(
    queues: dict[int | None, list[int]],
    most: int,
    bounds: Mapping[int | None, int] | None,
) -> list[tuple[int | None, int]]:
    """(community, topic) pairs: each community's first topic, then each one's second, …,
    at most ``most`` in all and ``bounds[community]`` of each."""
    taken: list[tuple[int | None, int]] = []
    turn = 0
    while len(taken) < most:
        progressed = False
        for group, topics in queues.items():
            bound = len(topics) if bounds is None else bounds.get(group, 0)
            if turn < min(len(topics), bound):
                taken.append((group, topics[turn]))
                progressed = True
                if len(taken) >= most:
                    break
        if not progressed:
            break
        turn += 1
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
