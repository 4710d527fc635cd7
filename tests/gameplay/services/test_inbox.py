"""gameplay.services.inbox: an event recorded once while it waits; the rows a transaction
claims are its own (and back in the inbox if it rolls back); one applier's lease at a time."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from gameplay.models import InboundEvent
from gameplay.services.inbox import applier_lease, inbound_claim, inbound_record, slice_lock

pytestmark = pytest.mark.django_db


def record(event_id: str, group_id: int = 5) -> bool:
    update = {"type": "message_new", "group_id": group_id, "event_id": event_id}
    return inbound_record(group_id=group_id, event_id=event_id, update=update)


def test_an_event_is_recorded_once_per_community() -> None:
    assert record("e-1") is True
    assert record("e-1") is False  # VK's retry of it
    assert record("e-1", group_id=6) is True  # another community's
    row = InboundEvent.objects.get(group_id=5)
    assert row.body == {"type": "message_new", "group_id": 5, "event_id": "e-1"}
    assert row.received_at is not None


def test_a_claim_deletes_the_rows_and_a_rollback_puts_them_back() -> None:
    record("a"), record("b")
    ids = list(InboundEvent.objects.order_by("id").values_list("id", flat=True))

    class Rollback(Exception):
        pass

    with pytest.raises(Rollback), transaction.atomic():
        assert inbound_claim(ids=ids) == set(ids)
        raise Rollback
    assert InboundEvent.objects.count() == 2

    with transaction.atomic():
        slice_lock()
        assert inbound_claim(ids=[ids[0], 999_999]) == {ids[0]}
        assert inbound_claim(ids=[ids[0]]) == set()  # taken already
    assert list(InboundEvent.objects.values_list("id", flat=True)) == [ids[1]]


@pytest.mark.django_db(transaction=True)
def test_claiming_and_the_slice_lock_need_the_applying_transaction() -> None:
    with pytest.raises(RuntimeError):
        inbound_claim(ids=[1])
    with pytest.raises(RuntimeError):
        slice_lock()
    assert inbound_claim(ids=[]) == set()


@pytest.mark.django_db(transaction=True)
def test_one_applier_holds_the_lease_at_a_time() -> None:
    inside = threading.Event()
    done = threading.Event()
    seen: list[bool] = []

    def holder() -> None:
        try:
            with applier_lease() as held:
                seen.append(held)
                inside.set()
                done.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(10)
    with applier_lease() as held:
        others = held
    done.set()
    thread.join(10)
    with applier_lease() as held:
        after = held
    assert seen == [True] and after is True
    # PostgreSQL: the other process's lease keeps this one out; SQLite serialises the writes.
    assert others is (connection.vendor != "postgresql")
