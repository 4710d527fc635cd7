"""One runbot's applier (vkbot.applier): several communities' batches applied together, one
transaction per slice, each community for itself (``serving``), each one's ts stored with
what completes it; a lost lease, a bug or an outage told to the communities it concerns,
nothing lost and nothing applied twice. These tests commit (``transaction=True``): they count
the commits, and the async ones use the database from asgiref's thread as ``runbot`` does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from gameplay.context import current_group
from gameplay.models import LongPollLease, VkEvent
from gameplay.services.longpoll_leases import LeaseLost, longpoll_lease_claim
from tests.vkbot.ingest_support import (
    GROUP_ID,
    close_db_thread_connections,  # noqa: F401
    configure,
    message_update,
    use_dispatch,
)
from vkbot import pipeline
from vkbot.applier import Applier, apply_slice
from vkbot.backlog import Backlogs
from vkbot.pipeline import stored_ts

pytestmark = pytest.mark.django_db(transaction=True)

A, B = GROUP_ID, GROUP_ID + 11
HOLDER, OTHER = "host:1:a", "host:2:b"


def batch(group: int, *texts: str) -> list[dict[str, Any]]:
    return [message_update(42, t, event_id=f"{group}-{t}", group_id=group) for t in texts]


class Seen:
    """A stand-in handler: each update applied, with the community it was applied for."""

    def __init__(self) -> None:
        self.applied: list[tuple[int | None, str]] = []

    def __call__(self, update: dict[str, Any]) -> None:
        self.applied.append((current_group(), update["object"]["message"]["text"]))

    def of(self, group: int) -> list[str]:
        return [text for served, text in self.applied if served == group]


@pytest.fixture
def seen(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Seen:
    configure(settings)
    handler = Seen()
    use_dispatch(monkeypatch, handler)
    return handler


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many transactions this thread's connection commits."""
    counted: list[int] = []
    commit = BaseDatabaseWrapper.commit

    def counting(self: BaseDatabaseWrapper) -> None:
        counted.append(1)
        commit(self)

    monkeypatch.setattr(BaseDatabaseWrapper, "commit", counting)
    yield counted


def two_communities() -> Backlogs:
    backlogs = Backlogs(whole_up_to=50)
    backlogs.add(A, batch(A, "a1", "a2"), [None, None], "a-ts")
    backlogs.add(B, batch(B, "b1"), [None], "b-ts")
    return backlogs


def fail_in(group: int, error: Exception) -> Callable[[Any], None]:
    """A stand-in for the pipeline's seat prefetch that fails for ``group``'s section."""

    def prefetch(chunk: Any) -> None:
        if current_group() == group:
            raise error

    return prefetch


def test_two_communities_are_applied_in_one_transaction_each_for_itself(
    seen: Seen, commits: list[int]
) -> None:
    outcome = apply_slice(two_communities(), None)

    assert len(commits) == 1
    assert outcome.applied == {A: 2, B: 1} and not outcome.failed and not outcome.lost
    assert outcome.stored == {A: "a-ts", B: "b-ts"}
    assert (seen.of(A), seen.of(B)) == (["a1", "a2"], ["b1"])
    assert (stored_ts(A), stored_ts(B)) == ("a-ts", "b-ts")

    again = two_communities()  # the same events polled again (a restart, a replay)
    assert apply_slice(again, None).applied == {A: 0, B: 0}
    assert seen.of(A) == ["a1", "a2"] and VkEvent.objects.count() == 3


def test_a_community_whose_lease_is_lost_is_left_out_of_the_slice(seen: Seen) -> None:
    assert longpoll_lease_claim(group_id=A, holder=HOLDER, ttl=30)
    assert longpoll_lease_claim(group_id=B, holder=OTHER, ttl=30)
    outcome = apply_slice(two_communities(), HOLDER)
    assert outcome.applied == {A: 2} and outcome.lost == {B}
    assert outcome.stored == {A: "a-ts"} and stored_ts(B) is None
    assert seen.of(B) == []


def test_a_bug_in_one_communitys_section_does_not_hold_the_other_back(
    seen: Seen, monkeypatch: pytest.MonkeyPatch, commits: list[int]
) -> None:
    bug = KeyError("a bug")
    monkeypatch.setattr(pipeline, "_prefetch_seats", fail_in(B, bug))
    outcome = apply_slice(two_communities(), None)
    assert outcome.failed == {B: bug}
    assert outcome.applied == {A: 2} and outcome.stored == {A: "a-ts"}
    assert seen.of(B) == [] and stored_ts(B) is None
    assert len(commits) == 1  # the slice rolled back, then A's section on its own


def test_an_outage_fails_the_whole_slice_and_applies_nothing(
    seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = OperationalError("the server closed the connection")
    monkeypatch.setattr(pipeline, "_prefetch_seats", fail_in(B, lost))
    monkeypatch.setattr("vkbot.applier.database_lost", lambda error: error is lost)
    outcome = apply_slice(two_communities(), None)
    assert outcome.failed == {A: lost, B: lost} and not outcome.applied
    assert not VkEvent.objects.exists()  # A's handlers ran, and were rolled back with it
    assert stored_ts(A) is None and stored_ts(B) is None
    seen.applied.clear()

    monkeypatch.undo()  # the database is back: polled again, applied once
    use_dispatch(monkeypatch, seen)
    assert apply_slice(two_communities(), None).applied == {A: 2, B: 1}
    assert (seen.of(A), seen.of(B)) == (["a1", "a2"], ["b1"])
    assert VkEvent.objects.count() == 3 and (stored_ts(A), stored_ts(B)) == ("a-ts", "b-ts")


async def db(fn: Callable[..., Any], *args: Any) -> Any:
    return await sync_to_async(fn, thread_sensitive=True)(*args)


def expire(group: int) -> None:
    past = timezone.now() - timedelta(seconds=1)
    LongPollLease.objects.filter(group_id=group).update(expires_at=past)


async def test_the_applier_takes_every_communitys_batches_in_one_slice_and_tells_a_lost_lease(
    seen: Seen,
) -> None:
    assert await db(lambda: longpoll_lease_claim(group_id=A, holder=HOLDER, ttl=30))
    assert await db(lambda: longpoll_lease_claim(group_id=B, holder=HOLDER, ttl=30))
    applier = Applier(holder=HOLDER)
    told: dict[int, list[tuple[int, str | None]]] = {A: [], B: []}

    def teller(group: int) -> Callable[[int, str | None], None]:
        return lambda count, ts: told[group].append((count, ts))

    feeds = {group: applier.join(group, applied=teller(group)) for group in told}
    feeds[A].add(batch(A, "a1", "a2"), [None, None], "a-ts")
    feeds[B].add(batch(B, "b1"), [None], "b-ts")
    running = asyncio.create_task(applier.run())
    try:
        await asyncio.wait_for(feeds[A].settled(), 10)
        await asyncio.wait_for(feeds[B].settled(), 10)
        assert applier.slices == 1
        assert told == {A: [(2, "a-ts")], B: [(1, "b-ts")]}

        # B's lease goes to another runbot: B's feed fails, A goes on.
        await db(expire, B)
        assert await db(lambda: longpoll_lease_claim(group_id=B, holder=OTHER, ttl=30))
        feeds[A].add(batch(A, "a3"), [None], "a-ts2")
        feeds[B].add(batch(B, "b2"), [None], "b-ts2")
        await asyncio.wait_for(feeds[B].failed.wait(), 10)
        with pytest.raises(LeaseLost):
            feeds[B].check()
        await asyncio.wait_for(feeds[A].settled(), 10)
        feeds[B].add(batch(B, "b3"), [None], "b-ts3")  # ignored: its poller polls again
        await feeds[B].leave()
        assert not applier.inbox and applier.backlogs.pending(B) == 0
    finally:
        applier.stop()
        await asyncio.wait_for(running, 10)
    assert seen.of(A) == ["a1", "a2", "a3"] and seen.of(B) == ["b1"]
    assert await db(stored_ts, A) == "a-ts2" and await db(stored_ts, B) == "b-ts"
