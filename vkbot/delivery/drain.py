"""The delivery loop: claim due Outbox rows, plan, record the plan, send, settle — in rounds.

Every write goes through ``outbox.leases`` and ``gameplay.services.settle``; nothing here
touches the database while requests are in flight. Any number of these loops may run at once
(rq jobs, ``manage.py deliver``), in any number of processes: leases keep them off each other's
rows, the shared rate limiter keeps them within VK's limits together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Min, Q
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel, OutboxStatus
from gameplay.services.settle import delivery_settle
from outbox.leases import (
    MAX_TOPICS_PER_CLAIM,
    Lease,
    is_due,
    outbox_claim,
    outbox_record,
    outbox_release,
)
from outbox.outcomes import Failure, Settlement
from outbox.results import board_group

from .batch import EXECUTE_MAX_CALLS, pack
from .outcome import settle_round
from .plan import plan_round
from .transport import Transport

log = logging.getLogger(__name__)

#: Rows claimed per round (board posts: as many again).
ROUND_ROWS = 100
#: A round's requests must be answered this long before its lease ends, so that its outcome
#: is written while the rows are still its own.
SETTLE_MARGIN = 3.0
#: Sleep between two looks when rows are due but none could be claimed (another worker has
#: them, or they wait behind an earlier post of their topic).
IDLE_SLEEP = 0.2
#: The first look again after a round that claimed nothing while a row was due.
RELOOK_SLEEP = 0.01

GROUP_CHANNELS = (
    OutboxChannel.MESSAGE,
    OutboxChannel.CHAT,
    OutboxChannel.EVENT_ANSWER,
    OutboxChannel.INVITE,
    OutboxChannel.KICK,
    OutboxChannel.CREATE_CHAT,
)


@dataclass
class DrainReport:
    rounds: int = 0
    claimed: int = 0
    sent: int = 0
    retried: int = 0
    failed: int = 0
    requests: int = 0
    #: Seconds until the next pending row falls due when the run ended; None: nothing pending.
    next_due_in: float | None = None
    stopped: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Drainer:
    """Drains the Outbox with one :class:`Transport` (close it when done)."""

    def __init__(self, transport: Transport | None = None, *, group_id: int | None = None) -> None:
        self.transport = transport or Transport()
        self.group_id = group_id if group_id is not None else settings.VK_GROUP_ID
        self.report = DrainReport()
        self.channels = self._channels()
        #: Seconds until the admin token may send again, when the last round found it busy.
        self.slot_in = 0.0

    def _channels(self) -> list[str]:
        channels: list[str] = []
        if self.transport.has_token("group"):
            channels.extend(GROUP_CHANNELS)
        else:
            log.error("Delivery: VK_GROUP_TOKEN is not set; private and chat messages wait")
        if self.transport.has_token("user") and self.group_id:
            channels.append(OutboxChannel.BOARD)
        else:
            log.warning("Delivery: VK_USER_TOKEN or VK_GROUP_ID is not set; board posts wait")
        return channels

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Drainer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- one round ---------------------------------------------------------------------------

    def round(self) -> int:
        """One round for the community token's channels, then one for the board posts if the
        admin token may send a request now; returns how many rows they claimed.

        The two go out in rounds of their own, so a private message, a button's answer or a
        chat request never waits while board comments wait for the admin token's few
        requests per second; board posts are claimed only when a request can go out at once,
        and only as many topics as the free requests carry (one comment per topic, up to
        :data:`~vkbot.delivery.batch.EXECUTE_MAX_CALLS` per ``execute``)."""
        self.slot_in = 0.0
        claimed = 0
        group = [c for c in self.channels if c != OutboxChannel.BOARD]
        if group:
            claimed += self._round(group)
        if OutboxChannel.BOARD in self.channels:
            free, self.slot_in = self.transport.free_slots("user")
            if free > 0:
                topics = free * EXECUTE_MAX_CALLS
                claimed += self._round([OutboxChannel.BOARD], max_topics=topics)
        return claimed

    def _round(self, channels: list[str], max_topics: int = MAX_TOPICS_PER_CLAIM) -> int:
        """Claim, send and settle one batch of ``channels``; returns how many rows it
        claimed."""
        lease_seconds = float(settings.OUTBOX_LEASE_SECONDS)
        lease, rows = outbox_claim(
            limit=ROUND_ROWS, lease_seconds=lease_seconds, channels=channels,
            max_topics=max_topics,
        )  # fmt: skip
        if not rows:
            return 0
        log.debug("Delivery: claimed %s rows", len(rows))
        self.report.rounds += 1
        self.report.claimed += len(rows)
        try:
            settlements = self._deliver(lease, rows, lease_seconds)
        except Exception as error:  # a bug: the rows back off, and fail after max attempts
            log.exception("Delivery: a round failed")
            settlements = [
                Settlement(row.pk, "retry", failure=Failure(None, f"internal error: {error!r}"))
                for row in rows
            ]
        if settlements is None:
            return len(rows)
        delivery_settle(lease=lease, settlements=settlements)
        log.debug("Delivery: settled %s rows", len(settlements))
        for settlement in settlements:
            if settlement.outcome == "sent":
                self.report.sent += 1
            elif settlement.outcome == "retry":
                self.report.retried += 1
            elif settlement.outcome == "failed":
                self.report.failed += 1
        return len(rows)

    def _deliver(
        self, lease: Lease, rows: list[Outbox], lease_seconds: float
    ) -> list[Settlement] | None:
        plan = plan_round(rows, group_id=self.group_id, texts=_unclaimed_members(rows))
        if plan.results:
            held = outbox_record(lease=lease, results=plan.results)
            if held != set(plan.results):  # the lease ran out already: start over
                log.warning("Delivery: lost the lease on %s rows", len(set(plan.results) - held))
                outbox_release(lease=lease, ids=[row.pk for row in rows])
                return None
        covered = plan.row_ids()
        stray = [row.pk for row in rows if row.pk not in covered]
        if stray:  # pragma: no cover - every channel is planned; kept as a safety net
            outbox_release(lease=lease, ids=stray)
        requests = pack(plan.calls)
        margin = min(SETTLE_MARGIN, lease_seconds / 4)
        before = self.transport.requests_sent
        replies = self.transport.send(requests, timeout=lease.seconds_left() - margin)
        self.report.requests += self.transport.requests_sent - before
        answered = [
            (call, result)
            for request, results in zip(requests, replies, strict=True)
            for call, result in zip(request.calls, results, strict=True)
        ]
        return settle_round(rows, plan, answered)

    # --- the loop -------------------------------------------------------------------------------

    def run(
        self,
        *,
        max_seconds: float,
        wait_up_to: float,
        stop: Callable[[], bool] | None = None,
    ) -> DrainReport:
        """Rounds until nothing is due and nothing falls due within ``wait_up_to`` seconds
        (retries, leases of a dead worker), or ``max_seconds`` have passed, or ``stop()``."""
        deadline = time.monotonic() + max_seconds
        idle_looks = 0  # looks in a row that claimed nothing
        while True:
            if stop is not None and stop():
                self.report.stopped = "asked to stop"
                break
            if time.monotonic() >= deadline:
                self.report.stopped = "time limit"
                break
            if self.round():
                idle_looks = 0
                continue
            delay = next_due_in(self.channels)
            if delay is None:
                self.report.stopped = "nothing pending"
                break
            if delay > wait_up_to or time.monotonic() + delay >= deadline:
                self.report.stopped = "the next row is due later"
                break
            if delay == 0 and self.slot_in > 0:  # board posts wait for the admin token
                delay = max(min(self.slot_in, IDLE_SLEEP), 0.02)
            elif delay == 0 and idle_looks == 0:
                # A row due that this round did not see: most often one committed while the
                # round ran. Look again at once rather than after a whole IDLE_SLEEP; rows
                # that stay unclaimable (another worker's) back off to IDLE_SLEEP.
                delay = RELOOK_SLEEP
            else:
                delay = max(delay, IDLE_SLEEP)
            idle_looks += 1
            time.sleep(delay)
        self.report.next_due_in = next_due_in(self.channels) if self.channels else None
        return self.report


def _unclaimed_members(rows: list[Outbox]) -> dict[int, str]:
    """Texts of the rows recorded in the same board comment as a claimed post but not claimed
    with it (sent or failed meanwhile); "" for one that was deleted."""
    claimed = {row.pk for row in rows}
    wanted = {pk for row in rows for pk in board_group(row)} - claimed
    if not wanted:
        return {}
    found = dict(Outbox.objects.filter(pk__in=wanted).values_list("pk", "text"))
    return {pk: found.get(pk, "") for pk in wanted}


def drain(
    *, max_seconds: float, wait_up_to: float, stop: Callable[[], bool] | None = None
) -> DrainReport:
    """One drain run with clients built from the settings."""
    with Drainer() as drainer:
        return drainer.run(max_seconds=max_seconds, wait_up_to=wait_up_to, stop=stop)


def next_due_in(channels: Collection[str], now: datetime | None = None) -> float | None:
    """Seconds until a pending row of these channels can be claimed (0: now), or None.

    A board post counts only when it is the first pending post of its topic (they go in
    order); a row under someone's lease counts from the lease's end."""
    now = now or timezone.now()
    times: list[datetime] = []
    others = [c for c in channels if c != OutboxChannel.BOARD]
    if others:
        pending = Outbox.objects.filter(status=OutboxStatus.PENDING, channel__in=others)
        free = Q(locked_until__isnull=True) | Q(locked_until__lt=now)
        if pending.filter(
            free, Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
        ).exists():
            return 0.0
        waiting = pending.filter(free).aggregate(at=Min("next_attempt_at"))["at"]
        leased = pending.filter(locked_until__gte=now).aggregate(at=Min("locked_until"))["at"]
        times.extend(t for t in (waiting, leased) if t is not None)
    if OutboxChannel.BOARD in channels:
        firsts: dict[int, Outbox] = {}
        for row in (
            Outbox.objects.filter(status=OutboxStatus.PENDING, channel=OutboxChannel.BOARD)
            .order_by("id")
            .only("id", "topic_id", "status", "next_attempt_at", "locked_until")
        ):
            firsts.setdefault(int(row.topic_id or 0), row)
        for row in firsts.values():
            if is_due(row, now):
                return 0.0
            times.append(max(t for t in (row.next_attempt_at, row.locked_until, now) if t))
    if not times:
        return None
    return max(0.0, (min(times) - now).total_seconds())
