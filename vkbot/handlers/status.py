"""«статус», «помощь» and the «Действия» button (the buttons for the current phase)."""

from __future__ import annotations

from gameplay.buttons import menu_keyboard
from gameplay.messages import render
from gameplay.refusals import NightUnderReview, OutOfGame
from gameplay.selectors import bot as sel
from gameplay.selectors.status import player_status
from gameplay.services import prompts
from vkbot import replies

from .base import Sender, refuse, say


def show_status(sender: Sender) -> None:
    playing = sender.playing
    if not playing:
        say(sender.vk_user_id, replies.outsider_status(sender.seats), kind="status")
        return
    parts = [replies.status_text(player_status(seat)) for seat in playing]
    say(sender.vk_user_id, "\n\n".join(parts), game=playing[0].game_id, kind="status")


def show_help(sender: Sender) -> None:
    playing = sender.playing
    seat = playing[0] if playing else (sender.seats[0] if sender.seats else None)
    say(
        sender.vk_user_id,
        replies.help_for(seat),
        game=seat.game_id if seat else None,
        keyboard=menu_keyboard(),
        kind="help",
    )


def show_menu(sender: Sender) -> None:
    """Everything the player can do right now, as buttons (one message per prompt)."""
    living = [s for s in sender.playing if s.alive]
    if not living:
        if sender.playing:
            refuse(sender.vk_user_id, OutOfGame().reason, game=sender.playing[0].game_id)
        else:
            show_help(sender)
        return
    sent = False
    for seat in living:
        game = seat.game
        phase = sel.current_phase(game)
        if phase is None:
            continue
        if sel.night_closed_to(phase, seat):
            refuse(sender.vk_user_id, NightUnderReview().reason, game=game)
            sent = True
            continue
        seats = sel.roster(game)
        items = prompts.phase_prompts(game=game, phase=phase, seats=seats, seat=seat)
        if not items:  # a night with no action for this seat
            say(sender.vk_user_id, render("player/no_night_actions"), game=game, kind="menu")
            sent = True
        for text, board in items:
            say(sender.vk_user_id, text, game=game, keyboard=board, kind="menu")
            sent = True
    if not sent:
        say(sender.vk_user_id, render("player/nothing_to_do"), kind="menu")
