"""Writes on Outbox rows: the delivery worker's lease and outcomes, and the GM's retry button.

The delivery worker (``vkbot.delivery``) drains pending rows in rounds:

1. :func:`outbox_claim` leases due rows: ``locked_until`` is set to the lease's end, and that
   exact value is the lease's fence — every later write of the round is conditional on it, so
   a worker whose lease expired (it was slow, or killed and replaced) changes nothing.
2. :func:`outbox_record` stores, *before* the call to VK, how the rows will be sent: the
   ``random_id`` each row's recipients get (the row's own, or the lowest row's of a group of
   rows with the same text merged into one ``peer_ids`` send) and the board comment a post is
   merged into (its ``guid`` and members). A retry after a crash re-sends exactly that, so VK
   drops the repeat.
3. :func:`outbox_settle` records what VK answered: sent (with VK's ids in ``result``), retry
   later (exponential backoff with jitter; failed after ``OUTBOX_MAX_ATTEMPTS``), or failed
   (VK's error in ``last_error``). A failure the GM should know of becomes a ModerationFlag of
   kind ``delivery`` (``outbox_flags``) — one open flag per player (or topic) collects them.

A retry (:func:`outbox_retry`, or any code that puts a row back to pending with ``attempts``
0) makes the delivery try the recipients VK refused again, under the same ``random_id``.

``result`` keys written here and read by the worker: ``random_id``, ``sent`` (recipient →
VK message id), ``failed`` (recipient → error), ``progress`` (recipient → parts delivered of a
long text), ``link`` (an invite's link), ``board`` (``guid``, ``group``, ``parts``, ``done``),
``answer`` (what VK answered for the other channels), and for ``create_chat``
``create_chat_asked`` (the request may have reached VK), ``chat_id``, ``peer_id``, ``added``.

A ``create_chat`` row creates something VK cannot de-duplicate (``messages.createChat`` has no
``random_id``), so it is sent at most once: :func:`outbox_record` stores ``create_chat_asked``
before the call, only an answer saying VK did not act removes it, and a row still marked when
it is claimed again is failed and flagged to the GM instead of being sent (the GM's retry
button refuses it too: the GM asks for a new chat in the panel). When VK answers with the
chat, :func:`outbox_settle` links it to the game (``gm.spectator_chat_created``) in the same
transaction as the row's outcome.

The drain job is enqueued after each commit that queued rows (``outbox_queue``; its functions
are importable from here), by dotted path (``settings.OUTBOX_DELIVERY_JOB``): gameplay never
imports vkbot.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from gameplay import dbrows
from gameplay.messages import render
from gameplay.models import Game, Outbox, OutboxChannel, OutboxStatus
from gameplay.rules.errors import InvalidCommand

from .outbox_flags import (  # noqa: F401 (the create_chat marker, read by the worker's plan)
    CREATE_CHAT_ASKED,
    create_chat_unanswered,
    flag_failed_delivery,
)
from .outbox_queue import (  # noqa: F401 (the drain's public API, imported from here)
    DRAIN_QUEUED_KEY,
    DRAIN_SCHEDULED_KEY,
    delivery_started,
    enqueue_delivery,
    ensure_delivery,
    request_delivery,
)

log = logging.getLogger(__name__)

#: A ``message`` row whose ``payload[EDIT]`` names a message the bot sent
#: (``{"peer_id", "conversation_message_id"}``: a page of buttons turned) is delivered by
#: ``messages.edit`` of that message; when VK refuses the edit (909 too old, 910 too big, 924
#: no access, …) its code is recorded in ``result[EDIT_REFUSED]`` and the row is sent as a new
#: message instead (``vkbot.delivery``).
EDIT = "edit"
EDIT_REFUSED = "edit_refused"

#: At most this many board topics are looked at per claim.
MAX_TOPICS_PER_CLAIM = 50

Outcome = Literal["sent", "retry", "failed", "again"]


# --- the worker's lease -------------------------------------------------------------------------


@dataclass(frozen=True)
class Lease:
    """A worker's hold on the rows it claimed: ``until`` is the ``locked_until`` written on
    them, and every write of the round is conditional on it."""

    until: datetime

    def seconds_left(self, now: datetime | None = None) -> float:
        return (self.until - (now or timezone.now())).total_seconds()


def _due(now: datetime) -> Q:
    return (
        Q(status=OutboxStatus.PENDING)
        & (Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        & (Q(locked_until__isnull=True) | Q(locked_until__lt=now))
    )


def is_due(row: Outbox, now: datetime) -> bool:
    return (
        row.status == OutboxStatus.PENDING
        and (row.next_attempt_at is None or row.next_attempt_at <= now)
        and (row.locked_until is None or row.locked_until < now)
    )


def outbox_due_exists(now: datetime | None = None) -> bool:
    """Whether any row is due for sending now (pending, not in backoff, not leased)."""
    return Outbox.objects.filter(_due(now or timezone.now())).exists()


def board_group(row: Outbox) -> list[int]:
    """The rows recorded as one board comment with this one (empty: not yet planned)."""
    board = (row.result or {}).get("board") or {}
    return [int(i) for i in board.get("group") or ()]


@transaction.atomic
def outbox_claim(
    *,
    limit: int,
    lease_seconds: float,
    channels: Collection[str] | None = None,
    now: datetime | None = None,
) -> tuple[Lease, list[Outbox]]:
    """Lease up to ``limit`` due rows (plus up to ``limit`` board posts) for one round.

    Board posts are taken per topic in order: a post waits while an earlier post of its topic
    is pending (in backoff, or being sent by another worker), and the pending rows recorded as
    one comment are taken together or not at all. Each claim counts as an attempt.
    """
    now = now or timezone.now()
    lease = Lease(now + timedelta(seconds=lease_seconds))
    wanted = set(channels) if channels is not None else set(OutboxChannel.values)
    rows: list[Outbox] = []
    others = sorted(wanted - {OutboxChannel.BOARD})
    if others and limit > 0:
        rows.extend(
            Outbox.objects.select_for_update(skip_locked=True)
            .filter(_due(now), channel__in=others)
            .order_by("id")[:limit]
        )
    if OutboxChannel.BOARD in wanted and limit > 0:
        rows.extend(_claim_board(now, limit))
    if not rows:
        return lease, []
    ids = [row.pk for row in rows]
    Outbox.objects.filter(pk__in=ids).update(locked_until=lease.until, attempts=F("attempts") + 1)
    for row in rows:
        row.locked_until = lease.until
        row.attempts += 1
    rows.sort(key=lambda row: row.pk)
    return lease, rows


def _claim_board(now: datetime, limit: int) -> list[Outbox]:
    topics = list(
        Outbox.objects.filter(_due(now), channel=OutboxChannel.BOARD)
        .order_by()
        .values_list("topic_id", flat=True)
        .distinct()[:MAX_TOPICS_PER_CLAIM]
    )
    if not topics:
        return []
    # Locked in id order (as every other write here), so two transactions never deadlock.
    pending = list(
        Outbox.objects.select_for_update()
        .filter(status=OutboxStatus.PENDING, channel=OutboxChannel.BOARD, topic_id__in=topics)
        .order_by("id")
    )
    by_topic: dict[int, list[Outbox]] = {}
    for row in pending:
        by_topic.setdefault(int(row.topic_id or 0), []).append(row)
    taken: list[Outbox] = []
    for topic_rows in by_topic.values():
        prefix: list[Outbox] = []
        for row in topic_rows:
            if not is_due(row, now) or len(prefix) >= limit:
                break
            prefix.append(row)
        taken.extend(_whole_groups(prefix, {row.pk for row in topic_rows}))
        if len(taken) >= limit:
            break
    return taken


def _whole_groups(prefix: list[Outbox], pending: set[int]) -> list[Outbox]:
    """The prefix up to the first recorded comment whose pending members are not all in it
    (members already sent or failed do not hold it back: the comment is re-sent whole)."""
    ids = {row.pk for row in prefix}
    for index, row in enumerate(prefix):
        if not (set(board_group(row)) & pending) <= ids:
            return prefix[:index]
    return prefix


def _held(lease: Lease, ids: Iterable[int]) -> dict[int, Outbox]:
    """The rows among ``ids`` still held under ``lease``, locked, in id order."""
    rows = (
        Outbox.objects.select_for_update()
        .filter(pk__in=list(ids), locked_until=lease.until, status=OutboxStatus.PENDING)
        .order_by("id")
    )
    return {row.pk: row for row in rows}


@transaction.atomic
def outbox_record(*, lease: Lease, results: Mapping[int, dict[str, Any]]) -> set[int]:
    """Store each row's new ``result`` (how it will be sent) before the call to VK; returns the
    ids still held under ``lease`` (the others must not be sent by this worker)."""
    rows = _held(lease, results)
    for row in rows.values():
        row.result = results[row.pk]
    dbrows.update_each(list(rows.values()), ["result"])
    return set(rows)


@transaction.atomic
def outbox_release(*, lease: Lease, ids: Iterable[int]) -> int:
    """Give rows back unsent (due again at once; the claim does not count as an attempt)."""
    rows = _held(lease, ids)
    return Outbox.objects.filter(pk__in=list(rows)).update(
        locked_until=None, attempts=F("attempts") - 1
    )


# --- outcomes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """Why VK did not take something: its error code and text, or a network error (no code)."""

    code: int | None
    message: str
    #: Set when retries stopped: the number of attempts made.
    gave_up_after: int | None = None

    def __str__(self) -> str:
        text = (
            f"network error: {self.message}"
            if self.code is None
            else f"VK error {self.code}: {self.message}"
        )
        if self.gave_up_after is not None:
            text += f" (gave up after {self.gave_up_after} attempts)"
        return text

    @property
    def for_gm(self) -> str:
        why = render("gm/vk_error", code=self.code, message=self.message)
        if self.gave_up_after is not None:
            why = render("gm/delivery_gave_up", attempts=self.gave_up_after, why=why)
        return why


@dataclass
class Settlement:
    """What became of one leased row in a round.

    ``sent``: done (``undelivered`` lists recipients VK refused for good, flagged to the GM);
    ``retry``: not (all) done, try again after a backoff (``waiting``: recipients still to
    reach, for the GM if the row gives up); ``failed``: VK refused it for good (flagged unless
    ``flag`` is false); ``again``: due again at once (an invite whose link is now known).
    ``created_chat``: the peer id of the chat VK created for a sent ``create_chat`` row.
    """

    outbox_id: int
    outcome: Outcome
    result: dict[str, Any] | None = None
    failure: Failure | None = None
    undelivered: Mapping[int, Failure] = field(default_factory=dict)
    waiting: Sequence[int] = ()
    flag: bool = True
    created_chat: int | None = None


def retry_delay(attempts: int, *, rng: random.Random | None = None) -> float:
    """Seconds before attempt ``attempts + 1``: exponential from ``OUTBOX_RETRY_BASE_MS``,
    capped at ``OUTBOX_RETRY_MAX_SECONDS``, with jitter (between half and all of it)."""
    base = settings.OUTBOX_RETRY_BASE_MS / 1000.0
    cap = float(settings.OUTBOX_RETRY_MAX_SECONDS)
    delay = min(cap, base * 2.0 ** min(max(attempts - 1, 0), 40))
    return delay / 2 + (rng or random).uniform(0, delay / 2)


@transaction.atomic
def outbox_settle(
    *, lease: Lease, settlements: Sequence[Settlement], now: datetime | None = None
) -> int:
    """Apply a round's outcomes to the rows still held under ``lease``; returns how many.

    A created chat is linked to its game here too: the games of such rows are locked first
    (the services' order, game before Outbox rows), so the outcome and the link commit
    together."""
    now = now or timezone.now()
    created = [s for s in settlements if s.created_chat is not None and s.outcome == "sent"]
    if created:
        _lock_games_of([s.outbox_id for s in created])
    rows = _held(lease, [s.outbox_id for s in settlements])
    changed: list[Outbox] = []
    for settlement in settlements:
        row = rows.get(settlement.outbox_id)
        if row is None:
            continue  # the lease expired and another worker has the row: its outcome counts
        _apply(row, settlement, now)
        changed.append(row)
    _save_settled(changed)
    for settlement in created:
        row = rows.get(settlement.outbox_id)
        if row is not None and row.game_id is not None and settlement.created_chat is not None:
            _chat_created(row, settlement.created_chat)
    return len(changed)


def _lock_games_of(outbox_ids: Sequence[int]) -> None:
    game_ids = set(
        Outbox.objects.filter(pk__in=list(outbox_ids), game__isnull=False).values_list(
            "game_id", flat=True
        )
    )
    list(Game.objects.select_for_update().filter(pk__in=game_ids).order_by("pk").values("pk"))


def _chat_created(row: Outbox, peer_id: int) -> None:
    from .gm import spectator_chat_created

    added = [int(a) for a in (row.result or {}).get("added") or ()]
    spectator_chat_created(outbox=row, peer_id=peer_id, added=added)


#: Fields an outcome sets besides ``result``.
_OUTCOME_FIELDS = ("status", "locked_until", "next_attempt_at", "last_error", "sent_at")


def _save_settled(rows: list[Outbox]) -> None:
    """Save settled rows, each updated once: a second update of a row in the same transaction
    would have PostgreSQL check its foreign key to the game (a share lock on the game row,
    which the bot may hold while it waits for this transaction: a deadlock)."""
    dbrows.update_each(rows, ["result", *_OUTCOME_FIELDS])


def _apply(row: Outbox, settlement: Settlement, now: datetime) -> None:
    if settlement.result is not None:
        row.result = settlement.result
    row.locked_until = None
    failure = settlement.failure
    outcome = settlement.outcome
    undelivered = dict(settlement.undelivered)
    if outcome == "retry" and row.attempts >= settings.OUTBOX_MAX_ATTEMPTS:
        why = failure or Failure(None, "no answer")
        failure = Failure(why.code, why.message, gave_up_after=row.attempts)
        undelivered.update({peer: failure for peer in settlement.waiting})
        if settlement.waiting:
            result = dict(row.result or {})
            failed = dict(result.get("failed") or {})
            failed.update({str(peer): str(failure) for peer in settlement.waiting})
            result["failed"] = failed
            row.result = result
        sent = (row.result or {}).get("sent") or {}
        outcome = "sent" if sent and settlement.waiting else "failed"
    if outcome == "sent":
        row.status = OutboxStatus.SENT
        row.sent_at = now
        row.next_attempt_at = None
        row.last_error = _summary(undelivered) if undelivered else ""
    elif outcome == "again":
        row.next_attempt_at = None
    elif outcome == "retry":
        row.next_attempt_at = now + timedelta(seconds=retry_delay(row.attempts))
        row.last_error = str(failure) if failure else ""
    else:
        row.status = OutboxStatus.FAILED
        row.next_attempt_at = None
        row.last_error = str(failure) if failure else "failed"
    if settlement.flag and (outcome == "failed" or undelivered):
        _flag(row, failure, undelivered)


def _summary(undelivered: Mapping[int, Failure]) -> str:
    parts = [f"{peer}: {failure}" for peer, failure in sorted(undelivered.items())]
    return "not delivered to " + "; ".join(parts)


# --- flags for the GM ---------------------------------------------------------------------------


def _flag(row: Outbox, failure: Failure | None, undelivered: Mapping[int, Failure]) -> None:
    if row.game_id is None:
        log.warning("Outbox #%s (no game) failed: %s", row.pk, failure or _summary(undelivered))
        return
    why = (failure or Failure(None, "?")).for_gm
    flag_failed_delivery(row, why, {peer: f.for_gm for peer, f in undelivered.items()})


# --- the GM's retry button ----------------------------------------------------------------------


@transaction.atomic
def outbox_retry(*, outbox_id: int, by: str, game_id: int | None = None) -> Outbox:
    """Queue a failed message again: the whole row if it failed, or the recipients VK refused
    if it was delivered to the others. A board post is retried with the posts it was merged
    with, under the same ``guid`` (so a post VK did publish is not published twice).

    ``game_id``, when given, must be the row's game. Refusals (Russian): no such message, it
    is still queued, or it was delivered to everyone."""
    from .common import lock_game, log_event

    meta = Outbox.objects.filter(pk=outbox_id).values("game_id", "channel").first()
    # Another game's row gets the same answer as no row: the id tells the GM nothing.
    if meta is None or (game_id is not None and meta["game_id"] != game_id):
        raise InvalidCommand("Такого сообщения нет.")
    if meta["channel"] == OutboxChannel.CREATE_CHAT:
        raise InvalidCommand(
            "Создание беседы не повторяется отсюда (так не появится двух бесед). Новую беседу "
            "создаёт кнопка «Создать беседу» на вкладке «Беседа ЗЗ»."
        )
    game = lock_game(meta["game_id"]) if meta["game_id"] is not None else None
    row = Outbox.objects.select_for_update().get(pk=outbox_id)
    failed = dict((row.result or {}).get("failed") or {})
    error = row.last_error
    if row.status == OutboxStatus.PENDING:
        raise InvalidCommand("Это сообщение ещё в очереди на отправку.")
    if row.status == OutboxStatus.SENT and not failed:
        raise InvalidCommand("Это сообщение уже доставлено.")
    rows = [row]
    group = board_group(row) if row.channel == OutboxChannel.BOARD else []
    if group:
        guid = row.result["board"].get("guid")
        rows = [
            member
            for member in Outbox.objects.select_for_update().filter(pk__in=group).order_by("id")
            if member.status == OutboxStatus.FAILED
            and ((member.result or {}).get("board") or {}).get("guid") == guid
        ]
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
    if game is not None:
        log_event(
            game,
            "outbox_retried",
            by=by,
            outbox_ids=[member.pk for member in rows],
            outbox_kind=row.kind,
            recipients=sorted(int(peer) for peer in failed),
            error=error,
        )
    request_delivery()
    row.refresh_from_db()
    return row
