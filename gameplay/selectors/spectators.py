"""The spectator chat's page (RULES.md G6): who may join, who did, and the chat's creation."""

from __future__ import annotations

from dataclasses import dataclass

from gameplay.models import (
    Game,
    GameStatus,
    Outbox,
    OutboxChannel,
    Seat,
    SeatStatus,
    SpectatorMember,
)
from gameplay.rules.spectators import may_watch


@dataclass
class SpectatorPage:
    eligible: list[Seat]
    members: list[SpectatorMember]
    joined: int
    removed: int
    #: The latest request to create the chat (``create_chat``), if any.
    creation: Outbox | None = None
    #: The linked chat's title, when the community created it (VK does not tell it otherwise).
    chat_title: str = ""


def spectator_page(game: Game) -> SpectatorPage:
    seats = [
        s
        for s in Seat.objects.filter(
            game=game, status=SeatStatus.PLAYER, number__isnull=False
        ).order_by("number")
        if may_watch(alive=s.alive, role=s.role, game_over=game.status == GameStatus.FINISHED)
    ]
    members = list(
        SpectatorMember.objects.filter(game=game)
        .select_related("seat")
        .order_by("status", "-updated_at")
    )
    creation = (
        Outbox.objects.filter(game=game, channel=OutboxChannel.CREATE_CHAT).order_by("-id").first()
    )
    title = ""
    if (
        creation is not None
        and game.spectator_chat_id
        and (creation.result or {}).get("peer_id") == game.spectator_chat_id
    ):
        title = creation.text
    return SpectatorPage(
        chat_title=title,
        eligible=list(seats),
        members=members,
        joined=sum(1 for m in members if m.status == "joined"),
        removed=sum(1 for m in members if m.status == "removed"),
        creation=creation,
    )
