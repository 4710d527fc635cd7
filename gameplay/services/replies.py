"""The bot's answers: a private message to one user, a message in a chat, the answer to a pressed
callback button, a short post in one of the game's topics. Outbox rows (see ``OutboxChannel``):

- channel ``event_answer``: answer a callback button (``messages.sendMessageEventAnswer``);
  ``payload`` holds ``{"event_id", "user_id", "peer_id"}`` and ``"event_data"`` when a
  snackbar should show; ``text`` is a note for the GM only.
- channel ``board`` with ``kind="board_reply"`` posts in ``topic_id``, which may be the
  recruitment topic.
- channel ``chat`` (``chat_reply``): the bot's answer in a chat, e.g. its number for the panel
  when the community is added to a chat.
"""

from __future__ import annotations

from typing import Any

from gameplay.messages import render
from gameplay.models import Game, Outbox, OutboxChannel
from gameplay.refusals import NotAChat
from outbox.results import EDIT

from .common import post_chat, queue_outbox
from .vkrefs import CHAT_PEER_BASE

SNACKBAR_MAX = 90


def _game_id(game: Game | int | None) -> int | None:
    return game.pk if isinstance(game, Game) else game


def reply(
    *,
    vk_user_id: int,
    text: str,
    game: Game | int | None = None,
    keyboard: dict[str, Any] | None = None,
    kind: str = "reply",
    edit: int | None = None,
) -> Outbox:
    """Queue a private message to one user (the bot's answer to what they sent). With
    ``edit`` (the ``conversation_message_id`` of a message the bot sent them: a page of
    buttons turned) the delivery edits that message instead (``messages.edit``), or sends a
    new one if VK refuses the edit."""
    [row] = queue_outbox(
        rows=[
            Outbox(
                game_id=_game_id(game),
                channel=OutboxChannel.MESSAGE,
                peer_ids=[int(vk_user_id)],
                text=text[:9000],
                keyboard=keyboard,
                kind=kind,
                payload={EDIT: {"peer_id": int(vk_user_id), "conversation_message_id": int(edit)}}
                if edit
                else None,
            )
        ]
    )
    return row


def chat_reply(
    *, peer_id: int, text: str, game: Game | int | None = None, kind: str = "chat_reply"
) -> Outbox:
    """Queue the bot's message in a chat (``peer_id`` = 2000000000 + the chat's id)."""
    if peer_id <= CHAT_PEER_BASE:
        raise NotAChat()
    return post_chat(game=_game_id(game), peer_id=peer_id, text=text[:9000], kind=kind)


def answer_event(
    *,
    event_id: str,
    user_id: int,
    peer_id: int,
    game: Game | int | None = None,
    snackbar: str | None = None,
) -> Outbox:
    """Queue the answer to a pressed callback button (VK wants one within a minute)."""
    params: dict[str, Any] = {"event_id": event_id, "user_id": user_id, "peer_id": peer_id}
    if snackbar:
        params["event_data"] = {"type": "show_snackbar", "text": snackbar[:SNACKBAR_MAX]}
    [row] = queue_outbox(
        rows=[
            Outbox(
                game_id=_game_id(game),
                channel=OutboxChannel.EVENT_ANSWER,
                peer_ids=[peer_id],
                text=snackbar or render("player/button_answered"),
                payload=params,
                kind="event_answer",
            )
        ]
    )
    return row


def board_reply(*, game_id: int, topic_id: int, text: str, kind: str = "board_reply") -> Outbox:
    """Queue a short answer in one of the game's topics (game or recruitment topic)."""
    [row] = queue_outbox(
        rows=[
            Outbox(
                game_id=game_id,
                channel=OutboxChannel.BOARD,
                topic_id=topic_id,
                text=text[:9000],
                kind=kind,
            )
        ]
    )
    return row
