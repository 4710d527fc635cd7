"""What the many-communities runs (:mod:`bench.communities`) read off the local VK and the
database: a run's figures (:class:`CommunitiesRun`), when each probe was answered, the reply
latency and how long each community's rows waited for delivery, the VK requests beside their
bound, and whether every event was applied once and every community got its rows once each."""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .bound import lower_bound, timely_bound
from .e2e import DELIVERY_METHODS, EventsFigures, check_delivery
from .latency import quantiles

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from .games import BenchGame

#: Community ``g``'s VK id, its probe user's (no seat in any game), and the user who writes
#: to it once its runbot was killed (the kill run; not counted in the latency).
COMMUNITY_BASE = 5_000
PROBE_BASE = 90_000_000
RESCUE_BASE = 91_000_000


@dataclass
class CommunitiesRun(EventsFigures):
    mode: str  # "longpoll" or "callback"
    communities: int
    #: The runbots of a long-poll run, and whether one of them was killed mid-burst.
    runbots: int = 0
    killed: bool = False
    events: int = 0
    seconds: float = 0.0
    #: Delivery requests per community (their median and largest), and the lower bound's;
    #: the largest ratio of a community's requests to its bound; the requests per method
    #: (median per community) and the Outbox rows per community.
    requests: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    #: The bound when each private reply must also go out within the reply-latency target of
    #: its commit (:func:`bench.bound.timely_bound`): what that target adds to VK's limits.
    bound_timely: dict[str, float] = field(default_factory=dict)
    requests_over_bound: float = 0.0
    #: The community furthest over its bound: its requests, bound, Outbox rows and methods.
    requests_worst: dict[str, Any] = field(default_factory=dict)
    methods: dict[str, float] = field(default_factory=dict)
    outbox_rows: dict[str, float] = field(default_factory=dict)
    latency_all: dict[str, float] = field(default_factory=dict)
    latency_worst: dict[str, Any] = field(default_factory=dict)
    latency_best: dict[str, Any] = field(default_factory=dict)
    #: The delivery's share alone: an Outbox row's commit to its answer from VK (``sent_at``),
    #: p95 per community, the least- and best-served community's.
    delivery_worst: dict[str, Any] = field(default_factory=dict)
    delivery_best: dict[str, Any] = field(default_factory=dict)
    bot_peak_rss_mb: float = 0.0
    runbot_peak_rss_mb: list[float] = field(default_factory=list)
    web_peak_rss_mb: list[float] = field(default_factory=list)
    worker_peak_rss_mb: float = 0.0
    #: CPU seconds per process (bot or runbot-N or web-N, worker, postgres, bench) from the
    #: injection until the burst was applied and delivered; the load average (1 min) before
    #: and after the run.
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    load_average: list[float] = field(default_factory=list)
    #: Long polls a runbot stopped during the run because it had lost the community's lease
    #: (its batch refused: the lease expired unrenewed, or another runbot took it), from the
    #: runbots' logs (``gameplay.services.longpoll_leases.LeaseLost``).
    leases_lost: int = 0
    #: The kill (a killed run): when, which communities, how long until served again.
    kill: dict[str, Any] = field(default_factory=dict)
    exactly_once: bool | None = None
    problems: list[str] = field(default_factory=list)


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


def applied(mode: str, states: dict[int, Any], targets: dict[int, int], events: int) -> bool:
    """Every injected event applied: the long poll's position of every community at its
    target (long poll), or every event recorded and the pushers idle (Callback)."""
    from gameplay.models import PollState, VkEvent

    if mode == "callback":
        return VkEvent.objects.filter(group_id__gte=COMMUNITY_BASE).count() >= events and all(
            state.callbacks.pending == 0 for state in states.values()
        )
    positions = dict(
        PollState.objects.filter(group_id__gte=COMMUNITY_BASE).values_list("group_id", "ts")
    )
    for number, target in targets.items():
        ts = positions.get(community_id(number))
        if not ts or not str(ts).isdigit() or int(ts) < target:
            return False
    return True


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


def latency_figures(
result: CommunitiesRun, answers: Answers, sent_at: dict[tuple[int, int], float],
    states: dict[int, Any],
) -> None:  # fmt: skip
    per: dict[int, list[float]] = {n: [] for n in states}
    for (number, k), at in sent_at.items():
        answered = answers.at(number, k)
        if answered is not None:
            per[number].append(answered - at)
    result.latency_all = quantiles([v for values in per.values() for v in values])
    p95 = {n: quantiles(values)["p95"] for n, values in per.items() if values}
    if not p95:
        return
    worst = max(p95, key=lambda n: p95[n])
    best = min(p95, key=lambda n: p95[n])
    result.latency_worst = {"community": community_id(worst), **quantiles(per[worst])}
    result.latency_best = {"community": community_id(best), **quantiles(per[best])}
    result.delivery_worst, result.delivery_best = delivery_lags()


def request_figures(result: CommunitiesRun, states: dict[int, Any], since: dict[int, int]) -> None:
    from gameplay.models import Outbox

    from .targets import REPLY_P95_SECONDS

    made, bounds, timely, rows, ratios = [], [], [], [], []
    methods: dict[str, list[int]] = {}
    per_method: dict[int, Counter[str]] = {}
    for number, state in states.items():
        calls = Counter(
            record.method
            for record in state.calls(since=since[number], include_inner=False)
            if record.method in DELIVERY_METHODS
        )
        made.append(sum(calls.values()))
        per_method[number] = calls
        for method in DELIVERY_METHODS:
            methods.setdefault(method, []).append(calls[method])
        community_rows = Outbox.objects.filter(group_id=community_id(number))
        bounds.append(lower_bound(community_rows))
        timely.append(timely_bound(community_rows, REPLY_P95_SECONDS))
        rows.append(community_rows.count())
        ratios.append(made[-1] / bounds[-1] if bounds[-1] else float(made[-1]))
    result.requests = spread(made)
    result.bound = spread(bounds)
    result.bound_timely = spread(timely)
    result.outbox_rows = spread(rows)
    result.requests_over_bound = round(max(ratios, default=0.0), 2)
    if ratios:
        worst = max(range(len(ratios)), key=ratios.__getitem__)
        number = list(states)[worst]
        result.requests_worst = {
            "community": community_id(number), "requests": made[worst],
            "bound": bounds[worst], "bound_timely": timely[worst], "rows": rows[worst],
            "methods": dict(sorted(per_method[number].items())),
        }  # fmt: skip
    result.methods = {
        method: statistics.median(counts)
        for method, counts in sorted(methods.items())
        if any(counts)
    }


def votes_logged(games: list[BenchGame]) -> dict[int, int]:
    """Votes in each game's log."""
    from django.db.models import Count

    from gameplay.models import EventKind, GameEvent

    rows = GameEvent.objects.filter(game_id__in=[g.game_id for g in games], kind=EventKind.VOTE)
    counted = rows.values("game_id").annotate(n=Count("id")).values_list("game_id", "n")
    return {int(game): int(n) for game, n in counted}
