"""The mafia's channel (RULES.md G5): «!текст» from a living mafia member reaches the other
living mafia with the sender's name, and nobody else."""

from __future__ import annotations

from gameplay.services import mafia

from .base import Sender, living_seat


def relay(sender: Sender, text: str) -> None:
    seat = living_seat(sender)
    if seat is None:
        return
    mafia.mafia_relay(game_id=seat.game_id, vk_user_id=sender.vk_user_id, text=text)
