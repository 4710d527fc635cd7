"""Shared pieces of the services: locking, the event log, the Outbox, rule snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Max
from django.utils import timezone

from gameplay.models import (
    Game,
    GameEvent,
    GameStatus,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
)
from gameplay.rules import Item, Role, SeatState, Table
from gameplay.rules.errors import GameNotRunning, InvalidCommand, NotInGame

from .outbox import request_delivery

#: Recipients of one messages.send (VK.md: peer_ids up to 100).
MAX_PEERS = 100


def now_or(now: datetime | None) -> datetime:
    return now or timezone.now()


def lock_game(game_id: int) -> Game:
    """Lock the game row for the rest of the transaction (per-game serialisation)."""
    try:
        return Game.objects.select_for_update().get(pk=game_id)
    except Game.DoesNotExist:
        raise InvalidCommand("Такой игры нет.") from None


def require_running(game: Game) -> None:
    if game.status != GameStatus.RUNNING:
        raise GameNotRunning()


def current_phase(game: Game) -> Phase | None:
    return (
        Phase.objects.filter(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])
        .order_by("-id")
        .first()
    )


def players(game: Game) -> list[Seat]:
    """The seated players, in seat order."""
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False).order_by(
            "number"
        )
    )


def table_of(seats: Iterable[Seat]) -> Table:
    """The rules' snapshot of these seats."""
    return Table.of(
        SeatState(
            number=s.number,
            role=Role(s.role),
            alive=s.alive,
            strikes=s.strikes,
            item=Item(s.item) if s.item else None,
            item_used=s.item_used,
        )
        for s in seats
        if s.number is not None and s.role
    )


def seat_by_number(seats: Sequence[Seat], number: int) -> Seat:
    for s in seats:
        if s.number == number:
            return s
    raise NotInGame()


def log_event(
    game: Game,
    kind: str,
    /,
    *,
    by: str = "system",
    phase: Phase | None = None,
    override: bool = False,
    **data: Any,
) -> GameEvent:
    """Append to the game's event log (seq is per game; the game row is locked)."""
    last = GameEvent.objects.filter(game=game).aggregate(m=Max("seq"))["m"] or 0
    return GameEvent.objects.create(
        game=game, seq=last + 1, kind=kind, actor=by, phase=phase, override=override, data=data
    )


def send_message(
    game: Game | None,
    peer_ids: Iterable[int],
    text: str,
    *,
    kind: str,
    keyboard: dict[str, Any] | None = None,
) -> list[Outbox]:
    """Queue one text to one or more users (split by VK's 100 peer_ids per send)."""
    peers = sorted(set(int(p) for p in peer_ids))
    rows = [
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
    if not rows:
        return []
    created = Outbox.objects.bulk_create(rows)
    request_delivery()  # the drain job runs once this transaction commits
    return created


def post_board(game: Game, text: str, *, kind: str) -> Outbox | None:
    """Queue a post in the game's discussion topic (a game without a topic posts nothing)."""
    if game.topic_id is None:
        return None
    row = Outbox.objects.create(
        game=game, channel=OutboxChannel.BOARD, topic_id=game.topic_id, text=text, kind=kind
    )
    request_delivery()
    return row


def post_chat(game: Game | int | None, peer_id: int, text: str, *, kind: str) -> Outbox:
    """Queue a message in a chat (``peer_id`` ≥ 2000000001), of a game or of none."""
    row = Outbox.objects.create(
        game_id=game.pk if isinstance(game, Game) else game,
        channel=OutboxChannel.CHAT,
        peer_ids=[peer_id],
        text=text,
        kind=kind,
    )
    request_delivery()
    return row
