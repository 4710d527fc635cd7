"""Sign-up («+», «участвую»), the reserve («запас») and withdrawal («снимаюсь»): in the
recruitment topic or by private message (RULES.md P6 for the reserve)."""

from __future__ import annotations

from gameplay.buttons import SIGNUP, Payload, choice_keyboard
from gameplay.messages import render
from gameplay.models import Game, GameStatus
from gameplay.refusals import WithdrawTooLate
from gameplay.rules import RuleViolation
from gameplay.selectors import bot as sel
from gameplay.services import replies, signup
from vkbot import parsing

from .base import Sender, VkFacts, refuse, say


def _signup(sender: Sender, game: Game, reserve: bool, facts: VkFacts) -> None:
    # Writing to the community lets it answer (VK), unless VK told the pipeline otherwise.
    allowed = facts.pm_allowed.get(sender.vk_user_id, True)
    sender.game_id = game.pk
    signup.signup_create(
        game_id=game.pk,
        vk_user_id=sender.vk_user_id,
        name=sender.name(facts),
        sex=sender.sex(facts),
        reserve=reserve,
        pm_allowed=allowed,
    )


def from_private(sender: Sender, cmd: parsing.Command, facts: VkFacts) -> None:
    if cmd.kind == parsing.WITHDRAW:
        _withdraw_private(sender)
        return
    reserve = cmd.kind == parsing.RESERVE
    games = sel.reserve_games() if reserve else sel.recruiting_games()
    if reserve:
        # A reserve is for a game that may need a replacement: not one the user plays in.
        mine = {s.game_id for s in sender.seats}
        games = [g for g in games if g.pk not in mine] or games
    if not games:
        refuse(
            sender.vk_user_id, render("player/no_reserve" if reserve else "player/no_recruitment")
        )
        return
    if len(games) == 1:
        _signup(sender, games[0], reserve, facts)
        return
    choices = [
        (render("player/signup_choice", game=g.name), Payload(SIGNUP, game=g.pk, early=reserve))
        for g in games[:10]
    ]
    say(
        sender.vk_user_id,
        render("player/choose_game"),
        keyboard=choice_keyboard(choices),
        kind="signup_choice",
    )


def from_button(sender: Sender, payload: Payload, facts: VkFacts) -> None:
    game = sel.game_by_id(payload.game)
    if game is None:
        refuse(sender.vk_user_id, render("player/bad_button"))
        return
    _signup(sender, game, payload.early, facts)


def _withdraw_private(sender: Sender) -> None:
    seats = [
        s
        for s in sender.seats
        if s.game.status in (GameStatus.RECRUITING, GameStatus.DEALT) or s.status == "reserve"
    ]
    if not seats:
        refuse(
            sender.vk_user_id,
            render("player/not_signed_up") if not sender.seats else WithdrawTooLate().reason,
        )
        return
    for seat in seats:
        # One «снимаюсь» for every game the user is in: each game's refusal is its own
        # answer, and the other games' withdrawals go on.
        try:
            signup.signup_withdraw(game_id=seat.game_id, vk_user_id=sender.vk_user_id)
        except RuleViolation as e:
            refuse(sender.vk_user_id, e.reason, game=seat.game_id)


def from_board(
    game: Game, topic_id: int, vk_user_id: int, cmd: parsing.Command, facts: VkFacts
) -> None:
    """«+», «запас» or «-» in the recruitment topic: answered in the topic (a refusal too, by
    ``routes``)."""
    sender = Sender(vk_user_id, [])
    name = sender.name(facts)
    mention = parsing.mention(vk_user_id, name)
    if cmd.kind == parsing.WITHDRAW:
        signup.signup_withdraw(game_id=game.pk, vk_user_id=vk_user_id)
        replies.board_reply(
            game_id=game.pk, topic_id=topic_id, text=render("board/withdrawn", mention=mention)
        )
        return
    signup.signup_create(
        game_id=game.pk,
        vk_user_id=vk_user_id,
        name=name,
        sex=sender.sex(facts),
        reserve=cmd.kind == parsing.RESERVE,
        pm_allowed=facts.pm_allowed.get(vk_user_id),
        topic_id=topic_id,
        mention=mention,
    )
