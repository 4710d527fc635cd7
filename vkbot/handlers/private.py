"""Text commands in private messages: parse, hand to the feature, and make sure every message
gets an answer."""

from __future__ import annotations

from gameplay.messages import render
from vkbot import parsing

from . import mafia, night, signup, spectators, status, votes
from .base import Sender, VkFacts, refuse


def message(vk_user_id: int, text: str, facts: VkFacts) -> None:
    cmd = parsing.parse_private(text)
    if cmd.kind == parsing.EMPTY:
        refuse(vk_user_id, render("player/empty_message"))
        return
    sender = Sender.load(vk_user_id)
    if cmd.kind in (parsing.SIGNUP, parsing.RESERVE, parsing.WITHDRAW):
        signup.from_private(sender, cmd, facts)
    elif cmd.kind == parsing.STATUS:
        status.show_status(sender)
    elif cmd.kind == parsing.HELP:
        status.show_help(sender)
    elif cmd.kind == parsing.MENU:
        status.show_menu(sender)
    elif cmd.kind == parsing.NIGHT:
        night.from_text(sender, cmd)
    elif cmd.kind == parsing.VOTE:
        votes.from_private(sender, cmd)
    elif cmd.kind == parsing.COUNT:
        votes.count_private(sender)
    elif cmd.kind == parsing.RELAY:
        mafia.relay(sender, cmd.text)
    elif cmd.kind == parsing.SPECTATORS:
        spectators.request(sender)
    else:
        refuse(vk_user_id, render("player/unknown_command"))
