"""The mafia's channel (RULES.md G5): «!текст» from a living mafia member reaches the other
living mafia with the sender's name, and nobody else."""

from __future__ import annotations

from gameplay.refusals import OutOfGame
from gameplay.services import mafia

from .base import Sender, refuse, single_running_seat


def relay(sender: Sender, text: str) -> None:
    seat = single_running_seat(sender)
    if isinstance(seat, str):
        refuse(sender.vk_user_id, seat)
        return
    sender.game_id = seat.game_id
    if not seat.alive:
        raise OutOfGame()
    mafia.mafia_relay(game_id=seat.game_id, vk_user_id=sender.vk_user_id, text=text)
