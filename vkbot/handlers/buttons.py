"""Pressed buttons: callback buttons (``message_event``, always answered) and text buttons
with a payload (``message_new``). A payload only names what the button was for; everything in
it is checked again (the sender's seat in that game, the phase, the act, the target), so a
forged payload gets a refusal and changes nothing."""

from __future__ import annotations

from typing import Any

from gameplay.buttons import (
    HELP,
    MENU,
    NIGHT_ACTS,
    SIGNUP,
    STATUS,
    VOTE,
    BadPayload,
    Payload,
    decode,
)
from gameplay.messages import render
from gameplay.rules import RuleViolation
from gameplay.rules.errors import DeadCannotAct, NotInGame
from gameplay.services import players

from . import night, signup, status, votes
from .base import CHAT_PEER_BASE, Sender, VkFacts, as_int, as_str, refuse, user_id


def event(obj: dict[str, Any], facts: VkFacts) -> None:
    """A callback button: answer VK (the button stops spinning), then act on it."""
    sender = user_id(obj.get("user_id"))
    peer = as_int(obj.get("peer_id"))
    event_id = as_str(obj.get("event_id"), 100)
    if sender is None or peer is None:
        return
    if event_id:
        players.answer_event(event_id=event_id, user_id=sender, peer_id=peer)
    if peer != sender or peer > CHAT_PEER_BASE:
        return  # our buttons live in private chats only
    try:
        payload = decode(obj.get("payload"))
    except BadPayload:
        refuse(sender, render("player/bad_button"))
        return
    # The message whose button it was: a page asked for replaces it (``messages.edit``).
    message = as_int(obj.get("conversation_message_id"))
    pressed(sender, payload, facts, edit=message if message and message > 0 else None)


def pressed(vk_user_id: int, payload: Payload, facts: VkFacts, *, edit: int | None = None) -> None:
    """A button of this bot. ``edit``: the message it sits on (callback buttons), which the
    page it asks for (next targets, the commissar's choice, the guess) replaces."""
    sender = Sender.load(vk_user_id)
    action = payload.action
    if action == STATUS:
        status.show_status(sender)
        return
    if action == HELP:
        status.show_help(sender)
        return
    if action == MENU:
        status.show_menu(sender)
        return
    if action == SIGNUP:
        signup.from_button(sender, payload, facts)
        return
    seat = sender.in_game(payload.game)
    try:
        if seat is None or seat.number is None or seat.game.status != "running":
            raise NotInGame()
        if not seat.alive:
            raise DeadCannotAct(render("player/dead"))
        if action in NIGHT_ACTS:
            night.pressed(seat, payload, edit=edit)
        elif action == VOTE:
            votes.pressed(seat, payload, edit=edit)
    except RuleViolation as e:
        refuse(vk_user_id, e.reason, game=seat.game_id if seat else None)
