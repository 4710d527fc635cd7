"""Several runbots in the many-communities runs (:mod:`bench.communities`): whose lease each
community is under, the kill of one runbot mid-burst and how long its communities wait, and
the leases lost that a runbot's log tells of."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from .community_figures import COMMUNITY_BASE, RESCUE_BASE, Answers
from .cpu import CpuMeter
from .latency import quantiles
from .procs import Managed

#: The share of the burst's events applied when a runbot is killed.
KILL_AT = 1 / 3
#: How long the leases must stay where they are before the burst (the runbots have started
#: their loops), in lease renewals.
SETTLED_RENEWALS = 2
#: How a runbot's log tells that a long poll stopped on a lost lease (``LeaseLost``'s text).
LEASE_LOST = "no longer holds the lease"


def events_applied(groups: list[int] | None = None) -> Counter[int]:
    """Events applied (``VkEvent``) per community, of ``groups`` or of every bench
    community."""
    from django.db.models import Count

    from gameplay.models import VkEvent

    rows = VkEvent.objects.filter(group_id__gte=COMMUNITY_BASE)
    if groups is not None:
        rows = rows.filter(group_id__in=groups)
    counted = rows.values("group_id").annotate(n=Count("id")).values_list("group_id", "n")
    return Counter({int(group): int(n) for group, n in counted})


def holder_pid(holder: str) -> int | None:
    """The process id in a runbot's holder name (``host:pid:random``)."""
    parts = holder.rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def lease_map(pids: list[int]) -> dict[int, int] | None:
    """Which of ``pids`` holds each bench community's live lease, while every runbot alive is
    one of ``pids`` and each holds a fair share (the shares within one of each other); else
    None."""
    from django.db.models.functions import Now

    from gameplay.models import LongPollLease, RunbotProcess

    alive = {holder_pid(h) for h in RunbotProcess.objects.values_list("holder", flat=True)}
    if alive != set(pids):
        return None
    live = LongPollLease.objects.filter(expires_at__gt=Now()).exclude(holder="")
    held = {int(g): holder_pid(h) for g, h in live.values_list("group_id", "holder")}
    shares = Counter(held.values())
    if set(shares) != set(pids) or max(shares.values()) - min(shares.values()) > 1:
        return None
    return {g: pid for g, pid in held.items() if g >= COMMUNITY_BASE and pid is not None}


def log_size(log: Path) -> int:
    try:
        return log.stat().st_size
    except OSError:
        return 0


def leases_lost(log: Path, since: int) -> int:
    """The lost leases a runbot's log tells of from byte ``since`` on (its warning quotes
    ``LeaseLost``)."""
    try:
        with log.open("rb") as text:
            text.seek(since)
            return text.read().decode(errors="replace").count(LEASE_LOST)
    except OSError:
        return 0


class Kill:
    """One runbot killed (SIGKILL) once :data:`KILL_AT` of the burst's events are applied;
    then a rescue probe writes to each of its communities, and each community's next event
    applied and that probe's answer are timed from the kill."""

    def __init__(self, victim: Managed, events: int, text: str) -> None:
        from django.conf import settings

        self.victim, self.events, self.text = victim, events, text
        self.renew = float(settings.RUNBOT_LEASE_RENEW_SECONDS)
        self.ttl = float(settings.RUNBOT_LEASE_TTL_SECONDS)
        self.at: float | None = None  # monotonic
        self.wall: float = 0.0
        self.applied_before = 0
        self.orphans: dict[int, datetime | None] = {}  # community → its lease's expiry
        self.counts: Counter[int] = Counter()
        self.served: dict[int, float] = {}  # community → seconds after the kill
        self.rescued: set[int] = set()  # community numbers written to after the kill

    def watch(
        self, meter: CpuMeter, states: dict[int, Any], live: list[Managed],
        injected: dict[int, list[str]],
    ) -> None:  # fmt: skip
        """Kill when it is time (then write to the orphans: their ids into ``injected``);
        after it, note the orphans served again."""
        if self.at is None:
            applied_now = sum(events_applied().values())
            if applied_now >= self.events * KILL_AT:
                self._kill(meter, states, live, applied_now)
                for group in self.orphans:
                    number = group - COMMUNITY_BASE
                    update = states[number].inject_message(RESCUE_BASE + number, self.text)
                    injected[group].append(update["event_id"])
                    self.rescued.add(number)
            return
        pending = [g for g in self.orphans if g not in self.served]
        if pending:
            now = events_applied(pending)
            for group in pending:
                if now[group] > self.counts[group]:
                    self.served[group] = time.monotonic() - self.at

    def _kill(
        self, meter: CpuMeter, states: dict[int, Any], live: list[Managed], applied_now: int
    ) -> None:
        from gameplay.models import LongPollLease

        meter.freeze(self.victim)
        self.victim.kill()
        self.at, self.wall = time.monotonic(), time.time()
        live.remove(self.victim)
        self.applied_before = applied_now
        leases = LongPollLease.objects.filter(group_id__gte=COMMUNITY_BASE)
        for group, holder, expires in leases.values_list("group_id", "holder", "expires_at"):
            if holder_pid(holder) == self.victim.pid:
                self.orphans[int(group)] = expires
        self.counts = events_applied(list(self.orphans))

    def over(self, answers: Answers) -> bool:
        """Killed, and every orphan served again and its rescue probe answered."""
        return self.at is not None and all(
            group in self.served and answers.rescue_at(group - COMMUNITY_BASE) is not None
            for group in self.orphans
        )

    def figures(self, answers: Answers) -> dict[str, Any]:
        from gameplay.models import LongPollLease

        if self.at is None:
            return {"killed": False}
        kill_at = self.at
        answered = {
            group: at - kill_at
            for group in self.orphans
            if (at := answers.rescue_at(group - COMMUNITY_BASE)) is not None
        }
        claims = dict(
            LongPollLease.objects.filter(group_id__in=list(self.orphans)).values_list(
                "group_id", "claimed_at"
            )
        )

        def after_kill(moment: datetime | None) -> float | None:
            return None if moment is None else round(moment.timestamp() - self.wall, 2)

        lease_left = [after_kill(e) for e in self.orphans.values()]
        claimed = [after_kill(claims.get(g)) for g in self.orphans]
        return {
            "killed": True,
            "runbot": self.victim.name,
            "applied_before": self.applied_before,
            "events": self.events,
            "communities": len(self.orphans),
            "served_again": quantiles(list(self.served.values())),
            "answered": quantiles(list(answered.values())),
            "unserved": len(self.orphans) - len(self.served),
            "unanswered": len(self.orphans) - len(answered),
            "lease_left": quantiles([v for v in lease_left if v is not None]),
            "claimed": quantiles([v for v in claimed if v is not None]),
            "renew_seconds": self.renew,
            "ttl_seconds": self.ttl,
            "bound_seconds": self.ttl + self.renew,
        }
