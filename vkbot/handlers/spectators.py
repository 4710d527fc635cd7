"""The spectator chat («ЗЗ», RULES.md G6): «в ЗЗ» gets an eligible dead player the invite
link; anyone else who joins the chat is removed by the bot and the GM is told (a flag)."""

from __future__ import annotations

from typing import Any

from gameplay.rules import RuleViolation
from gameplay.selectors import bot as sel
from gameplay.services import players
from vkbot import texts

from .base import Sender, as_dict, as_str, refuse, user_id

JOINS = frozenset({"chat_invite_user", "chat_invite_user_by_link"})
LEAVES = frozenset({"chat_kick_user"})


def request(sender: Sender) -> None:
    """«в ЗЗ» by private message."""
    seats = sel.spectator_seats(sender.vk_user_id)
    if not seats:
        refuse(sender.vk_user_id, texts.NO_SPECTATOR_CHAT)
        return
    refusal = None
    for seat in seats:
        try:
            players.spectator_request(game_id=seat.game_id, vk_user_id=sender.vk_user_id)
            return
        except RuleViolation as e:
            refusal = refusal or (e.reason, seat.game_id)
    assert refusal is not None
    refuse(sender.vk_user_id, refusal[0], game=refusal[1])


def chat_message(peer_id: int, message: dict[str, Any]) -> None:
    """A message in a chat: only joins and leaves of a game's spectator chat matter."""
    action = as_dict(message.get("action"))
    kind = as_str(action.get("type"), 64)
    if kind not in JOINS and kind not in LEAVES:
        return
    member = user_id(action.get("member_id"))
    if member is None:
        return  # the community itself, or garbage
    game = sel.game_for_chat(peer_id)
    if game is None:
        return
    if kind in JOINS:
        players.spectator_joined(game_id=game.pk, member_id=member)
    else:
        players.spectator_left(game_id=game.pk, member_id=member)
