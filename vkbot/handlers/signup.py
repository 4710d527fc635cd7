"""Sign-up («+», «участвую»), the reserve («запас») and withdrawal («снимаюсь»): in the
recruitment topic or by private message (RULES.md P6 for the reserve)."""

from __future__ import annotations

from gameplay import bot_texts
from gameplay.keyboards import SIGNUP, Payload, choice_keyboard
from gameplay.models import Game, GameStatus
from gameplay.rules import RuleViolation
from gameplay.selectors import bot as sel
from gameplay.services import players, setup
from vkbot import parsing, texts

from .base import Sender, VkFacts, refuse, say


def _signup(sender: Sender, game: Game, reserve: bool, facts: VkFacts) -> None:
    # Writing to the community lets it answer (VK), unless VK told the pipeline otherwise.
    allowed = facts.pm_allowed.get(sender.vk_user_id, True)
    try:
        players.signup(
            game_id=game.pk, vk_user_id=sender.vk_user_id, name=sender.name(facts),
            reserve=reserve, pm_allowed=allowed,
        )
    except RuleViolation as e:
        refuse(sender.vk_user_id, e.reason, game=game)


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
        refuse(sender.vk_user_id, texts.NO_RESERVE if reserve else texts.NO_RECRUITMENT)
        return
    if len(games) == 1:
        _signup(sender, games[0], reserve, facts)
        return
    choices = [
        (texts.signup_choice_label(g), Payload(SIGNUP, game=g.pk, early=reserve))
        for g in games[:10]
    ]
    say(sender.vk_user_id, texts.CHOOSE_GAME, keyboard=choice_keyboard(choices),
        kind="signup_choice")


def from_button(sender: Sender, payload: Payload, facts: VkFacts) -> None:
    game = Game.objects.filter(pk=payload.game).first()
    if game is None:
        refuse(sender.vk_user_id, texts.BAD_BUTTON)
        return
    _signup(sender, game, payload.early, facts)


def _withdraw_private(sender: Sender) -> None:
    seats = [s for s in sender.seats if s.game.status in (GameStatus.RECRUITING,
                                                           GameStatus.DEALT)
             or s.status == "reserve"]
    if not seats:
        refuse(sender.vk_user_id, texts.NOT_SIGNED_UP if not sender.seats else
               "Игра уже началась: сняться нельзя, обратитесь к ведущему.")
        return
    for seat in seats:
        try:
            setup.signup_withdraw(game_id=seat.game_id, vk_user_id=sender.vk_user_id)
        except RuleViolation as e:
            refuse(sender.vk_user_id, e.reason, game=seat.game_id)


def from_board(
    game: Game, topic_id: int, vk_user_id: int, cmd: parsing.Command, facts: VkFacts
) -> None:
    """«+», «запас» or «-» in the recruitment topic: answered in the topic."""
    sender = Sender(vk_user_id, [])
    name = sender.name(facts)
    mention = parsing.mention(vk_user_id, name)
    try:
        if cmd.kind == parsing.WITHDRAW:
            setup.signup_withdraw(game_id=game.pk, vk_user_id=vk_user_id)
            players.board_reply(game_id=game.pk, topic_id=topic_id,
                                text=f"{mention}, {texts.WITHDRAW_DONE[0].lower()}"
                                     f"{texts.WITHDRAW_DONE[1:]}")
            return
        players.signup(
            game_id=game.pk,
            vk_user_id=vk_user_id,
            name=name,
            reserve=cmd.kind == parsing.RESERVE,
            pm_allowed=facts.pm_allowed.get(vk_user_id),
            topic_id=topic_id,
            mention=mention,
        )
    except RuleViolation as e:
        players.board_reply(game_id=game.pk, topic_id=topic_id,
                            text=bot_texts.board_refusal(mention, e.reason))
