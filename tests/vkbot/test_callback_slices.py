"""The Callback applier's slices across many communities (``vkbot.inbox.choose_slice``): each
community a share of at least ``MIN_SHARE`` events, the communities whose oldest event came
first first, the others first in the next slice; communities with fewer events waiting take
only what they have, so a slice is still full."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay.models import InboundEvent
from gameplay.services.inbox import inbound_record
from vkbot.inbox import MIN_SHARE, SLICE, choose_slice

pytestmark = pytest.mark.django_db


def one_game(group_id: int, updates: list[Any]) -> list[int]:
    return [group_id] * len(updates)  # every community's events are of its one game


def fill(communities: int, per_community: int, base: int = 5000) -> list[int]:
    """``per_community`` events of each community, posted interleaved (as VK posts them to
    many communities at once); the communities in the order of their first event."""
    groups = [base + n for n in range(communities)]
    for number in range(per_community):
        for group in groups:
            inbound_record(group_id=group, event_id=f"{group}-{number}",
                           update={"event_id": f"{group}-{number}"})  # fmt: skip
    return groups


def test_a_burst_across_many_communities_is_applied_a_real_share_of_each_at_a_time() -> None:
    groups = fill(communities=30, per_community=20)
    served: list[int] = []
    while rows := choose_slice(games=one_game):
        assert len(rows) == SLICE
        by_group: dict[int, list[str]] = {}
        for row in rows:
            by_group.setdefault(row.group_id, []).append(row.update["event_id"])
        for group, ids in by_group.items():
            assert len(ids) == MIN_SHARE  # not SLICE // 30 = 4 of each
            done = sum(1 for g in served if g == group) * MIN_SHARE
            assert ids == [f"{group}-{n}" for n in range(done, done + MIN_SHARE)]
        served += list(by_group)
        InboundEvent.objects.filter(id__in=[row.id for row in rows]).delete()
        if len(served) >= len(groups):
            break
    assert served[: len(groups)] == groups  # oldest first, every community in its turn


def test_communities_with_a_few_events_each_fill_one_slice_together() -> None:
    groups = fill(communities=60, per_community=1)
    rows = choose_slice(games=one_game)
    assert sorted(row.group_id for row in rows) == groups  # all 60: each took what it had
