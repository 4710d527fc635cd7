"""The mafia's channel (RULES.md G5): a living mafia member's «!» message to the other living
mafia, with the sender's name."""

from __future__ import annotations

from django.db import transaction

from gameplay.messages import Person, render
from gameplay.models import Actor, EventKind, GameStatus
from gameplay.refusals import NotMafia, RelayEmpty
from gameplay.rules import Role
from gameplay.rules.errors import GameNotRunning

from .acting import seat_of_user
from .common import lock_game, log_event, players, send_message
from .replies import reply

#: Longest relayed text (VK's limit is 9000; the sender's name goes in front).
RELAY_MAX = 4000


@transaction.atomic
def mafia_relay(*, game_id: int, vk_user_id: int, text: str) -> int:
    """A living mafia member's «!» message to the other living mafia, with the sender's name.
    Returns how many received it (the sender is told)."""
    game = lock_game(game_id=game_id)
    if game.status != GameStatus.RUNNING:
        raise GameNotRunning()  # a player's refusal: its text says where to look
    seat = seat_of_user(game=game, vk_user_id=vk_user_id)
    if seat.role != Role.MAFIA:
        raise NotMafia()
    number = seat.number
    assert number is not None  # a dealt game's seats are numbered
    body = text.strip()[:RELAY_MAX]
    if not body:
        raise RelayEmpty()
    team = [
        s.vk_user_id for s in players(game) if s.alive and s.role == Role.MAFIA and s.pk != seat.pk
    ]
    if team:
        send_message(
            game=game,
            peer_ids=team,
            text=render("player/relay", sender=Person.of(seat), text=body),
            kind="mafia_relay",
        )
        reply(
            vk_user_id=vk_user_id,
            game=game,
            text=render("player/relay_sent", count=len(team)),
            kind="mafia_relay_sent",
        )
    else:
        reply(
            vk_user_id=vk_user_id,
            game=game,
            text=render("player/relay_alone"),
            kind="mafia_relay_sent",
        )
    log_event(
        game,
        EventKind.MAFIA_RELAY,
        by=Actor.seat(number),
        seat=number,
        recipients=len(team),
        text=body,
    )
    return len(team)
