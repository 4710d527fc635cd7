"""The mafia's channel (RULES.md G5): «!текст» from a living mafia member reaches the other
living mafia with the sender's name, and nobody else."""

from __future__ import annotations

from gameplay.refusals import OutOfGame
from gameplay.rules import RuleViolation
from gameplay.services import mafia

from .base import Sender, refuse, single_running_seat


def relay(sender: Sender, text: str) -> None:
    seat = single_running_seat(sender)
    if isinstance(seat, str):
        refuse(sender.vk_user_id, seat)
        return
    if not seat.alive:
        refuse(sender.vk_user_id, OutOfGame().reason, game=seat.game_id)
        return
    try:
        mafia.mafia_relay(game_id=seat.game_id, vk_user_id=sender.vk_user_id, text=text)
    except RuleViolation as e:
        refuse(sender.vk_user_id, e.reason, game=seat.game_id)
