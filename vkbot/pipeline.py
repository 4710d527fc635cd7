"""One ingestion pipeline for every VK event, from the Bots Long Poll and the Callback API.

:func:`apply_update` applies one raw VK update at most once: in one transaction it records the
event's ``event_id`` as a :class:`~gameplay.models.VkEvent` (the unique constraint decides
which of two racing deliveries wins) and runs the bot's handlers
(``vkbot.handlers.dispatch``). A handler that crashes is a bug: its changes are rolled back,
the traceback goes to the operator log, the event stays recorded (it is not retried), and the
user who sent it gets a short apology; the poller goes on. A transaction of one update runs
its handlers in no savepoint: on a crash the whole transaction rolls back and a fresh one
records the event with its error, and the apology.

:func:`apply_updates` applies a long-poll batch in transactions of up to :data:`CHUNK`
updates each (one ``INSERT … ON CONFLICT DO NOTHING`` records a chunk's event ids and says
which are new; the new updates' handlers then run in one savepoint, or, should one of them
crash, each in its own) and stores the poll's next ``ts`` in
:class:`~gameplay.models.PollState` in the transaction of the last chunk, so a restarted bot
continues exactly after the last batch it applied. A database outage rolls back the chunk it
hit, whose updates are then applied when the batch is polled again.

A batch larger than a chunk is applied game by game (:func:`plan`, with
``vkbot.handlers.games_of`` saying which game each update can change): each game's updates in
their order, together, so its row is locked and read once for all of them; an update of no
single game stays where it was. Every transaction keeps the games its hot path locked
(:mod:`gameplay.unit_of_work`): a game's later votes and night actions reuse what the first
one read, and the new rows of the event log and the Outbox are inserted together at the end of the
handlers' savepoint.
``runbot`` applies a slice at a time of every community's polled batches, fairly across games
and communities (:mod:`vkbot.backlog`, :mod:`vkbot.applier`), each slice in one transaction
with :func:`apply_sections`; the Callback API's inbox is applied the same way
(:mod:`vkbot.inbox`). Updates are applied for one community (``gameplay.context.serving``:
:func:`apply_updates` enters it, :func:`apply_sections` each section's); one of another
community is ignored. Event ids and the ts are kept per community (``VkEvent``,
``PollState``). A runbot applies updates under its lease of their community (``holder``): each
transaction checks the leases first (``gameplay.services.longpoll_leases``), so a runbot that
lost one applies nothing more of that community.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from gameplay import unit_of_work
from gameplay.context import current_group, serving
from gameplay.models import VkEvent
from gameplay.selectors.communities import this_group_id
from gameplay.services.longpoll_leases import longpoll_lease_check, longpoll_leases_check
from vkbot.crashes import Crashed, apologise, log_crash, note_crash
from vkbot.position import community_of, store_positions
from vkbot.position import store_ts as store_ts
from vkbot.position import stored_ts as stored_ts
from vkbot.updates import BadUpdate, check_update, dump
from vkbot.updates import event_id_of as event_id_of
from vkbot.updates import group_id_of as group_id_of
from vkbot.updates import sender_of as sender_of

logger = logging.getLogger(__name__)

LONGPOLL = "longpoll"
CALLBACK = "callback"

#: Updates of a long-poll batch applied in one transaction: fewer commits and one statement to
#: record their event ids, while the game rows a chunk locks are held for a fraction of a
#: second at most.
CHUNK = 50

#: Field sizes of VkEvent.
TYPE_MAX = VkEvent._meta.get_field("type").max_length or 48
SOURCE_MAX = VkEvent._meta.get_field("source").max_length or 16

#: Errors that mean the database itself is unavailable: the update is not recorded, so the
#: caller retries it later (the poller re-polls from the stored ts, VK re-sends a callback).
_INFRASTRUCTURE_ERRORS = (OperationalError, InterfaceError)


def is_our_group(update: Mapping[str, Any]) -> bool:
    """Whether the update is of the community being served (``gameplay.context.serving``;
    outside it, the environment's ``VK_GROUP_ID``)."""
    expected = this_group_id()
    return expected is not None and group_id_of(update) == int(expected)


def apply_update(update: Mapping[str, Any], *, source: str, facts: Any = None) -> bool:
    """Apply one VK update at most once. True if it was applied now (its handler ran, or
    crashed and the crash was recorded); False for a duplicate, an update of another
    community, or something that is not an update. ``facts``: what :mod:`vkbot.prefetch`
    learnt from VK for the handlers (None: nothing).

    Database outages propagate (nothing is recorded, so the update can be delivered again).
    """
    try:
        with transaction.atomic(), unit_of_work.kept():
            return _apply_chunk([update], [facts], source, lone=True) == 1
    except Crashed as crash:
        with transaction.atomic():
            return _record_crash(crash) == 1


def apply_updates(
    updates: Iterable[Any],
    ts: str | int | None,
    *,
    source: str = LONGPOLL,
    group_id: int | None = None,
    facts: Sequence[Any] | None = None,
    games: Sequence[int | None] | None = None,
    holder: str | None = None,
) -> int:
    """Apply a long-poll batch of community ``group_id`` (``VK_GROUP_ID``) in order, for that
    community (``gameplay.context.serving``), in transactions of up to :data:`CHUNK` updates,
    then remember ``ts`` (the ts to poll with next; None: nothing to remember) for it in the
    transaction of the last one. Returns how many updates were applied (duplicates and
    foreign updates are not counted). ``facts``, if given, holds each
    update's prefetched facts (None where there are none); ``games``, if given, each update's
    game as ``vkbot.handlers.games_of`` said (else it is asked when the batch needs it).
    ``holder``, if given, must hold the community's lease in each chunk's transaction, or
    that chunk and the rest are not applied (``LeaseLost`` is raised; the chunks before it
    stay applied, and the next holder skips them as duplicates)."""
    group = community_of(group_id)
    batch = list(updates)
    known = list(facts) if facts is not None else []
    known += [None] * (len(batch) - len(known))
    applied = 0
    with serving(group):
        # A batch of one transaction keeps its games anyway: no need to know them.
        if len(batch) > CHUNK:
            parts = plan(list(games) if games is not None else games_of(batch))
        else:
            parts = [list(range(len(batch)))]
        for number, part in enumerate(parts, start=1):
            last = number == len(parts)
            try:
                with transaction.atomic(), unit_of_work.kept():
                    if holder is not None:
                        longpoll_lease_check(group_id=group, holder=holder)
                    chunk = [batch[i] for i in part]
                    if len(chunk) > 1:  # (one update's handlers read its seats themselves)
                        _prefetch_seats(chunk)
                    applied += _apply_chunk(
                        chunk, [known[i] for i in part], source, lone=len(chunk) == 1
                    )
                    if last and ts is not None:
                        store_ts(ts, group)
            except Crashed as crash:
                with transaction.atomic():
                    if holder is not None:
                        longpoll_lease_check(group_id=group, holder=holder)
                    applied += _record_crash(crash)
                    if last and ts is not None:
                        store_ts(ts, group)
    return applied


@dataclass
class Section:
    """One community's part of a slice applied by :func:`apply_sections`: its updates in the
    order to apply them, each one's prefetched facts (None: none), and the long-poll ts to
    store for it once they are applied (None: nothing to store, as for the Callback API)."""

    group_id: int
    updates: list[Any]
    facts: list[Any] = field(default_factory=list)
    ts: str | int | None = None


@dataclass
class SliceResult:
    """What :func:`apply_sections` did: updates applied per community, and the communities
    whose sections were left unapplied because ``holder`` no longer holds their lease."""

    applied: dict[int, int] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)

    @property
    def total(self) -> int:
        return sum(self.applied.values())


def apply_sections(
    sections: Sequence[Section], *, source: str, holder: str | None = None
) -> SliceResult:
    """Apply several communities' updates in ONE transaction: one lease check for all of
    them, then each community's section for that community (``gameplay.context.serving``),
    in order, with its senders' seats read at once; then every community's ts, in one
    statement. The unit of work is kept across the whole slice, so a game's later events
    reuse what its first one read.

    ``holder``, if given, must hold each community's lease: the sections of communities it
    does not (any more) are not applied and are reported in :attr:`SliceResult.lost`; the
    others are. A section must be small enough for one transaction (a slice of the backlog
    is; see :data:`vkbot.backlog.SLICE`). Database outages propagate: nothing of the slice
    is applied, and every update in it can be applied again later."""
    result = SliceResult()
    todo = [s for s in sections if s.updates or s.ts is not None]
    if not todo:
        return result
    with transaction.atomic(), unit_of_work.kept():
        if holder is not None:
            held = longpoll_leases_check(group_ids={s.group_id for s in todo}, holder=holder)
            result.lost = {s.group_id for s in todo} - held
            todo = [s for s in todo if s.group_id in held]
        positions: dict[int, str | int] = {}
        for section in todo:
            group = int(section.group_id)
            facts = list(section.facts) + [None] * (len(section.updates) - len(section.facts))
            if section.updates:
                with serving(group):
                    _prefetch_seats(section.updates)
                    done = _apply_chunk(section.updates, facts, source)
                result.applied[group] = result.applied.get(group, 0) + done
            if section.ts is not None:
                positions[group] = section.ts
        store_positions(positions)  # every community's at once, in the slice's transaction
    return result


def games_of(batch: Sequence[Any]) -> list[int | None]:
    """Which game each update's handlers can change (``vkbot.handlers.games_of``); handlers
    without it: none known, the batch is applied in its order."""
    from vkbot import handlers  # lazily: the handlers import the whole bot

    games_of = getattr(handlers, "games_of", None)
    return list(games_of(batch)) if games_of is not None else [None] * len(batch)


def _prefetch_seats(chunk: Sequence[Any]) -> None:
    """Have the handlers read what they need about the chunk's senders at once
    (``vkbot.handlers.prefetch_seats``; handlers without it read it update by update)."""
    from vkbot import handlers  # lazily: the handlers import the whole bot

    prefetch_seats = getattr(handlers, "prefetch_seats", None)
    if prefetch_seats is not None:
        prefetch_seats(chunk)


def plan(games: Sequence[int | None]) -> list[list[int]]:
    """The transactions of a batch whose updates ``games`` says which game each can change
    (None: any): lists of the updates' positions, each applied in one transaction, in order.

    Between two updates of no single game (which stay where they are, in runs of up to
    :data:`CHUNK`), each game's updates are taken together in their order, games in the order
    they first appear, and packed into transactions of up to :data:`CHUNK` updates (a game
    with more takes several in a row). So the updates of one game are applied in their order,
    and an update of no single game after everything before it and before everything after
    it."""
    parts: list[list[int]] = []
    loose = False  # whether parts[-1] holds updates of no single game
    segment: dict[int, list[int]] = {}

    def pack() -> None:
        nonlocal loose
        current: list[int] = []
        for positions in segment.values():
            if current and len(current) + len(positions) > CHUNK:
                parts.append(current)
                current = []
            for start in range(0, len(positions), CHUNK):
                piece = positions[start : start + CHUNK]
                if len(current) + len(piece) > CHUNK:
                    parts.append(current)
                    current = []
                current += piece
        if current:
            parts.append(current)
            loose = False
        segment.clear()

    for position, game in enumerate(games):
        if game is not None:
            segment.setdefault(game, []).append(position)
            continue
        pack()
        if loose and len(parts[-1]) < CHUNK:
            parts[-1].append(position)
        else:
            parts.append([position])
            loose = True
    pack()
    return parts


def _accept(update: Any, source: str) -> tuple[str, str] | None:
    """(kind, event id) of an update of our community; None (logged) for anything else."""
    try:
        kind = check_update(update)
    except BadUpdate as exc:
        logger.warning(
            "Ignored a malformed VK update from %s: %s: %.500s", source, exc, dump(update)
        )
        return None
    event_id = event_id_of(update)
    if not is_our_group(update):
        served = "VK_GROUP_ID" if current_group() is None else "the community served,"
        logger.warning(
            "Ignored VK event %s (%s) from %s: group_id %r is not %s %r",
            event_id, kind, source, update.get("group_id"), served, this_group_id(),
        )  # fmt: skip
        return None
    return kind, event_id


def _apply_chunk(
    updates: Sequence[Any], facts: Sequence[Any], source: str, *, lone: bool = False
) -> int:
    """Record the updates' event ids and run the handlers of those recorded now; runs inside
    a transaction. Returns how many were applied.

    The handlers of a chunk run in one savepoint. Should one of them crash (a bug), the whole
    savepoint is rolled back and the chunk runs again with a savepoint per update, so that
    only the crashing update's changes are lost (see :func:`_dispatch`).

    ``lone``: the transaction holds this one update and nothing another update needs, so its
    handlers run in no savepoint of their own: a crash is raised as :class:`Crashed` for the
    caller to roll the whole transaction back and record the crash in a fresh one
    (:func:`_record_crash`)."""
    accepted = [
        (u, f, *k) for u, f in zip(updates, facts, strict=True) if (k := _accept(u, source))
    ]
    new = _record([(event_id, kind, group_id_of(u)) for u, _, kind, event_id in accepted], source)
    todo = []
    for update, update_facts, kind, event_id in accepted:
        if event_id not in new:
            logger.info("VK event %s (%s) from %s was already applied; skipped",
                        event_id, kind, source)  # fmt: skip
            continue
        new.discard(event_id)  # the same event twice in one batch: applied once
        todo.append((update, update_facts, kind, event_id))
    if lone and len(todo) == 1:
        update, update_facts, kind, event_id = todo[0]
        try:
            _handle(update, update_facts)
            unit_of_work.flush()
        except _INFRASTRUCTURE_ERRORS:
            raise
        except Exception as exc:
            unit_of_work.forget()
            raise Crashed(update, event_id, kind, source, exc) from exc
        return 1
    if len(todo) > 1:
        try:
            with transaction.atomic():
                for update, update_facts, _, _ in todo:
                    _handle(update, update_facts)
                unit_of_work.flush()  # (a failure here is the chunk's, found again below)
            return len(todo)
        except _INFRASTRUCTURE_ERRORS:
            raise
        except Exception:  # noqa: BLE001 - found again, and logged, update by update below
            unit_of_work.forget()  # rolled back with the savepoint (its markers are gone too)
            logger.warning("A handler failed in a chunk of %d VK events; applying them one "
                           "by one", len(todo))  # fmt: skip
    for update, update_facts, kind, event_id in todo:
        _dispatch(update, event_id, kind, source, update_facts)
    return len(todo)


def _record(events: Sequence[tuple[str, str, int | None]], source: str) -> set[str]:
    """Insert VkEvent rows for ``events`` (event id, type, group id) in one statement; returns
    the ids inserted now. An id already recorded — or being recorded by a concurrent
    transaction that then commits — is left out (``ON CONFLICT DO NOTHING``)."""
    if not events:
        return set()
    table = connection.ops.quote_name(VkEvent._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = ", ".join(["(%s, %s, %s, %s, %s)"] * len(events))
    params: list[Any] = []
    for event_id, kind, group_id in events:
        params += [event_id, kind[:TYPE_MAX], group_id or 0, source[:SOURCE_MAX], now]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (event_id, type, group_id, source, received_at) "
            f"VALUES {rows} ON CONFLICT (group_id, event_id) DO NOTHING RETURNING event_id",
            params,
        )
        return {row[0] for row in cursor.fetchall()}


def _handle(update: Mapping[str, Any], facts: Any) -> None:
    from vkbot import handlers  # lazily: the handlers import the whole bot

    if facts is None:
        handlers.dispatch(dict(update))
    else:
        handlers.dispatch(dict(update), facts=facts)


def _record_crash(crash: Crashed) -> int:
    """Record the event of a lone update whose handler crashed (its transaction rolled back),
    with what went wrong, and apologise to its sender; inside a fresh transaction. 1 if it
    was recorded now; 0 if another delivery of the event recorded it meanwhile (that one is
    the event's application)."""
    log_crash(crash.update, crash.event_id, crash.kind, crash.source, crash.error)
    event = (crash.event_id, crash.kind, group_id_of(crash.update))
    if not _record([event], crash.source):
        return 0
    note_crash(group_id_of(crash.update), crash.event_id, crash.error)
    apologise(crash.update, crash.event_id)
    return 1


def _dispatch(update: Mapping[str, Any], event_id: str, kind: str, source: str, facts: Any) -> None:
    """Run the handlers of one update in a savepoint: a crash rolls back its changes only."""
    try:
        with transaction.atomic():
            _handle(update, facts)
            unit_of_work.flush()  # the rows the update queued, in its savepoint
    except _INFRASTRUCTURE_ERRORS:
        raise
    except Exception as exc:
        # A bug: its changes are rolled back with the savepoint; the event stays recorded,
        # with what went wrong for the operator.
        unit_of_work.forget()
        note_crash(group_id_of(update), event_id, exc)
        log_crash(update, event_id, kind, source, exc)
        apologise(update, event_id)
