"""The spectator chat («ЗЗ», RULES.md G6): «в ЗЗ» gets an eligible dead player the invite
link; anyone else who joins the chat is removed by the bot and the GM is told (a flag).

In any chat, the bot tells the chat's number in the community (what the GM types into the
panel to link it) when the community is added to the chat, or when someone writes «номер
беседы» there; the GM's own VK shows the chat under another number (their own)."""

from __future__ import annotations

from typing import Any

from gameplay.messages import render
from gameplay.rules import RuleViolation
from gameplay.selectors import bot as sel
from gameplay.selectors.communities import this_group_id
from gameplay.services import spectators
from gameplay.services.replies import chat_reply
from vkbot import parsing, replies

from .base import Sender, as_dict, as_int, as_str, refuse, user_id

JOINS = frozenset({"chat_invite_user", "chat_invite_user_by_link"})
LEAVES = frozenset({"chat_kick_user"})


def request(sender: Sender) -> None:
    """«в ЗЗ» by private message."""
    seats = sel.spectator_seats(sender.vk_user_id)
    if not seats:
        refuse(sender.vk_user_id, render("player/no_spectator_chat"))
        return
    # The first game that lets the user in serves; refused by all, the first refusal answers.
    first: RuleViolation | None = None
    for seat in seats:
        try:
            spectators.spectator_request(game_id=seat.game_id, vk_user_id=sender.vk_user_id)
            return
        except RuleViolation as e:
            if first is None:
                first, sender.game_id = e, seat.game_id
    assert first is not None
    raise first


def chat_message(peer_id: int, message: dict[str, Any]) -> None:
    """A message in a chat: joins and leaves of a game's spectator chat; the community being
    added to a chat, and «номер беседы», get the chat's number."""
    action = as_dict(message.get("action"))
    kind = as_str(action.get("type"), 64)
    if not action and parsing.is_chat_number_request(message.get("text")):
        tell_number(peer_id, added=False)
        return
    if kind not in JOINS and kind not in LEAVES:
        return
    if kind == "chat_invite_user" and is_community(action.get("member_id")):
        tell_number(peer_id, added=True)
        return
    member = user_id(action.get("member_id"))
    if member is None:
        return  # a community, or garbage
    game = sel.game_for_chat(peer_id)
    if game is None:
        return
    if kind in JOINS:
        spectators.spectator_joined(game_id=game.pk, member_id=member)
    else:
        spectators.spectator_left(game_id=game.pk, member_id=member)


def is_community(member_id: Any) -> bool:
    """Whether a chat action's ``member_id`` is the community being served (its VK id,
    negated)."""
    member = as_int(member_id)
    group = this_group_id()
    return member is not None and group is not None and member == -int(group)


def tell_number(peer_id: int, *, added: bool) -> None:
    """Answer in the chat with its number and how to link it (through the Outbox)."""
    game = sel.game_for_chat(peer_id)
    text = replies.chat_number(peer_id, game.name if game else None, added=added)
    chat_reply(peer_id=peer_id, text=text, game=game, kind="chat_number")
