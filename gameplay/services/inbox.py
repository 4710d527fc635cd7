"""The Callback inbox (:class:`~gameplay.models.InboundEvent`): events the Callback API endpoint
received, kept until the applier (``vkbot/inbox.py``) applies them.

:func:`inbound_record` stores an event once (``ON CONFLICT DO NOTHING``: VK's retry of an event
still waiting is the same row). :func:`inbound_claim` deletes rows inside the transaction that
applies them: the rows it returns are this transaction's to apply, and a concurrent applier
gets none of them (a row deleted and committed by another is not returned; one being deleted
by another transaction waits for it). :func:`applier_lease` and :func:`slice_lock` keep the
appliers of several processes from working at once on PostgreSQL (advisory locks, scoped to the
database); on SQLite every write transaction is serialised anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connection
from django.utils import timezone

from gameplay.models import InboundEvent

#: PostgreSQL advisory lock keys: the applier at work (held across its run) and a slice being
#: applied (held by its transaction). Arbitrary constants of this project.
APPLIER_LOCK_KEY = 0x766B_6D61_0001
SLICE_LOCK_KEY = 0x766B_6D61_0002


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def inbound_record(
    *, group_id: int, event_id: str, update: Mapping[str, Any], cap: int | None = None
) -> bool:
    """Store a received event (``update``: the event without its ``secret``) until it is
    applied; False when it is already waiting (a retry of VK's) or, with ``cap``, when
    ``cap`` events of the community wait already (the endpoint's flood cap; soft: two
    requests at once may both take the last place). Commits at once (autocommit, one
    statement, the cap's count by the community's index within it): the endpoint answers VK
    only after this returned."""
    table = connection.ops.quote_name(InboundEvent._meta.db_table)
    field = InboundEvent._meta.get_field("body")
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    values = [group_id, event_id, field.get_db_prep_value(dict(update), connection), now]
    if cap is None:
        below, limits = "1 = 1", []
    else:
        below = (
            f"(SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE group_id = %s LIMIT %s) "
            "AS capped) < %s"
        )
        limits = [group_id, max(0, cap), cap]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (group_id, event_id, body, received_at) "
            f"SELECT %s, %s, %s, %s WHERE {below} "
            "ON CONFLICT (group_id, event_id) DO NOTHING",
            values + limits,
        )
        return cursor.rowcount > 0


def inbound_claim(*, ids: Collection[int]) -> set[int]:
    """Delete the inbox rows ``ids`` and return those this transaction deleted: the rows it
    applies. Runs inside the applying transaction (its rollback puts the rows back)."""
    if not ids:
        return set()
    if not connection.in_atomic_block:
        raise RuntimeError("inbound_claim deletes the rows the transaction applies: run it in one")
    table = connection.ops.quote_name(InboundEvent._meta.db_table)
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE id IN ({marks}) RETURNING id", list(ids))
        return {int(row[0]) for row in cursor.fetchall()}


@contextmanager
def applier_lease() -> Iterator[bool]:
    """Whether this process may apply the inbox now: yields True while it holds the applier's
    lease (PostgreSQL: a session advisory lock, let go when the block ends or the connection
    dies), False while another process holds it. On SQLite always True (see the module)."""
    if not _postgres():
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [APPLIER_LOCK_KEY])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            _unlock()


def _unlock() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [APPLIER_LOCK_KEY])
    except DatabaseError:
        connection.close()  # the lock goes with the session: no applier waits on a lost one


def slice_lock() -> None:
    """Wait until no other transaction applies a slice, and keep them waiting until this one
    ends (PostgreSQL: a transaction advisory lock; SQLite serialises writers itself). The
    first statement of the applying transaction, so the slices of two appliers apply one
    after the other, each game's events in order."""
    if not connection.in_atomic_block:
        raise RuntimeError("slice_lock is held by a transaction: run it in one")
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SLICE_LOCK_KEY])
