"""Reading the Callback inbox (:class:`~gameplay.models.InboundEvent`) for its applier
(``vkbot/inbox.py``), its endpoint (``vkbot/views.py``) and the drain: which communities wait,
the oldest first, each one's first rows, how many of one community's wait.

Every read here goes by the index of each community's rows in order (``inbound_by_community``:
``group_id``, ``id``), and counts only as far as its caller looks, so a community flooding the
inbox with thousands of rows does not make every slice read them all."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.db import connection

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


def inbound_waiting(*, limit: int, count_up_to: int) -> list[Waiting]:
    """Up to ``limit`` communities with events in the inbox, the one whose oldest event came
    first first; each one's ``count`` counted up to ``count_up_to`` only.

    One statement, by the index: the communities found one after the other (a recursive
    query that jumps from each ``group_id`` to the next, a skip scan), each one's oldest row
    its index's first entry, its count at most ``count_up_to`` of its entries. So the cost
    grows with the communities waiting, not with the rows."""
    table = connection.ops.quote_name(InboundEvent._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH RECURSIVE waiting(group_id) AS (
                SELECT MIN(group_id) FROM {table}
                UNION ALL
                SELECT (SELECT MIN(i.group_id) FROM {table} i WHERE i.group_id > w.group_id)
                FROM waiting w WHERE w.group_id IS NOT NULL
            )
            SELECT w.group_id,
                   (SELECT MIN(i.id) FROM {table} i WHERE i.group_id = w.group_id) AS first_id,
                   (SELECT COUNT(*) FROM (SELECT 1 FROM {table} i WHERE i.group_id = w.group_id
                                          LIMIT %s) AS capped) AS how_many
            FROM waiting w WHERE w.group_id IS NOT NULL
            ORDER BY first_id LIMIT %s
            """,
            [max(1, count_up_to), limit],
        )
        return [Waiting(int(g), int(first), int(n)) for g, first, n in cursor.fetchall()]


def inbound_pending(*, group_id: int, up_to: int) -> int:
    """How many of community ``group_id``'s events wait in the inbox, counted up to ``up_to``
    (the endpoint's cap: it need not know how far beyond)."""
    table = connection.ops.quote_name(InboundEvent._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE group_id = %s LIMIT %s) AS capped",
            [group_id, max(0, up_to)],
        )
        return int(cursor.fetchone()[0])


def inbound_first(*, per_group: dict[int, int]) -> list[Inbound]:
    """The first ``per_group[g]`` rows of each community ``g`` (in the order they came), all
    in the order they came."""
    wanted = {group_id: n for group_id, n in per_group.items() if n > 0}
    if not wanted:
        return []
    # Each community's first rows by its index, LIMITed: never a read of all its rows.
    table = connection.ops.quote_name(InboundEvent._meta.db_table)
    part = f"SELECT id FROM (SELECT id FROM {table} WHERE group_id = %s ORDER BY id LIMIT %s) AS p"
    params = [value for group_id, n in wanted.items() for value in (group_id, n)]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join([part] * len(wanted)), params)
        ids = [int(row[0]) for row in cursor.fetchall()]
    rows = InboundEvent.objects.filter(id__in=ids).order_by("id")
    return [Inbound(i, g, update) for i, g, update in rows.values_list("id", "group_id", "body")]


def inbound_waits(*, group_id: int, event_id: str) -> bool:
    """Whether community ``group_id``'s event ``event_id`` waits in the inbox."""
    return InboundEvent.objects.filter(group_id=group_id, event_id=event_id).exists()


def inbound_groups(*, group_ids: Collection[int]) -> set[int]:
    """Which of ``group_ids`` have events in the inbox (waiting, or being applied by a slice
    that has not committed): each looked up by the index of its oldest row."""
    if not group_ids:
        return set()
    found = InboundEvent.objects.filter(group_id__in=list(group_ids))
    return {int(g) for g in found.order_by().values_list("group_id", flat=True).distinct()}


def inbound_exists(*, group_ids: Collection[int] | None = None) -> bool:
    """Whether any event waits in the inbox (of ``group_ids``, if given)."""
    rows = InboundEvent.objects.all()
    if group_ids is not None:
        rows = rows.filter(group_id__in=list(group_ids))
    return rows.exists()
