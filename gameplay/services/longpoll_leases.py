"""Several ``runbot`` processes sharing the communities' long polls (``vkbot.supervisor``).

Each community's Bots Long Poll is polled and applied by the one runbot holding its
:class:`~gameplay.models.LongPollLease`, until the lease expires unrenewed. Every change is a
conditional ``UPDATE`` (claim: only a free, expired or own lease; renew and release: only an
own one), so two runbots never both hold a lease: the row has one ``holder``. The transaction
applying a batch checks the lease first and keeps its row locked until it commits
(:func:`longpoll_lease_check`): a runbot that lost its lease — paused past the expiry, or
stopped while another took over — applies nothing more, and a runbot taking a lease over waits
for the batch being committed under it, then polls from the position that batch stored.

The runbots alive (:class:`~gameplay.models.RunbotProcess`, each renewed by its own heartbeat)
say how many communities each should hold: :func:`fair_share`. Times are the database's clock
(``Now()``): runbots on several hosts need not agree on theirs. ``ttl``: seconds a lease or a
heartbeat lasts unrenewed (``RUNBOT_LEASE_TTL_SECONDS``).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from datetime import timedelta

from django.db import transaction
from django.db.models import Case, DateTimeField, ExpressionWrapper, F, Q, When
from django.db.models.functions import Now

from gameplay.models import LongPollLease, RunbotProcess


class LeaseLost(Exception):
    """This runbot does not hold the community's lease now (it expired, or another runbot took
    it): the batch is not applied, and its long poll stops."""

    def __init__(self, group_id: int, holder: str) -> None:
        super().__init__(f"runbot {holder} no longer holds the lease of group {group_id}")
        self.group_id = group_id
        self.holder = holder


def _in(ttl: float) -> ExpressionWrapper:
    """The database's now plus ``ttl`` seconds."""
    return ExpressionWrapper(Now() + timedelta(seconds=ttl), output_field=DateTimeField())


def runbot_heartbeat(*, holder: str, ttl: float) -> list[str]:
    """Record that runbot ``holder`` is alive for ``ttl`` more seconds, and forget the runbots
    whose heartbeat has stopped; returns every runbot alive now, the longest running first
    (the order :func:`fair_share` gives the odd communities in)."""
    with transaction.atomic():
        mine = RunbotProcess.objects.filter(holder=holder)
        if not mine.update(expires_at=_in(ttl)):
            RunbotProcess.objects.create(holder=holder, started_at=Now(), expires_at=_in(ttl))
        RunbotProcess.objects.filter(expires_at__lte=Now()).delete()
        alive = RunbotProcess.objects.order_by("started_at", "holder")
        return list(alive.values_list("holder", flat=True))


def runbot_leave(*, holder: str) -> None:
    """Runbot ``holder`` stops (its loops have ended): its leases are free for the others at
    once, and it no longer counts among the runbots alive."""
    with transaction.atomic():
        LongPollLease.objects.filter(holder=holder).update(
            holder="", expires_at=None, claimed_at=None
        )
        RunbotProcess.objects.filter(holder=holder).delete()


def fair_share(*, communities: int, alive: Sequence[str], holder: str) -> int:
    """How many of ``communities`` runbot ``holder`` should hold among the runbots ``alive``
    (:func:`runbot_heartbeat`'s order): ``communities // len(alive)`` each, one more for the
    first ``communities % len(alive)`` of them. The shares add up to ``communities``."""
    everyone = list(alive) if holder in alive else [*alive, holder]
    whole, odd = divmod(max(0, communities), len(everyone))
    return whole + (1 if everyone.index(holder) < odd else 0)


def longpoll_lease_claim(*, group_id: int, holder: str, ttl: float) -> bool:
    """Take the lease of community ``group_id`` for ``holder`` for ``ttl`` seconds if it is
    free, expired or already ``holder``'s; whether ``holder`` holds it now."""
    with transaction.atomic():
        LongPollLease.objects.bulk_create([LongPollLease(group_id=group_id)], ignore_conflicts=True)
        takeable = Q(holder="") | Q(holder=holder) | Q(expires_at__isnull=True)
        taken = LongPollLease.objects.filter(takeable | Q(expires_at__lte=Now()), group_id=group_id)
        return bool(
            taken.update(
                holder=holder,
                expires_at=_in(ttl),
                claimed_at=Case(When(holder=holder, then=F("claimed_at")), default=Now()),
            )
        )


def longpoll_lease_claim_free(
    *, group_ids: Collection[int], holder: str, ttl: float, limit: int
) -> list[int]:
    """Take up to ``limit`` of the leases of ``group_ids`` that are free, expired or
    ``holder``'s already (never one another runbot holds), in a random order so that runbots
    claiming at once meet seldom; the ones taken."""
    if limit <= 0 or not group_ids:
        return []
    valid = LongPollLease.objects.filter(group_id__in=group_ids, expires_at__gt=Now())
    valid = valid.exclude(holder__in=["", holder])
    busy = set(valid.values_list("group_id", flat=True))
    candidates = [group_id for group_id in group_ids if group_id not in busy]
    random.shuffle(candidates)
    taken: list[int] = []
    for group_id in candidates:
        if len(taken) >= limit:
            break
        if longpoll_lease_claim(group_id=group_id, holder=holder, ttl=ttl):
            taken.append(group_id)
    return taken


def longpoll_lease_renew(*, group_ids: Collection[int], holder: str, ttl: float) -> set[int]:
    """Extend ``holder``'s leases of ``group_ids`` by ``ttl`` seconds from now; the ones it
    still holds (a lease another runbot has taken after it expired is lost, and stays
    lost). A lease that expired but nobody took is still ``holder``'s, and renewed."""
    if not group_ids:
        return set()
    with transaction.atomic():
        mine = LongPollLease.objects.filter(holder=holder, group_id__in=group_ids)
        mine.update(expires_at=_in(ttl))
        return set(mine.values_list("group_id", flat=True))


def longpoll_lease_release(*, group_id: int, holder: str) -> bool:
    """Free ``holder``'s lease of ``group_id`` (its long poll has stopped) for another runbot;
    whether it was ``holder``'s."""
    released = LongPollLease.objects.filter(holder=holder, group_id=group_id).update(
        holder="", expires_at=None, claimed_at=None
    )
    return bool(released)


def longpoll_lease_check(*, group_id: int, holder: str) -> None:
    """Inside the transaction that applies a batch of community ``group_id``: raise
    :class:`LeaseLost` unless ``holder`` holds its lease and it has not expired. The lease's
    row stays locked until the transaction ends (``select_for_update``; SQLite's write lock
    serialises everything anyway), so no runbot takes the lease over while the batch is being
    committed under it."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("longpoll_lease_check belongs inside the batch's transaction")
    held = LongPollLease.objects.select_for_update().filter(
        group_id=group_id, holder=holder, expires_at__gt=Now()
    )
    if not list(held.values_list("pk", flat=True)):
        raise LeaseLost(group_id, holder)


def longpoll_leases_check(*, group_ids: Collection[int], holder: str) -> set[int]:
    """:func:`longpoll_lease_check` for several communities at once (one statement): which of
    ``group_ids`` ``holder`` holds unexpired leases of now. Their rows stay locked until the
    transaction ends; the batches of the others must not be applied."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("longpoll_leases_check belongs inside the batch's transaction")
    if not group_ids:
        return set()
    held = LongPollLease.objects.select_for_update().filter(
        group_id__in=group_ids, holder=holder, expires_at__gt=Now()
    )
    return set(held.values_list("group_id", flat=True))
