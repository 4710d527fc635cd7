"""Sending a night action (RULES.md §4): one command, :func:`night_action_submit`, whoever
sends it: a seat number (the GM's tools, the scenarios) or a VK user (the bot: text or a
button, on the hot path of :func:`common.hot_game`). Closing, reviewing and publishing the
night are :mod:`.night`'s and :mod:`.publication`'s."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.db import transaction

from gameplay.messages import Person, render
from gameplay.models import Game, Seat, Source
from gameplay.rules import Act, Role

from .acting import check_button_phase, seat_of_user
from .common import current_phase, hot_game, lock_game, send_message
from .night import ActionOutcome, night_action_submit_locked


def night_action_submit(
    *,
    game_id: int,
    act: Act | str,
    target: int,
    actor: int | None = None,
    vk_user_id: int | None = None,
    guess: Role | str | None = None,
    source: str = Source.PM,
    phase_id: int | None = None,
    now: datetime | None = None,
) -> ActionOutcome:
    """Send or change a night action; a later one in the same slot replaces it. The actor is
    ``actor`` (a seat number) or the living seat of ``vk_user_id`` (from VK: text, or a
    button naming ``phase_id``; the mafia then sees the team's role strike and who sent it,
    as it sees the team's shot)."""
    if vk_user_id is None:
        if actor is None:
            raise TypeError("night_action_submit needs actor or vk_user_id")
        with transaction.atomic():
            game = lock_game(game_id=game_id)
            return night_action_submit_locked(
                game=game,
                phase=current_phase(game),
                seats=None,
                actor=actor,
                act=act,
                target=target,
                guess=guess,
                source=source,
            )
    with hot_game(game_id=game_id) as locked:
        game, seats = locked.game, locked.seats
        seat = seat_of_user(game=game, vk_user_id=vk_user_id, seats=seats)
        phase = check_button_phase(phase=locked.phase, phase_id=phase_id, seat=seat)
        outcome = night_action_submit_locked(
            game=game,
            phase=phase,
            seats=seats,
            actor=cast(int, seat.number),  # a player's seat
            act=act,
            target=target,
            guess=guess,
            source=Source.PM,
        )
        _mafia_strike_update(game, seats, seat, outcome)
    return outcome


def _mafia_strike_update(game: Game, seats: list[Seat], seat: Seat, outcome: ActionOutcome) -> None:
    action = outcome.action
    if action.act == Act.ROLE_STRIKE:
        team = [s.vk_user_id for s in seats if s.alive and s.role == Role.MAFIA and s.pk != seat.pk]
        if team:
            send_message(
                game=game,
                peer_ids=team,
                text=render(
                    "player/role_strike_update",
                    sender=Person.of(seat),
                    target=Person.of(action.target),
                    guess=action.guess,
                ),
                kind="mafia_strike",
            )
