"""What the many-communities runs (:mod:`bench.communities`) read off the local VK and the
database: when each probe was answered, how long each community's rows waited for delivery,
and whether every community got its rows once each."""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

from .e2e import check_delivery
from .latency import quantiles

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

#: Community ``g``'s VK id, its probe user's (no seat in any game), and the user who writes
#: to it once its runbot was killed (the kill run; not counted in the latency).
COMMUNITY_BASE = 5_000
PROBE_BASE = 90_000_000
RESCUE_BASE = 91_000_000


def community_id(number: int) -> int:
    return COMMUNITY_BASE + number


class Answers:
    """When each community's answers to its probe (and to its rescue probe) reached the
    local VK (hooks on the communities' message stores; they run in the server's thread)."""

    def __init__(self, states: dict[int, Any]) -> None:
        self.times: dict[int, list[float]] = {n: [] for n in states}
        self.rescues: dict[int, float] = {}
        self._lock = threading.Lock()
        for number, state in states.items():
            self._hook(number, state)

    def _hook(self, number: int, state: Any) -> None:
        original = state.store_message
        probe, rescue = PROBE_BASE + number, RESCUE_BASE + number

        def store_message(**fields: Any) -> Any:
            message = original(**fields)
            if fields.get("out") and message.from_id < 0:
                if message.peer_id == probe:
                    with self._lock:
                        self.times[number].append(time.monotonic())
                elif message.peer_id == rescue:
                    with self._lock:
                        self.rescues.setdefault(number, time.monotonic())
            return message

        state.store_message = store_message

    def count(self, number: int) -> int:
        with self._lock:
            return len(self.times[number])

    def at(self, number: int, index: int) -> float | None:
        with self._lock:
            times = self.times[number]
            return times[index] if len(times) > index else None

    def rescue_at(self, number: int) -> float | None:
        with self._lock:
            return self.rescues.get(number)


def delivery_lags() -> tuple[dict[str, Any], dict[str, Any]]:
    """Per community, how long its Outbox rows waited from their commit until VK had them:
    the quantiles of the community with the largest p95, and of the one with the smallest."""
    from gameplay.models import Outbox, OutboxStatus

    per: dict[int, list[float]] = {}
    rows = Outbox.objects.filter(status=OutboxStatus.SENT, group_id__gte=COMMUNITY_BASE)
    # A sent row of a community has both.
    sent_rows = cast(
        "Iterable[tuple[int, datetime, datetime]]",
        rows.values_list("group_id", "created_at", "sent_at"),
    )
    for group, created, sent in sent_rows:
        per.setdefault(int(group), []).append((sent - created).total_seconds())
    if not per:
        return {}, {}
    p95 = {group: quantiles(values)["p95"] for group, values in per.items()}
    worst, best = max(p95, key=lambda g: p95[g]), min(p95, key=lambda g: p95[g])
    return ({"community": worst, **quantiles(per[worst])},
            {"community": best, **quantiles(per[best])})  # fmt: skip


def spread(values: list[int]) -> dict[str, float]:
    if not values:
        return {}
    return {"median": statistics.median(values), "max": max(values), "min": min(values),
            "total": sum(values)}  # fmt: skip


def check_communities(states: dict[int, Any]) -> list[str]:
    """Every community's Outbox rows reached that community once each (messages per
    recipient, board posts in their topic) and nothing else was sent as it."""
    from gameplay.models import Outbox, OutboxStatus

    problems: list[str] = []
    for number, state in states.items():
        problems += check_delivery(state, community_id(number))
    stray = Outbox.objects.filter(group_id__isnull=True).exclude(status=OutboxStatus.SENT)
    problems += [f"Outbox #{row.pk} of no community is {row.status}" for row in stray]
    return problems


def check_applied(
    injected: dict[int, list[str]], replies: Counter[int], votes: dict[int, int]
) -> list[str]:
    """Every event applied once: each community's injected events (``injected[group]``: their
    event ids) recorded (``VkEvent``, unique per community and id), ``replies[user]`` reply
    rows (Outbox) to each probe user, ``votes[game]`` votes in each game's log (the votes
    before the burst and one per voter)."""
    from django.db.models import Count

    from gameplay.models import EventKind, GameEvent, Outbox, OutboxChannel, VkEvent

    problems: list[str] = []
    for group, ids in sorted(injected.items()):
        recorded = VkEvent.objects.filter(group_id=group, event_id__in=ids).count()
        if recorded != len(set(ids)):
            problems.append(f"community {group}: {recorded} of its {len(set(ids))} injected "
                            f"events applied")  # fmt: skip
    rows = Outbox.objects.filter(channel=OutboxChannel.MESSAGE, group_id__gte=COMMUNITY_BASE)
    answered: Counter[int] = Counter()
    for peers in rows.values_list("peer_ids", flat=True):
        answered.update(int(peer) for peer in peers if int(peer) in replies)
    for user, expected in sorted(replies.items()):
        if answered[user] != expected:
            problems.append(f"probe user {user}: {answered[user]} replies to {expected} "
                            f"messages")  # fmt: skip
    logged = GameEvent.objects.filter(game_id__in=list(votes), kind=EventKind.VOTE)
    got = dict(logged.values("game_id").annotate(n=Count("id")).values_list("game_id", "n"))
    for game, expected in sorted(votes.items()):
        if got.get(game, 0) != expected:
            problems.append(f"game #{game}: {got.get(game, 0)} votes in its log, {expected} "
                            f"expected")  # fmt: skip
    return problems
