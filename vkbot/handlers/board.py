"""Posts in the discussion board: votes and «подсчёт» in the game's topic, sign-ups in the
recruitment topic, and moderation flags for the GM (RULES.md G2–G4): posts by the dead,
profanity and insults, reveals of night actions between a night's close and its publication,
and edited or deleted vote posts (the vote itself does not change). A sign-up in a
recruitment topic («+», «запас», «-») and a command in a running game's topic («голос»,
«подсчёт») go where ``routes.BOARD`` says, with the game they are for; a refused one is
answered in its topic (``refused``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gameplay.messages import render
from gameplay.models import FlagKind, Game, GameStatus, PhaseKind, Seat, Vote
from gameplay.rules import RuleViolation
from gameplay.selectors import bot as sel
from gameplay.services import common, replies
from gameplay.services.moderation import flag
from vkbot import moderation, parsing

from .base import Sender, VkFacts, as_int, as_str, user_id


def _topic_game(obj: dict[str, Any]) -> tuple[Game, int] | None:
    topic = as_int(obj.get("topic_id"))
    if topic is None or topic <= 0:
        return None
    game = sel.game_for_topic(topic)
    return (game, topic) if game is not None else None


_SIGNUP_KINDS = (parsing.SIGNUP, parsing.RESERVE, parsing.WITHDRAW)


def _signup_game(topic: int, author: int, kind: str) -> Game | None:
    """The game a «+», «запас» or «-» in this topic is for (one recruitment topic may serve
    several games): a sign-up goes to a recruiting game, a reserve to a running one first, a
    withdrawal to the game the author is signed up for."""
    games = [
        g
        for g in sel.games_for_topic(topic)
        if g.recruit_topic_id == topic
        or (g.topic_id == topic and g.status == GameStatus.RECRUITING)
    ]
    if not games:
        return None
    if kind == parsing.SIGNUP:
        return next((g for g in games if g.status == GameStatus.RECRUITING), games[0])
    if kind == parsing.WITHDRAW:
        mine = {s.game_id for s in sel.seats_of_user(author)}
        return next((g for g in reversed(games) if g.pk in mine), games[-1])
    return games[0]


@dataclass(frozen=True)
class Command:
    """A command posted in a topic, with the game it is for and what its handler needs."""

    game: Game
    topic: int
    post_id: int | None
    author: int
    cmd: parsing.Command
    #: The running game's roster (none for a sign-up).
    seats: list[Seat]
    facts: VkFacts


def refused(command: Command, refusal: RuleViolation) -> None:
    """The answer in the topic to a refused command: its author mentioned, the reason."""
    seat = next((s for s in command.seats if s.vk_user_id == command.author), None)
    name = seat.name if seat else Sender(command.author, []).name(command.facts)
    mention = parsing.mention(command.author, name)
    if command.cmd.kind == parsing.VOTE:
        text = render("board/vote_refused", mention=mention, reason=refusal.reason)
        kind = "vote_refused"
    else:
        text, kind = render("board/refusal", mention=mention, reason=refusal.reason), "board_reply"
    replies.board_reply(game_id=command.game.pk, topic_id=command.topic, text=text, kind=kind)


def post_new(obj: dict[str, Any], facts: VkFacts) -> Command | None:
    """A new post: a sign-up for the game it is for, or else the post moderated and the command
    it carries for the running game of its topic, if any."""
    topic = as_int(obj.get("topic_id"))
    author = user_id(obj.get("from_id"))
    if topic is None or topic <= 0 or author is None:
        return None  # not a topic, or the community's own post
    text = as_str(obj.get("text"), 20000)
    post_id = as_int(obj.get("id"))
    cmd = parsing.parse_board(text)
    signing_up = cmd is not None and cmd.kind in _SIGNUP_KINDS
    if signing_up:
        assert cmd is not None  # signing_up says so
        target = _signup_game(topic, author, cmd.kind)
        if target is not None:
            return Command(target, topic, post_id, author, cmd, [], facts)
    if cmd is not None and cmd.kind == parsing.VOTE:
        # The vote's game locked and read once, for the reads below and the vote's service.
        common.lock_topic_game_hot(topic_id=topic)
    game = sel.game_for_topic(topic)
    if game is None:
        return None
    seats = sel.roster(game) if game.status == GameStatus.RUNNING else []
    seat = next((s for s in seats if s.vk_user_id == author), None)
    _moderate(game, topic, post_id, author, seat, text)
    if cmd is None or signing_up or topic != game.topic_id or game.status != GameStatus.RUNNING:
        return None
    return Command(game, topic, post_id, author, cmd, seats, facts)


def _moderate(
    game: Game, topic: int, post_id: int | None, author: int, seat: Seat | None, text: str
) -> None:
    common: dict[str, Any] = {
        "game_id": game.pk,
        "vk_user_id": author,
        "text": text,
        "topic_id": topic,
        "vk_post_id": post_id,
    }
    found = moderation.profanity(text)
    if found:
        flag(
            kind=FlagKind.PROFANITY,
            note=render("gm/flag_words_found", words=sorted({f.word for f in found})[:10]),
            **common,
        )
    if seat is None:
        return
    if not seat.alive:
        flag(kind=FlagKind.DEAD_POST, **common)
        return
    words = moderation.reveal(text)
    if not words:
        return  # (the text first: most posts need no look at the phase)
    phase = sel.current_phase(game)
    in_review = (
        phase is not None
        and phase.kind == PhaseKind.NIGHT
        and phase.closed_at is not None
        and phase.published_at is None
    )
    if in_review:
        assert phase is not None  # in_review says so
        flag(
            kind=FlagKind.REVEAL,
            note=render(
                "gm/flag_reveal_in_review", number=phase.number, words=sorted(set(words))[:10]
            ),
            **common,
        )


def _vote_of(game: Game, post_id: int | None) -> Vote | None:
    return None if post_id is None else sel.board_vote(game, post_id)


def post_edit(obj: dict[str, Any]) -> None:
    """An edited post: a vote it carried stands as cast (flagged); the new text is moderated."""
    found = _topic_game(obj)
    author = user_id(obj.get("from_id"))
    if found is None or author is None:
        return
    game, topic = found
    post_id = as_int(obj.get("id"))
    text = as_str(obj.get("text"), 20000)
    vote = _vote_of(game, post_id)
    if vote is not None:
        flag(
            game_id=game.pk,
            kind=FlagKind.EDITED_VOTE,
            vk_user_id=author,
            text=text,
            topic_id=topic,
            vk_post_id=post_id,
            note=render("gm/flag_vote_post_edited"),
        )
    found_words = moderation.profanity(text)
    if found_words:
        flag(
            game_id=game.pk,
            kind=FlagKind.PROFANITY,
            vk_user_id=author,
            text=text,
            topic_id=topic,
            vk_post_id=post_id,
            note=render("gm/flag_words_found", words=sorted({f.word for f in found_words})[:10]),
        )


def post_delete(obj: dict[str, Any]) -> None:
    """A deleted post: a vote it carried stands (flagged)."""
    found = _topic_game(obj)
    if found is None:
        return
    game, topic = found
    post_id = as_int(obj.get("id"))
    vote = _vote_of(game, post_id)
    if vote is not None:
        flag(
            game_id=game.pk,
            kind=FlagKind.EDITED_VOTE,
            vk_user_id=vote.voter.vk_user_id,
            text="",
            topic_id=topic,
            vk_post_id=post_id,
            note=render("gm/flag_vote_post_deleted"),
        )
