"""gameplay.services.longpoll_leases: a community's long-poll lease claimed, renewed, expired,
taken over after expiry and released; the check a batch's transaction makes; the runbots'
heartbeats and each one's fair share. On both databases, with the database's clock: an
expiry is waited out (a fraction of a second) or written into the row."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.utils import timezone

from gameplay.models import LongPollLease, RunbotProcess
from gameplay.services.longpoll_leases import (
    LeaseLost,
    fair_share,
    longpoll_lease_check,
    longpoll_lease_claim,
    longpoll_lease_claim_free,
    longpoll_lease_release,
    longpoll_lease_renew,
    runbot_heartbeat,
    runbot_leave,
)

pytestmark = pytest.mark.django_db

A, B = "host:1:aa", "host:2:bb"
GROUP = 501
TTL = 6.0
#: A lease short enough to be waited out.
SHORT = 0.3


def lease() -> LongPollLease:
    return LongPollLease.objects.get(group_id=GROUP)


def expire(group_id: int = GROUP) -> None:
    """As if its holder had stopped renewing a while ago."""
    past = timezone.now() - timedelta(seconds=1)
    LongPollLease.objects.filter(group_id=group_id).update(expires_at=past)


def holds(holder: str, group_id: int = GROUP) -> bool:
    """Whether ``holder``'s batch would be applied now (the check in a transaction)."""
    try:
        with transaction.atomic():
            longpoll_lease_check(group_id=group_id, holder=holder)
    except LeaseLost:
        return False
    return True


def test_a_free_lease_is_claimed_for_its_lifetime_by_the_database_clock() -> None:
    before = timezone.now()
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    after = timezone.now()

    row = lease()
    assert row.holder == A and row.claimed_at is not None and row.expires_at is not None
    # The database's clock is this host's here: now + TTL, give or take a second.
    assert (
        before + timedelta(seconds=TTL - 1) <= row.expires_at <= after + timedelta(seconds=TTL + 1)
    )
    assert holds(A) and not holds(B)


def test_a_lease_held_by_another_is_not_claimed() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    assert not longpoll_lease_claim(group_id=GROUP, holder=B, ttl=TTL)
    assert lease().holder == A
    assert longpoll_lease_claim_free(group_ids=[GROUP], holder=B, ttl=TTL, limit=5) == []


def test_claiming_ones_own_lease_again_keeps_when_it_was_taken() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    first = lease().claimed_at
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    assert lease().claimed_at == first


def test_renewal_extends_only_the_holders_own_leases() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=SHORT)
    assert longpoll_lease_claim(group_id=GROUP + 1, holder=B, ttl=SHORT)
    short = lease().expires_at
    assert short is not None

    assert longpoll_lease_renew(group_ids=[GROUP, GROUP + 1, GROUP + 2], holder=A, ttl=TTL) == {
        GROUP
    }
    renewed = lease().expires_at
    assert renewed is not None and renewed > short + timedelta(seconds=TTL - SHORT - 1)
    assert LongPollLease.objects.get(group_id=GROUP + 1).holder == B
    assert longpoll_lease_renew(group_ids=[], holder=A, ttl=TTL) == set()


def test_a_lease_expires_unrenewed_and_another_takes_it_over() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=SHORT)
    assert holds(A)
    time.sleep(SHORT + 0.2)  # on the database's clock too

    assert not holds(A)  # expired: A applies nothing more, even before anyone takes it
    assert longpoll_lease_claim_free(group_ids=[GROUP], holder=B, ttl=TTL, limit=1) == [GROUP]
    assert lease().holder == B and holds(B)
    # A's renewal finds it lost, for good.
    assert longpoll_lease_renew(group_ids=[GROUP], holder=A, ttl=TTL) == set()
    assert not holds(A) and not longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)


def test_an_expired_lease_nobody_took_is_renewed_by_its_holder() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    expire()
    assert not holds(A)
    assert longpoll_lease_renew(group_ids=[GROUP], holder=A, ttl=TTL) == {GROUP}
    assert holds(A)


def test_release_frees_the_lease_at_once_and_only_the_holders() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    assert not longpoll_lease_release(group_id=GROUP, holder=B)
    assert lease().holder == A

    assert longpoll_lease_release(group_id=GROUP, holder=A)
    row = lease()
    assert (row.holder, row.expires_at, row.claimed_at) == ("", None, None)
    assert not holds(A)
    assert longpoll_lease_claim(group_id=GROUP, holder=B, ttl=TTL)


def test_claim_free_takes_up_to_its_limit_free_expired_and_own_leases() -> None:
    groups = list(range(GROUP, GROUP + 6))
    assert longpoll_lease_claim(group_id=groups[0], holder=B, ttl=TTL)  # B's, valid
    assert longpoll_lease_claim(group_id=groups[1], holder=B, ttl=TTL)
    expire(groups[1])  # B's, expired
    assert longpoll_lease_claim(group_id=groups[2], holder=A, ttl=TTL)  # A's own

    taken = longpoll_lease_claim_free(group_ids=groups, holder=A, ttl=TTL, limit=3)
    assert len(taken) == 3 and groups[0] not in taken
    everything = longpoll_lease_claim_free(group_ids=groups, holder=A, ttl=TTL, limit=10)
    assert sorted({*taken, *everything}) == groups[1:]
    assert LongPollLease.objects.get(group_id=groups[0]).holder == B
    assert longpoll_lease_claim_free(group_ids=groups, holder=A, ttl=TTL, limit=0) == []


@pytest.mark.django_db(transaction=True)  # outside the test's own transaction
def test_the_check_belongs_inside_the_batchs_transaction() -> None:
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=TTL)
    with pytest.raises(RuntimeError):
        longpoll_lease_check(group_id=GROUP, holder=A)
    with pytest.raises(LeaseLost) as lost, transaction.atomic():
        longpoll_lease_check(group_id=GROUP + 1, holder=A)  # no lease at all
    assert (lost.value.group_id, lost.value.holder) == (GROUP + 1, A)


def test_heartbeats_list_the_runbots_alive_oldest_first_and_forget_the_dead() -> None:
    assert runbot_heartbeat(holder=A, ttl=TTL) == [A]
    assert runbot_heartbeat(holder=B, ttl=SHORT) == [A, B]
    assert runbot_heartbeat(holder=A, ttl=TTL) == [A, B]  # A's start is kept
    time.sleep(SHORT + 0.2)

    assert runbot_heartbeat(holder=A, ttl=TTL) == [A]  # B's heartbeat stopped
    assert not RunbotProcess.objects.filter(holder=B).exists()


def test_a_runbot_leaving_frees_its_leases_and_its_place() -> None:
    runbot_heartbeat(holder=A, ttl=TTL)
    runbot_heartbeat(holder=B, ttl=TTL)
    for group_id in (GROUP, GROUP + 1):
        assert longpoll_lease_claim(group_id=group_id, holder=A, ttl=TTL)
    assert longpoll_lease_claim(group_id=GROUP + 2, holder=B, ttl=TTL)

    runbot_leave(holder=A)

    assert dict(LongPollLease.objects.values_list("group_id", "holder")) == {
        GROUP: "",
        GROUP + 1: "",
        GROUP + 2: B,
    }
    assert list(RunbotProcess.objects.values_list("holder", flat=True)) == [B]
    assert longpoll_lease_claim_free(group_ids=[GROUP, GROUP + 1], holder=B, ttl=TTL, limit=2)


@pytest.mark.parametrize(
    ("communities", "runbots", "shares"),
    [
        (6, 3, [2, 2, 2]),
        (7, 3, [3, 2, 2]),
        (8, 3, [3, 3, 2]),
        (1, 3, [1, 0, 0]),
        (0, 2, [0, 0]),
        (5, 1, [5]),
    ],
)
def test_fair_share_splits_the_communities_and_adds_up(
    communities: int, runbots: int, shares: list[int]
) -> None:
    alive = [f"host:{n}:x" for n in range(runbots)]
    got = [fair_share(communities=communities, alive=alive, holder=h) for h in alive]
    assert got == shares and sum(got) == communities


def test_a_runbot_not_yet_among_the_alive_counts_itself_last() -> None:
    assert fair_share(communities=3, alive=[A], holder=B) == 1
    assert fair_share(communities=3, alive=[], holder=B) == 3


@pytest.mark.django_db(transaction=True)
def test_of_runbots_claiming_one_lease_at_once_exactly_one_gets_it() -> None:
    holders = [f"host:{n}:race" for n in range(6)]
    start = threading.Barrier(len(holders))
    won: list[str] = []

    def claim(holder: str) -> None:
        try:
            start.wait(10)
            if longpoll_lease_claim(group_id=GROUP, holder=holder, ttl=TTL):
                won.append(holder)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claim, args=(h,)) for h in holders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert len(won) == 1 and lease().holder == won[0]


@pytest.mark.django_db(transaction=True)
def test_a_lease_is_not_taken_over_while_a_batch_commits_under_it() -> None:
    """A's batch checked the lease just before it expired; B, claiming the expired lease,
    waits for A's transaction to end and only then takes it: nobody applies in between."""
    assert longpoll_lease_claim(group_id=GROUP, holder=A, ttl=SHORT)
    checked, committing = threading.Event(), []

    def batch() -> None:
        try:
            with transaction.atomic():
                longpoll_lease_check(group_id=GROUP, holder=A)
                checked.set()
                time.sleep(SHORT + 0.5)  # the lease expires meanwhile
                LongPollLease.objects.filter(group_id=GROUP).values_list("pk").first()
                # the last moment A's transaction is surely open: B, set free by the commit,
                # may return before this thread runs again after it
                committing.append(time.monotonic())
        finally:
            connections.close_all()

    applying = threading.Thread(target=batch)
    applying.start()
    assert checked.wait(10)
    time.sleep(SHORT + 0.1)  # expired by now
    try:
        assert longpoll_lease_claim(group_id=GROUP, holder=B, ttl=TTL)
        claimed = time.monotonic()
    finally:
        applying.join(30)
    assert committing and claimed >= committing[0]
    assert lease().holder == B
