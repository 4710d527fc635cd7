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
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Min, Q
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel, OutboxStatus
from gameplay.selectors.inbox import inbound_groups
from gameplay.services.settle import delivery_settle
from ops.outages import database_lost
from outbox.leases import (
    MAX_TOPICS_PER_CLAIM,
    Lease,
    is_due,
    outbox_claim,
    outbox_due_groups,
    outbox_postpone,
    outbox_record,
    outbox_release,
)
from outbox.outcomes import Failure, Settlement
from outbox.results import board_group

from . import senders as community_senders
from .batch import EXECUTE_MAX_CALLS, Call, CallResult, Request, TokenKind, pack
from .coalesce import Coalescer
from .order import send_in_order
from .outcome import settle_round
from .plan import plan_round
from .refusals import answer_refusals
from .senders import Senders
from .transport import Transport

log = logging.getLogger(__name__)

#: Rows claimed per round (board posts: as many again); a round of many communities takes up
#: to an ``execute``'s calls of each (:data:`COMMUNITY_ROUND_ROWS`), at most
#: :data:`MAX_ROUND_ROWS` in all, so that the rows one commit left for each community go in
#: one request rather than in the turns of several rounds.
ROUND_ROWS = 100
COMMUNITY_ROUND_ROWS = EXECUTE_MAX_CALLS
MAX_ROUND_ROWS = 600
#: A round's requests must be answered this long before its lease ends, so that its outcome
#: is written while the rows are still its own.
SETTLE_MARGIN = 3.0
#: Sleep between two looks when rows are due but none could be claimed (another worker has
#: them, or they wait behind an earlier post of their topic).
IDLE_SLEEP = 0.2
#: The first look again after a round that claimed nothing while a row was due.
RELOOK_SLEEP = 0.01


@dataclass
class DrainReport:
    rounds: int = 0
    claimed: int = 0
    sent: int = 0
    retried: int = 0
    failed: int = 0
    requests: int = 0
    #: Admin tokens renewed after VK refused them in a round (their requests sent again).
    renewed: int = 0
    #: Seconds until the next pending row falls due when the run ended; None: nothing pending.
    next_due_in: float | None = None
    stopped: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Drainer:
    """Drains the Outbox with one :class:`Transport` (close it when done), every row as its
    community (:mod:`.senders`), fairly across communities."""

    def __init__(self, transport: Transport | None = None, *, group_id: int | None = None) -> None:
        self.transport = transport or Transport()
        self.senders = Senders(self.transport, default=group_id)
        self.group_id = self.senders.default
        self.report = DrainReport()
        self.channels = self._channels()
        #: Seconds until a busy token may send again, when the last round left rows for it.
        self.slot_in = 0.0
        #: Communities held while their Callback events are applied (.coalesce), per kind
        #: of round, and the seconds until the first of them is let go (0: none held).
        hold = float(settings.OUTBOX_COALESCE_SECONDS)
        self.coalescers = {kind: Coalescer(hold, _in_hand) for kind in ("group", "user")}
        self.hold_in = 0.0

    def _channels(self) -> list[str]:
        self._channels_at = time.monotonic()
        channels = self.senders.channels()
        if not channels:
            log.error(
                "Delivery: no community can send (no VK_GROUP_TOKEN, no connected community); "
                "the Outbox waits"
            )
        return channels

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Drainer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- one round ---------------------------------------------------------------------------

    def round(self) -> int:
        """One round for the community tokens' channels, then one for the board posts of the
        communities whose admin token may send a request now; returns how many rows they
        claimed.

        The two go out in rounds of their own, so a private message, a button's answer or a
        chat request never waits while board comments wait for the admin tokens' few
        requests per second. Each round takes the communities in turns (``outbox_claim``),
        only those whose token may send now, and as many rows or topics of each as its free
        requests carry (one comment per topic, up to
        :data:`~vkbot.delivery.batch.EXECUTE_MAX_CALLS` calls per ``execute``): a community
        at its limit waits for its next slot without holding the others back."""
        if time.monotonic() - self._channels_at >= community_senders.REFRESH_SECONDS:
            self.channels = self._channels()
        self.slot_in = 0.0
        self.hold_in = 0.0
        claimed = 0
        group = [c for c in self.channels if c != OutboxChannel.BOARD]
        if group:
            bounds = self._bounds(group, "group")
            if bounds:
                claimed += self._round(group, groups=bounds)
        if OutboxChannel.BOARD in self.channels:
            topics = self._bounds([OutboxChannel.BOARD], "user")
            if topics:
                claimed += self._round(
                    [OutboxChannel.BOARD], max_topics=sum(topics.values()), board_groups=topics
                )
        return claimed

    def _bounds(self, channels: list[str], kind: TokenKind) -> dict[int | None, int]:
        """Per community with rows of ``channels`` due, how many rows (topics, for board
        posts) it may have in this round; the rows of communities that cannot send them are
        put off.

        Board posts: only communities whose admin token may send now, as many topics as its
        free requests carry. The community tokens' channels: the communities whose token may
        send now, a whole round each (taken in turns); only when every one of them is at its
        limit are they all taken, their requests then waiting for the limiter as one
        community's always did."""
        default = self.senders.default
        due = outbox_due_groups(channels=channels, default_group=default)
        if not due:
            return {}
        able: list[int | None] = []
        unable: list[int | None] = []
        for community in due:
            sender = self.senders.get(community)
            (able if sender is not None and sender.can_send(channels[0]) else unable).append(
                community
            )
        if unable:
            outbox_postpone(
                groups=unable,
                channels=channels,
                until=timezone.now() + timedelta(seconds=community_senders.WAIT_SECONDS),
                default_group=default,
            )
        held, first_out = self.coalescers[kind].held(able)
        if held:
            able = [c for c in able if c not in held]
            self.hold_in = min(self.hold_in, first_out) if self.hold_in > 0 else first_out
        free_of = self.transport.free_slots_of(kind, able)
        ready = {c: free for c, (free, _) in free_of.items() if free > 0}
        waits = [wait for free, wait in free_of.values() if free <= 0]
        if kind == "group":
            return {c: ROUND_ROWS for c in (ready or free_of)}
        if waits:
            wait = min(waits)
            self.slot_in = min(self.slot_in, wait) if self.slot_in > 0 else wait
        return {c: free * EXECUTE_MAX_CALLS for c, free in ready.items()}

    def _round(
        self,
        channels: list[str],
        max_topics: int = MAX_TOPICS_PER_CLAIM,
        *,
        groups: dict[int | None, int] | None = None,
        board_groups: dict[int | None, int] | None = None,
    ) -> int:
        """Claim, send and settle one batch of ``channels``; returns how many rows it
        claimed."""
        lease_seconds = float(settings.OUTBOX_LEASE_SECONDS)
        communities = len(groups or board_groups or ())
        limit = min(MAX_ROUND_ROWS, max(ROUND_ROWS, COMMUNITY_ROUND_ROWS * communities))
        lease, rows = outbox_claim(
            limit=limit, lease_seconds=lease_seconds, channels=channels,
            max_topics=max_topics, groups=groups, board_groups=board_groups,
            default_group=self.senders.default,
        )  # fmt: skip
        if not rows:
            return 0
        log.debug("Delivery: claimed %s rows", len(rows))
        self.report.rounds += 1
        self.report.claimed += len(rows)
        try:
            settlements = self._deliver(lease, rows, lease_seconds)
        except Exception as error:  # a bug: the rows back off, and fail after max attempts
            if database_lost(error):  # nothing can be settled: the run ends (jobs.py)
                raise
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
        """Each community's rows planned as that community, their requests sent in turns
        (each community's first request, then each one's second, …), settled."""
        texts = _unclaimed_members(rows)
        by_community: dict[int | None, list[Outbox]] = {}
        for row in rows:
            by_community.setdefault(self.senders.key(row.group_id), []).append(row)
        plans = {
            community: plan_round(members, group_id=community, texts=texts, held=lease.held)
            for community, members in by_community.items()
        }
        results = {pk: result for plan in plans.values() for pk, result in plan.results.items()}
        if results:
            held = outbox_record(lease=lease, results=results)
            if held != set(results):  # the lease ran out already: start over
                log.warning("Delivery: lost the lease on %s rows", len(set(results) - held))
                outbox_release(lease=lease, ids=[row.pk for row in rows])
                return None
        covered = set().union(*(plan.row_ids() for plan in plans.values()))
        stray = [row.pk for row in rows if row.pk not in covered]
        if stray:  # pragma: no cover - every channel is planned; kept as a safety net
            outbox_release(lease=lease, ids=stray)
        requests = in_turns(
            [pack(plan.calls, community=community) for community, plan in plans.items()]
        )
        margin = min(SETTLE_MARGIN, lease_seconds / 4)
        before = self.transport.requests_sent
        # Each peer's rows in order: a request sharing a recipient with an earlier one waits.
        replies = send_in_order(self.transport, requests, timeout=lease.seconds_left() - margin)
        # An admin token VK refused: renewed and its requests sent once more, or held.
        refusals = answer_refusals(
            self.transport, self.senders, requests, replies,
            timeout=lease.seconds_left() - margin,
        )  # fmt: skip
        self.report.requests += self.transport.requests_sent - before
        self.report.renewed += refusals.renewed
        answered: dict[int | None, list[tuple[Call, CallResult]]] = {c: [] for c in plans}
        for request, results_of in zip(requests, refusals.replies, strict=True):
            if any(pk in refusals.held for call in request.calls for pk in call.row_ids):
                continue
            answered[request.community].extend(zip(request.calls, results_of, strict=True))
        if refusals.held:
            outbox_release(lease=lease, ids=sorted(refusals.held))
        settlements: list[Settlement] = []
        for community, plan in plans.items():
            settlements.extend(settle_round(by_community[community], plan, answered[community]))
        return [s for s in settlements if s.outbox_id not in refusals.held]

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
            if delay == 0 and self.hold_in > 0:  # held while their events are applied
                delay = max(min(self.hold_in, IDLE_SLEEP), RELOOK_SLEEP)
            elif delay == 0 and self.slot_in > 0:  # board posts wait for the admin token
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


def in_turns(queues: list[list[Request]]) -> list[Request]:
    """The requests of several communities: each one's first, then each one's second, …"""
    ordered: list[Request] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        ordered.extend(q[turn] for q in queues if turn < len(q))
    return ordered


def _in_hand(group_ids: list[int]) -> set[int]:
    return inbound_groups(group_ids=group_ids)


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
        firsts: dict[tuple[int | None, int], Outbox] = {}
        for row in (
            Outbox.objects.filter(status=OutboxStatus.PENDING, channel=OutboxChannel.BOARD)
            .order_by("id")
            .only("id", "group_id", "topic_id", "status", "next_attempt_at", "locked_until")
        ):
            firsts.setdefault((row.group_id, int(row.topic_id or 0)), row)
        for row in firsts.values():
            if is_due(row, now):
                return 0.0
            times.append(max(t for t in (row.next_attempt_at, row.locked_until, now) if t))
    if not times:
        return None
    return max(0.0, (min(times) - now).total_seconds())
