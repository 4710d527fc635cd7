"""Pressed buttons: callback buttons (``message_event``, always answered) and text buttons
with a payload (``message_new``); which handler each action goes to is ``routes.BUTTONS``. A
payload only names what the button was for; everything in it is checked again (the sender's
seat in that game, the phase, the act, the target), so a forged payload gets a refusal and
changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gameplay.buttons import BadPayload, Payload, decode
from gameplay.messages import render
from gameplay.models import Seat
from gameplay.refusals import OutOfGame
from gameplay.rules.errors import NotInGame
from gameplay.services import replies

from .base import CHAT_PEER_BASE, Sender, VkFacts, as_int, as_str, refuse, user_id


def event(obj: dict[str, Any]) -> tuple[int, Payload, int | None] | None:
    """A callback button: answer VK (the button stops spinning); what to act on — the sender,
    the payload and the message whose button it was (a page asked for replaces it:
    ``messages.edit``) — or None (a refusal, if any, is queued)."""
    sender = user_id(obj.get("user_id"))
    peer = as_int(obj.get("peer_id"))
    event_id = as_str(obj.get("event_id"), 100)
    if sender is None or peer is None:
        return None
    if event_id:
        replies.answer_event(event_id=event_id, user_id=sender, peer_id=peer)
    if peer != sender or peer > CHAT_PEER_BASE:
        return None  # our buttons live in private chats only
    try:
        payload = decode(obj.get("payload"))
    except BadPayload:
        refuse(sender, render("player/bad_button"))
        return None
    message = as_int(obj.get("conversation_message_id"))
    return sender, payload, message if message and message > 0 else None


def seated(
    handler: Callable[..., None],
) -> Callable[[Sender, Payload, VkFacts, int | None], None]:
    """A game's button (``handler(seat, payload, edit)``): for a living player of that
    running game only (a refusal is answered by ``routes`` with its reason)."""

    def press(sender: Sender, payload: Payload, _facts: VkFacts, edit: int | None) -> None:
        seat: Seat | None = sender.in_game(payload.game)
        if seat is not None:
            sender.game_id = seat.game_id
        if seat is None or seat.number is None or seat.game.status != "running":
            raise NotInGame()
        if not seat.alive:
            raise OutOfGame()
        handler(seat, payload, edit)

    return press
