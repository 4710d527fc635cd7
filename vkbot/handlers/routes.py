"""The bot's routing in one place: which handler each VK update, private text command, pressed
button and board command goes to.

- :data:`UPDATES`: a VK update's ``type``. A ``message_new`` in a private chat is a button's
  payload (one of ours: :data:`BUTTONS`) or a text command (:data:`TEXT`); in a chat (peer id
  ≥ 2000000000) it is the spectator chat's business (``spectators``). A ``message_event`` (a
  callback button) is answered, then goes to :data:`BUTTONS`. Board posts go to ``board``,
  which finds the game a post's command is for: a sign-up's, or its topic's running game's.
- :data:`BOARD`: a board command's kind (sign-ups, votes, «подсчёт»).
- :data:`TEXT`: a private text command's kind (``vkbot.parsing``); an empty message and one
  that is no command get their refusals.
- :data:`BUTTONS`: a payload's action (``gameplay.buttons``); a game's buttons (the vote, the
  night acts) are for a living player of that running game (``buttons.seated``).

A refusal (a ``RuleViolation`` out of a handler) is answered here and nowhere else: a private
command's or a button's with its text to the sender, stamped with the game the handler found
(``Sender.game_id``); a board command's in its topic (``board.refused``).
"""

from __future__ import annotations

from collections.abc import Callable
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
from vkbot import parsing

from . import board, buttons, mafia, night, signup, spectators, status, votes
from .base import CHAT_PEER_BASE, Sender, VkFacts, as_dict, as_int, as_str, refuse, user_id

Update = Callable[[dict[str, Any], VkFacts], None]
Text = Callable[[Sender, parsing.Command, VkFacts], None]
Button = Callable[[Sender, Payload, VkFacts, int | None], None]
BoardCommand = Callable[[board.Command], None]


# Each entry calls its handler through its module (looked up when called: a test may replace
# a handler).

TEXT: dict[str, Text] = {
    parsing.SIGNUP: lambda sender, cmd, facts: signup.from_private(sender, cmd, facts),
    parsing.RESERVE: lambda sender, cmd, facts: signup.from_private(sender, cmd, facts),
    parsing.WITHDRAW: lambda sender, cmd, facts: signup.from_private(sender, cmd, facts),
    parsing.STATUS: lambda sender, _cmd, _facts: status.show_status(sender),
    parsing.HELP: lambda sender, _cmd, _facts: status.show_help(sender),
    parsing.MENU: lambda sender, _cmd, _facts: status.show_menu(sender),
    parsing.NIGHT: lambda sender, cmd, _facts: night.from_text(sender, cmd),
    parsing.VOTE: lambda sender, cmd, _facts: votes.from_private(sender, cmd),
    parsing.COUNT: lambda sender, _cmd, _facts: votes.count_private(sender),
    parsing.RELAY: lambda sender, cmd, _facts: mafia.relay(sender, cmd.text),
    parsing.SPECTATORS: lambda sender, _cmd, _facts: spectators.request(sender),
}

BUTTONS: dict[str, Button] = {
    STATUS: lambda sender, _payload, _facts, _edit: status.show_status(sender),
    HELP: lambda sender, _payload, _facts, _edit: status.show_help(sender),
    MENU: lambda sender, _payload, _facts, _edit: status.show_menu(sender),
    SIGNUP: lambda sender, payload, facts, _edit: signup.from_button(sender, payload, facts),
    VOTE: buttons.seated(lambda seat, payload, edit: votes.pressed(seat, payload, edit=edit)),
    **dict.fromkeys(
        sorted(NIGHT_ACTS),
        buttons.seated(lambda seat, payload, edit: night.pressed(seat, payload, edit=edit)),
    ),
}

BOARD: dict[str, BoardCommand] = {
    parsing.SIGNUP: lambda c: signup.from_board(c.game, c.topic, c.author, c.cmd, c.facts),
    parsing.RESERVE: lambda c: signup.from_board(c.game, c.topic, c.author, c.cmd, c.facts),
    parsing.WITHDRAW: lambda c: signup.from_board(c.game, c.topic, c.author, c.cmd, c.facts),
    parsing.COUNT: lambda c: votes.count_board(c.game, c.topic),
    parsing.VOTE: lambda c: votes.from_board(c.game, c.topic, c.post_id, c.author, c.cmd,
                                             c.seats),
}  # fmt: skip


#: Private text commands and buttons (those naming a target) that cast a vote or send a night
#: action: their sender's games are locked as the sender's seats are read (``Sender.load``).
_HOT_TEXT = frozenset({parsing.VOTE, parsing.NIGHT})
_HOT_BUTTONS = frozenset({VOTE, *NIGHT_ACTS})


def _answered(sender: Sender, call: Callable[[], None]) -> None:
    """Run a private command's or a button's handler; a refusal gets its text, in the game the
    handler found."""
    try:
        call()
    except RuleViolation as refusal:
        refuse(sender.vk_user_id, refusal.reason, game=sender.game_id)


def text(vk_user_id: int, message: str, facts: VkFacts) -> None:
    """A private text command: every message gets an answer."""
    cmd = parsing.parse_private(message)
    if cmd.kind == parsing.EMPTY:
        refuse(vk_user_id, render("player/empty_message"))
        return
    sender = Sender.load(vk_user_id, hot=cmd.kind in _HOT_TEXT)
    handler = TEXT.get(cmd.kind)
    if handler is None:
        refuse(vk_user_id, render("player/unknown_command"))
        return
    _answered(sender, lambda: handler(sender, cmd, facts))


def button(vk_user_id: int, payload: Payload, facts: VkFacts, *, edit: int | None = None) -> None:
    """A button of this bot. ``edit``: the message it sits on (callback buttons), which the
    page it asks for (next targets, the commissar's choice, the guess) replaces."""
    hot = payload.target is not None and payload.action in _HOT_BUTTONS
    sender = Sender.load(vk_user_id, hot=hot)
    _answered(sender, lambda: BUTTONS[payload.action](sender, payload, facts, edit))


def _message_new(obj: dict[str, Any], facts: VkFacts) -> None:
    message = as_dict(obj.get("message"))
    peer = as_int(message.get("peer_id"))
    if peer is None or as_int(message.get("out")) == 1:
        return
    if peer > CHAT_PEER_BASE:
        spectators.chat_message(peer, message)
        return
    sender = user_id(message.get("from_id"))
    if sender is None or peer != sender:
        return
    raw = message.get("payload")
    if raw is not None:
        try:
            payload = decode(raw)
        except BadPayload:
            payload = None  # not our button (e.g. VK's «Начать»): the text decides
        if payload is not None:
            button(sender, payload, facts)
            return
    text(sender, as_str(message.get("text")), facts)


def _message_event(obj: dict[str, Any], facts: VkFacts) -> None:
    pressed = buttons.event(obj)
    if pressed is not None:
        sender, payload, edit = pressed
        button(sender, payload, facts, edit=edit)


def _board_new(obj: dict[str, Any], facts: VkFacts) -> None:
    command = board.post_new(obj, facts)
    if command is None:
        return
    handler = BOARD.get(command.cmd.kind)
    if handler is None:
        return
    try:
        handler(command)
    except RuleViolation as refusal:
        board.refused(command, refusal)


UPDATES: dict[str, Update] = {
    "message_new": _message_new,
    "message_event": _message_event,
    "board_post_new": _board_new,
    "board_post_edit": lambda obj, _facts: board.post_edit(obj),
    "board_post_delete": lambda obj, _facts: board.post_delete(obj),
}
