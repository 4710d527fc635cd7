"""Shared pieces of the services: locking, the event log, the Outbox, rule snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

from django.db import transaction
from django.db.models import Field
from django.utils import timezone

from gameplay import themes, unit_of_work
from gameplay.context import current_group
from gameplay.messages import Person, render
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    GameEvent,
    GameStatus,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseKind,
    Seat,
    Strike,
)
from gameplay.refusals import NoSuchGame
from gameplay.rules import Role, StrikeGiven
from gameplay.rules.errors import GameNotRunning, NotInGame
from gameplay.rules.spectators import may_watch
from gameplay.selectors import bot
from gameplay.selectors.communities import in_served_community

# The reads the services share with the panel (re-exported: the services read them under the
# game's lock).
from gameplay.selectors.table import current_phase as current_phase
from gameplay.selectors.table import players as players
from gameplay.selectors.table import table_of as table_of
from gameplay.unit_of_work import txcache
from outbox import dbrows
from outbox.queue import request_delivery

#: Recipients of one messages.send (VK.md: peer_ids up to 100).
MAX_PEERS = 100


def now_or(*, now: datetime | None) -> datetime:
    return now or timezone.now()


def lock_game(*, game_id: int) -> Game:
    """Lock the game row for the rest of the transaction (per-game serialisation), read
    afresh: the hot path's kept rows of the game (:mod:`gameplay.unit_of_work`) are dropped, as
    the caller may change what they hold (or read the event log or the Outbox)."""
    unit_of_work.read_afresh(game_id)
    return _lock_row(game_id)


def _lock_row(game_id: int) -> Game:
    """``Game.objects.select_for_update().get(pk=game_id)``, as one prepared statement (every
    service runs it; the seed is decrypted only when read)."""
    game = unit_of_work.lock_game_row(game_id)
    if game is None:
        raise NoSuchGame()
    return game


def lock_game_hot(*, game_id: int) -> unit_of_work.LockedGame:
    """The hot path's unit of work (a vote, a night action): the game locked, with its current
    phase and players, read once per transaction while the pipeline keeps them
    (:func:`gameplay.unit_of_work.kept`); otherwise two queries, the lock and
    ``gameplay.unit_of_work.read_locked`` (one when the transaction already holds the row:
    :func:`hot_seats_of_user`)."""
    entry = unit_of_work.kept_game(game_id)
    if entry is not None:
        return entry
    held = unit_of_work.held(game_id)
    return _read_hot(
        held if held is not None else _lock_row(game_id)
    )  # (not kept: nothing to drop)


def _read_hot(game: Game) -> unit_of_work.LockedGame:
    """The unit of work of ``game``, its row just locked, kept for the transaction."""
    unit_of_work.flush()  # (the log's queued rows count in its last seq)
    entry = unit_of_work.read_locked(game)
    if entry is None:  # no seated players: nothing to join the phase to
        entry = unit_of_work.LockedGame(game, current_phase(game), [])
    return unit_of_work.keep(entry)


def lock_topic_game_hot(*, topic_id: int) -> unit_of_work.LockedGame | None:
    """A vote posted in a topic: the running game whose game topic it is, locked and read as
    :func:`lock_game_hot` reads it, found and locked in one query (the handlers' reads of the
    game, its seats and phase, and the vote's service, then find it kept). None outside the
    pipeline's kept transaction, or when no running game has this topic (nothing locked)."""
    if not unit_of_work.active():
        return None
    kept = txcache.game_with_topic(topic_id)
    if kept is not None:
        return unit_of_work.kept_game(kept.pk) if kept.status == GameStatus.RUNNING else None
    game = (
        Game.objects.select_for_update()
        .filter(in_served_community(), topic_id=topic_id, status=GameStatus.RUNNING)
        .order_by("-created_at", "-id")
        .first()
    )
    return _read_hot(game) if game is not None else None


def hot_seats_of_user(*, vk_user_id: int) -> list[Seat]:
    """A vote or a night action by private message or button: the user's seats, as
    ``gameplay.selectors.bot.seats_of_user`` reads them, with their games locked in the same
    query (:func:`lock_game_hot` then reads the game without locking it again). Outside the
    pipeline's kept transaction, or when the transaction read the user's seats already, the
    selector's answer."""
    if not unit_of_work.active() or txcache.user_seats(vk_user_id) is not None:
        return bot.seats_of_user(vk_user_id)
    seats = list(
        bot.active_seats(vk_user_id=vk_user_id)
        .select_related("game")
        .select_for_update(of=("game",))
        .order_by("game_id")
    )
    for seat in seats:
        if unit_of_work.kept_game(seat.game_id) is None:
            unit_of_work.hold(seat.game)
    return [bot.kept_seat(seat) for seat in seats]


@contextmanager
def hot_game(*, game_id: int) -> Iterator[unit_of_work.LockedGame]:
    """One hot call (a vote, a night action) on its game: ``lock_game_hot`` in the call's
    transaction.

    Outside the pipeline's kept transaction (:func:`gameplay.unit_of_work.kept`) the call is
    a transaction (or a savepoint) of its own, as every service. Inside it, the call opens no
    savepoint: :func:`gameplay.unit_of_work.hot_call` guards it (a refusal after the writes
    began is raised as ``RefusalAfterWrites``, a crash)."""
    if not unit_of_work.active():
        with transaction.atomic():
            yield lock_game_hot(game_id=game_id)
        return
    with unit_of_work.hot_call(lock_game_hot(game_id=game_id)) as entry:
        yield entry


def require_running(*, game: Game) -> None:
    if game.status != GameStatus.RUNNING:
        raise GameNotRunning()


def seat_by_number(*, seats: Sequence[Seat], number: int) -> Seat:
    for s in seats:
        if s.number == number:
            return s
    raise NotInGame()


def log_event(
    game: Game,
    kind: EventKind,
    /,
    *,
    by: Actor = Actor.BOT,
    phase: Phase | None = None,
    override: bool = False,
    **data: Any,
) -> GameEvent:
    """Append to the game's event log now (seq is per game; the game row is locked). ``kind``
    must be an ``EventKind`` (a ValueError otherwise: the log holds no kind the panel cannot
    name). A hot call logs through its handle instead (``LockedGame.log_event``): while the
    pipeline keeps the game, the handle counts the seq on, so logging past it would repeat a
    seq (refused)."""
    kind = EventKind(kind)
    event = GameEvent(
        game=game,
        seq=_take_seq(game),
        kind=kind,
        actor=by,
        phase=phase,
        override=override,
        data=data,
    )
    dbrows.insert([event])
    return event


def log_events(
    *, game: Game, kind: EventKind, events: Sequence[tuple[Actor, dict[str, Any]]]
) -> list[GameEvent]:
    """Append events of one kind, each ``(by, data)``, as :func:`log_event` appends them one
    by one (consecutive seqs, in order; no phase, no override), in one insert."""
    kind = EventKind(kind)
    if not events:
        return []
    rows = [
        GameEvent(game=game, seq=_take_seq(game), kind=kind, actor=by, data=data)
        for by, data in events
    ]
    dbrows.insert(rows)
    return rows


def _take_seq(game: Game) -> int:
    """The seq of the game's next event, taken (the log's queued rows written first); refused
    while the pipeline keeps the game (its handle counts the seq on: see :func:`log_event`)."""
    if unit_of_work.kept_game(game.pk) is not None:
        raise RuntimeError(f"game {game.pk} is kept: log through its unit of work")
    unit_of_work.flush()  # the log's queued rows count
    return unit_of_work.take_event_seq(game)


def _stamp_groups(rows: list[Outbox]) -> None:
    """Set each row's community: its game's (every game has one), else the one being served
    (``gameplay.context``), else None (the environment's). A game's row never goes out as
    another community, whatever the caller set."""
    wanted = {r.game_id for r in rows if r.game_id is not None and not Outbox.game.is_cached(r)}
    groups = (
        dict(Game.objects.filter(pk__in=wanted).values_list("pk", "vk_group_id")) if wanted else {}
    )
    served = current_group()
    for row in rows:
        if row.game_id is None:
            row.group_id = row.group_id if row.group_id is not None else served
        elif Outbox.game.is_cached(row):
            row.group_id = int(cast(Game, row.game).vk_group_id)  # game_id is set
        elif row.game_id in groups:
            row.group_id = int(groups[row.game_id])
        else:
            raise NoSuchGame()


def queue_outbox(*, rows: list[Outbox]) -> list[Outbox]:
    """Write Outbox rows — the one way any code writes them, so every row of a game goes out
    as the game's community — (inserted at the end of the pipeline's transaction when it keeps
    games, in the order queued: :func:`gameplay.unit_of_work.defer`; now otherwise, in plain
    SQL: :func:`outbox.dbrows.insert`) and have the delivery drain them once the transaction
    commits."""
    _stamp_groups(rows)
    if rows and not unit_of_work.defer(rows):
        dbrows.insert(rows)
    if rows:
        request_delivery()
    return rows


def send_message(
    *,
    game: Game | None,
    peer_ids: Iterable[int],
    text: str,
    kind: str,
    keyboard: dict[str, Any] | None = None,
) -> list[Outbox]:
    """Queue one text to one or more users (split by VK's 100 peer_ids per send)."""
    rows = message_rows(game=game, peer_ids=peer_ids, text=text, kind=kind, keyboard=keyboard)
    return queue_outbox(rows=rows)  # the drain job runs once this transaction commits


def message_rows(
    *,
    game: Game | None,
    peer_ids: Iterable[int],
    text: str,
    kind: str,
    keyboard: dict[str, Any] | None = None,
) -> list[Outbox]:
    """The rows :func:`send_message` queues, not queued yet: a service sending several texts
    at once (a card or a prompt per group of players) queues them together, in one insert."""
    peers = sorted(set(int(p) for p in peer_ids))
    return [
        Outbox(
            game=game,
            channel=OutboxChannel.MESSAGE,
            peer_ids=peers[i : i + MAX_PEERS],
            text=text,
            keyboard=keyboard,
            kind=kind,
        )
        for i in range(0, len(peers), MAX_PEERS)
    ]


def post_board(*, game: Game, text: str, kind: str) -> Outbox | None:
    """Queue a post in the game's discussion topic (a game without a topic posts nothing)."""
    if game.topic_id is None:
        return None
    [row] = queue_outbox(
        rows=[
            Outbox(
                game=game, channel=OutboxChannel.BOARD, topic_id=game.topic_id, text=text, kind=kind
            )
        ]
    )
    return row


def post_chat(*, game: Game | int | None, peer_id: int, text: str, kind: str) -> Outbox:
    """Queue a message in a chat (``peer_id`` ≥ 2000000001), of a game or of none."""
    [row] = queue_outbox(
        rows=[
            Outbox(
                game_id=game.pk if isinstance(game, Game) else game,
                channel=OutboxChannel.CHAT,
                peer_ids=[peer_id],
                text=text,
                kind=kind,
            )
        ]
    )
    return row


def save_changed_seats(*, seats: Sequence[Seat], fields: list[str], before: list[tuple]) -> None:
    """Save ``fields`` of the ``seats`` changed since :func:`seat_fields` read ``before``, in
    one statement executed per changed seat (none when nothing changed; no ``bulk_update``,
    whose CASE costs more to compile than the updates). The seats are the game's as its lock
    read them, so an unchanged one holds what the database holds."""
    changed = [
        s for s, was in zip(seats, before, strict=True) if seat_fields(seat=s, fields=fields) != was
    ]
    dbrows.update_each(changed, fields)


def seat_fields(*, seat: Seat, fields: list[str]) -> tuple:
    """``fields`` of ``seat`` as they are (a relation by its id)."""
    return tuple(getattr(seat, cast(Field, Seat._meta.get_field(f)).attname) for f in fields)


def _penalty_day(phase: Phase) -> int:
    """The day whose tally a first strike given in ``phase`` counts in: this day, or after a
    night the next one."""
    return phase.number if phase.kind == PhaseKind.DAY else phase.number + 1


def strike_record(*, seat: Seat, phase: Phase, given: StrikeGiven, note: str = "") -> Strike:
    """Record the strike the rules gave ``seat`` in ``phase`` and set its count on the seat
    (not saved): a first one carries its penalty votes to :func:`_penalty_day`, a second one is
    a modkill."""
    seat.strikes = given.count
    return Strike.objects.create(
        seat=seat,
        phase=phase,
        reason=given.reason.value,
        count=given.count,
        penalty_votes=given.penalty_votes,
        penalty_day=None if given.modkill else _penalty_day(phase),
        modkill=given.modkill,
        note=note,
    )


def notify_strikes(
    *, game: Game, struck: list[tuple[Seat, StrikeGiven]], phase: Phase, counted: bool
) -> None:
    """Tell each struck player privately what their strike means (a first one: penalty votes,
    and that the next one is a modkill; a second one: the modkill). One message per text."""
    by_text: dict[str, list[int]] = {}
    for seat, strike in struck:
        why = render("player/strike_why", reason=strike.reason.value, number=phase.number)
        if strike.modkill:
            text = render("player/struck_out", why=why)
        else:
            text = render(
                "player/struck",
                why=why,
                votes=strike.penalty_votes,
                day=_penalty_day(phase),
                counted=counted,
            )
        by_text.setdefault(text, []).append(seat.vk_user_id)
    rows = [
        row
        for text, peers in by_text.items()
        for row in message_rows(game=game, peer_ids=peers, text=text, kind="strike")
    ]
    queue_outbox(rows=rows)


def send_you_died(*, game: Game, seats: list[Seat]) -> None:
    """«You are out» to each seat that just died; only those G6 lets in
    (:func:`gameplay.rules.spectators.may_watch`) are told how to ask for the spectator chat."""
    rows = []
    for invited in (True, False):
        group = [s.vk_user_id for s in seats if may_watch(alive=False, role=s.role) is invited]
        if group:
            text = render("player/you_died", invited=invited)
            rows += message_rows(game=game, peer_ids=group, text=text, kind="you_died")
    queue_outbox(rows=rows)


def role_card_text(*, game: Game, seat: Seat, seats: Sequence[Seat]) -> str:
    """A player's role card: number, the theme's card of the role, the team for the mafia,
    the item while it is unused, the deal's hash."""
    mafia = [Person.of(s) for s in seats if s.role == Role.MAFIA] if seat.role == Role.MAFIA else []
    return render(
        "player/role_card",
        theme=themes.of(game),
        game=game.name,
        number=seat.number,
        role=seat.role,
        item=seat.item if seat.item and not seat.item_used else "",
        mafia=mafia,
        commitment=game.commitment,
    )
