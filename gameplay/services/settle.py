"""A delivery round's outcome, as the delivery worker records it: the Outbox rows settled
(:mod:`outbox.outcomes`) and, in the same transaction, the chats VK created linked to their
games (``spectator_chat_created``) — the one outcome that is a write to a game."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import transaction

from outbox.leases import Lease
from outbox.outcomes import Settlement, created_chats, lock_games_of, settle_held

from .spectators import spectator_chat_created


@transaction.atomic
def delivery_settle(
    *, lease: Lease, settlements: Sequence[Settlement], now: datetime | None = None
) -> int:
    """Apply a round's outcomes to the rows still held under ``lease``; returns how many.

    The games of rows whose chat VK created are locked first (the services' order, game
    before Outbox rows), so each outcome and its chat's link commit together."""
    created = created_chats(settlements)
    if created:
        lock_games_of([s.outbox_id for s in created])
    rows = settle_held(lease=lease, settlements=settlements, now=now)
    for settlement in created:
        row = rows.get(settlement.outbox_id)
        if row is not None and row.game_id is not None and settlement.created_chat is not None:
            added = [int(a) for a in (row.result or {}).get("added") or ()]
            spectator_chat_created(outbox=row, peer_id=settlement.created_chat, added=added)
    return len(rows)
