"""Reading the Callback inbox (:class:`~gameplay.models.InboundEvent`) for its applier
(``vkbot/inbox.py``): which communities wait, the oldest first, and each one's first rows."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Min, Window
from django.db.models.functions import RowNumber

from gameplay.models import InboundEvent


@dataclass(frozen=True)
class Waiting:
    """A community with events in the inbox: its oldest row's id and how many wait."""

    group_id: int
    first_id: int
    count: int


@dataclass(frozen=True)
class Inbound:
    """One row of the inbox."""

    id: int
    group_id: int
    update: dict[str, Any]


def inbound_waiting(*, limit: int) -> list[Waiting]:
    """Up to ``limit`` communities with events in the inbox, the one whose oldest event came
    first first."""
    rows = (
        InboundEvent.objects.values("group_id")
        .annotate(first_id=Min("id"), count=Count("id"))
        .order_by("first_id")[:limit]
    )
    return [Waiting(r["group_id"], r["first_id"], r["count"]) for r in rows]


def inbound_first(*, per_group: dict[int, int]) -> list[Inbound]:
    """The first ``per_group[g]`` rows of each community ``g`` (in the order they came), all
    in the order they came."""
    if not per_group:
        return []
    ranked = (
        InboundEvent.objects.filter(group_id__in=list(per_group))
        .annotate(rank=Window(RowNumber(), partition_by="group_id", order_by="id"))
        .filter(rank__lte=max(per_group.values()))
        .values_list("id", "group_id", "body", "rank")
    )
    found = [
        Inbound(id_, group_id, update)
        for id_, group_id, update, rank in ranked
        if rank <= per_group.get(group_id, 0)
    ]
    return sorted(found, key=lambda row: row.id)


def inbound_exists(*, group_ids: Collection[int] | None = None) -> bool:
    """Whether any event waits in the inbox (of ``group_ids``, if given)."""
    rows = InboundEvent.objects.all()
    if group_ids is not None:
        rows = rows.filter(group_id__in=list(group_ids))
    return rows.exists()
