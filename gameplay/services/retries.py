"""The GM's retry buttons: a failed Outbox row (or the recipients VK refused) queued again, or
every failed delivery of a game at once."""

from __future__ import annotations

from typing import Any, cast

from django.db import transaction

from gameplay.models import Actor, EventKind, Outbox, OutboxChannel, OutboxStatus
from gameplay.refusals import (
    AlreadyDelivered,
    ChatCreationNotRetried,
    DeliveryStillQueued,
    NoSuchDelivery,
    NothingToRetry,
)
from gameplay.selectors.record import retryable_outbox
from outbox.queue import request_delivery
from outbox.results import board_group

from .common import lock_game, log_event


@transaction.atomic
def outbox_retry(*, outbox_id: int, by: Actor, game_id: int | None = None) -> Outbox:
    """Queue a failed message again: the whole row if it failed, or the recipients VK refused
    if it was delivered to the others. A board post is retried with the posts it was merged
    with, under the same ``guid`` (so a post VK did publish is not published twice).

    ``game_id``, when given, must be the row's game. Refusals (Russian): no such message, it
    is still queued, or it was delivered to everyone."""
    meta = Outbox.objects.filter(pk=outbox_id).values("game_id", "channel").first()
    # Another game's row gets the same answer as no row: the id tells the GM nothing.
    if meta is None or (game_id is not None and meta["game_id"] != game_id):
        raise NoSuchDelivery()
    if meta["channel"] == OutboxChannel.CREATE_CHAT:
        raise ChatCreationNotRetried()
    game = lock_game(game_id=meta["game_id"]) if meta["game_id"] is not None else None
    row = Outbox.objects.select_for_update().get(pk=outbox_id)
    failed = dict((row.result or {}).get("failed") or {})
    error = row.last_error
    if row.status == OutboxStatus.PENDING:
        raise DeliveryStillQueued()
    if row.status == OutboxStatus.SENT and not failed:
        raise AlreadyDelivered()
    rows = [row]
    group = board_group(row) if row.channel == OutboxChannel.BOARD else []
    if group:
        guid = cast("dict[str, Any]", row.result)["board"].get("guid")
        rows = [
            member
            for member in Outbox.objects.select_for_update().filter(pk__in=group).order_by("id")
            if member.status == OutboxStatus.FAILED
            and ((member.result or {}).get("board") or {}).get("guid") == guid
        ]
    _requeue(rows)
    if game is not None:
        log_event(
            game,
            EventKind.OUTBOX_RETRIED,
            by=by,
            outbox_ids=[member.pk for member in rows],
            outbox_kind=row.kind,
            recipients=sorted(int(peer) for peer in failed),
            error=error,
        )
    request_delivery()
    row.refresh_from_db()
    return row


def _requeue(rows: list[Outbox]) -> None:
    """Put rows back to pending, as new (the recipients VK refused are tried again)."""
    for member in rows:
        result = dict(member.result or {})
        result.pop("failed", None)
        member.result = result
        member.status = OutboxStatus.PENDING
        member.attempts = 0
        member.next_attempt_at = None
        member.locked_until = None
        member.last_error = ""
    Outbox.objects.bulk_update(
        rows, ["result", "status", "attempts", "next_attempt_at", "locked_until", "last_error"]
    )


def outbox_retry_all(*, game_id: int, by: Actor) -> int:
    """Queue again every delivery of the game that failed, wholly or for some recipients
    (``outbox_retry`` for each, in one transaction); returns how many rows."""
    with transaction.atomic():
        lock_game(game_id=game_id)
        ids = list(
            retryable_outbox(game_id)
            .exclude(channel=OutboxChannel.CREATE_CHAT)  # asked for anew, never re-sent
            .order_by("id")
            .values_list("pk", flat=True)
        )
        if not ids:
            raise NothingToRetry()
        done: set[int] = set()
        for pk in ids:
            if pk in done:
                continue  # queued with a board post it was merged with
            row = outbox_retry(game_id=game_id, outbox_id=pk, by=by)
            done.add(row.pk)
            done.update(board_group(row))
    return len(ids)
