"""Votes: in the day's topic («голос 5», «голос: Аня», «[id123|Аня]», «досрочно»), by private
message or by buttons (the topic's vote counts show them), and «голоса» («подсчёт»): the vote
count, posted in the topic."""

from __future__ import annotations

from gameplay.buttons import Payload
from gameplay.messages import render
from gameplay.models import Game, PhaseKind, PhaseStatus, Seat, Source
from gameplay.refusals import OutOfGame, StaleButton, VoteAtNight, VoteTargetMissing
from gameplay.rules.errors import NotInGame
from gameplay.selectors import bot as sel
from gameplay.services import prompts, votes
from vkbot import parsing

from .base import Sender, living_seat, refuse, say, single_running_seat, target_number


def show_page(seat: Seat, payload: Payload, *, edit: int | None = None) -> None:
    """The vote buttons (a page of them), replacing the message ``edit`` when a button of it
    asked."""
    phase = sel.current_phase(seat.game_id)
    if phase is None or phase.kind != PhaseKind.DAY:
        raise VoteAtNight()
    if phase.status != PhaseStatus.OPEN or (payload.phase and payload.phase != phase.pk):
        raise StaleButton()
    text, board = prompts.vote_page(
        game=seat.game,
        phase=phase,
        seats=sel.roster(seat.game_id),
        seat=seat,
        early=payload.early,
        offset=payload.offset,
    )
    say(seat.vk_user_id, text, game=seat.game_id, keyboard=board, kind="vote_page", edit=edit)


def pressed(seat: Seat, payload: Payload, *, edit: int | None = None) -> None:
    if payload.target is None:
        show_page(seat, payload, edit=edit)
        return
    votes.vote_submit(
        game_id=seat.game_id,
        vk_user_id=seat.vk_user_id,
        target=payload.target,
        early=payload.early,
        source=Source.PM,
        phase_id=payload.phase,
    )


def from_private(sender: Sender, cmd: parsing.Command) -> None:
    seat = living_seat(sender)
    if seat is None:
        return
    if cmd.target is None:
        show_page(seat, Payload("vote", game=seat.game_id, early=cmd.early))
        return
    votes.vote_submit(
        game_id=seat.game_id,
        vk_user_id=sender.vk_user_id,
        target=target_number(seat, cmd.target),
        early=cmd.early,
        source=Source.PM,
    )


def count_private(sender: Sender) -> None:
    """«голоса» by private message: the count, posted in the game's topic."""
    seat = single_running_seat(sender)
    if isinstance(seat, str):
        refuse(sender.vk_user_id, seat)
        return
    sender.game_id = seat.game_id
    votes.vote_count_request(game_id=seat.game_id)
    say(sender.vk_user_id, render("player/count_posted"), game=seat.game_id, kind="count_posted")


# --- in the board ----------------------------------------------------------------------------


def from_board(
    game: Game,
    topic_id: int,
    post_id: int | None,
    vk_user_id: int,
    cmd: parsing.Command,
    seats: list[Seat],
) -> None:
    """A vote posted in the game's topic: cast it (a refusal is answered in the topic by
    ``routes``)."""
    seat = next((s for s in seats if s.vk_user_id == vk_user_id), None)
    if seat is None:
        raise NotInGame()
    if not seat.alive:
        raise OutOfGame()
    if cmd.error or cmd.target is None:
        raise (cmd.error or VoteTargetMissing)()
    votes.vote_submit(
        game_id=game.pk,
        vk_user_id=vk_user_id,
        target=target_number(seat, cmd.target, seats),
        early=cmd.early,
        source=Source.BOARD,
        vk_post_id=post_id,
    )


def count_board(game: Game, topic_id: int) -> None:
    """«голоса» in one of the game's topics: the count, posted there (too soon, the refusal
    says when it will be possible, answered in the topic by ``routes``)."""
    votes.vote_count_request(game_id=game.pk, topic_id=topic_id)
