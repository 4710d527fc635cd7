"""gameplay.selectors.inbox: the communities waiting, the oldest event's first, and each
one's first rows in the order they came; read by the index, however many rows one community
floods the inbox with."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gameplay.models import InboundEvent
from gameplay.selectors.inbox import (
    inbound_exists,
    inbound_first,
    inbound_groups,
    inbound_pending,
    inbound_waiting,
    inbound_waits,
)
from gameplay.services.inbox import inbound_record

pytestmark = pytest.mark.django_db


def record(group_id: int, event_id: str) -> None:
    inbound_record(group_id=group_id, event_id=event_id, update={"event_id": event_id})


def test_the_communities_waiting_oldest_first_and_their_first_rows() -> None:
    assert inbound_waiting(limit=10, count_up_to=10) == [] and not inbound_exists()
    for group_id, event_id in ((2, "x1"), (1, "y1"), (2, "x2"), (3, "z1"), (2, "x3"), (1, "y2")):
        record(group_id, event_id)

    waiting = inbound_waiting(limit=10, count_up_to=10)
    assert [(w.group_id, w.count) for w in waiting] == [(2, 3), (1, 2), (3, 1)]
    assert [w.group_id for w in inbound_waiting(limit=2, count_up_to=10)] == [2, 1]

    rows = inbound_first(per_group={2: 2, 1: 1})
    assert [(r.group_id, r.update["event_id"]) for r in rows] == [(2, "x1"), (1, "y1"), (2, "x2")]
    assert rows == sorted(rows, key=lambda r: r.id)
    assert inbound_first(per_group={}) == []
    assert inbound_exists() and inbound_exists(group_ids=[3]) and not inbound_exists(group_ids=[4])


FLOOD = 20_000


def flood(group_id: int, rows: int) -> None:
    InboundEvent.objects.bulk_create(
        [InboundEvent(group_id=group_id, event_id=f"f{n}", body={"n": n}) for n in range(rows)],
        batch_size=2000,
    )


def test_a_flooding_community_is_counted_only_as_far_as_the_reader_looks() -> None:
    flood(1, 3000)
    record(2, "y1")
    waiting = inbound_waiting(limit=10, count_up_to=50)
    assert [(w.group_id, w.count) for w in waiting] == [(1, 50), (2, 1)]
    assert [r.update["n"] for r in inbound_first(per_group={1: 3, 2: 0})] == [0, 1, 2]
    assert inbound_pending(group_id=1, up_to=2000) == 2000
    assert inbound_pending(group_id=2, up_to=2000) == 1
    assert inbound_groups(group_ids=[1, 3]) == {1}
    assert inbound_waits(group_id=2, event_id="y1") and not inbound_waits(group_id=2, event_id="y")


@pytest.mark.postgres(reason="the plans of PostgreSQL's planner")
def test_the_slices_reads_go_by_the_index_not_through_a_flood() -> None:
    flood(1, FLOOD)
    for group_id in range(2, 40):
        record(group_id, f"e{group_id}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE gameplay_inboundevent")
    with CaptureQueriesContext(connection) as queries:  # what each slice reads
        inbound_waiting(limit=120, count_up_to=480)
        inbound_first(per_group={1: 40, 2: 40})
    for query in queries.captured_queries:
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + query["sql"])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "Seq Scan" not in plan, plan
