"""gameplay.selectors.inbox: the communities waiting, the oldest event's first, and each
one's first rows in the order they came."""

from __future__ import annotations

import pytest

from gameplay.selectors.inbox import inbound_exists, inbound_first, inbound_waiting
from gameplay.services.inbox import inbound_record

pytestmark = pytest.mark.django_db


def record(group_id: int, event_id: str) -> None:
    inbound_record(group_id=group_id, event_id=event_id, update={"event_id": event_id})


def test_the_communities_waiting_oldest_first_and_their_first_rows() -> None:
    assert inbound_waiting(limit=10) == [] and not inbound_exists()
    for group_id, event_id in ((2, "x1"), (1, "y1"), (2, "x2"), (3, "z1"), (2, "x3"), (1, "y2")):
        record(group_id, event_id)

    waiting = inbound_waiting(limit=10)
    assert [(w.group_id, w.count) for w in waiting] == [(2, 3), (1, 2), (3, 1)]
    assert [w.group_id for w in inbound_waiting(limit=2)] == [2, 1]

    rows = inbound_first(per_group={2: 2, 1: 1})
    assert [(r.group_id, r.update["event_id"]) for r in rows] == [(2, "x1"), (1, "y1"), (2, "x2")]
    assert rows == sorted(rows, key=lambda r: r.id)
    assert inbound_first(per_group={}) == []
    assert inbound_exists() and inbound_exists(group_ids=[3]) and not inbound_exists(group_ids=[4])
