"""gameplay.services.replies: the bot's answers as Outbox rows: a private message (or the edit
of a page of buttons), a message in a chat, the answer to a pressed button, a short post in
one of the game's topics."""

from __future__ import annotations

import pytest

from gameplay.models import Game, Outbox, OutboxChannel, OutboxStatus
from gameplay.refusals import NotAChat
from gameplay.services.replies import SNACKBAR_MAX, answer_event, board_reply, chat_reply, reply
from outbox.results import EDIT
from tests.gameplay.factories import make_game, topic_of
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _recruiting() -> int:
    return make_game(n=3).pk


_recruiting_rows = module_rows(_recruiting)


@pytest.fixture
def game(_recruiting_rows: int) -> Game:
    """Three players signed up, not dealt (built once per module)."""
    return Game.objects.get(pk=_recruiting_rows)


def stored(row: Outbox) -> Outbox:
    return Outbox.objects.get(pk=row.pk)


def test_a_reply_is_a_pending_private_message_to_one_user(game: Game) -> None:
    keyboard = {"inline": True, "rows": []}
    row = stored(reply(vk_user_id=1001, text="Привет", game=game, keyboard=keyboard))
    assert (row.channel, row.peer_ids, row.text, row.kind) == (
        OutboxChannel.MESSAGE,
        [1001],
        "Привет",
        "reply",
    )
    assert row.game_id == game.pk and row.keyboard == keyboard and row.payload is None
    assert row.status == OutboxStatus.PENDING
    outside = stored(reply(vk_user_id=1002, text="Вне игры", kind="help"))
    assert outside.game_id is None and outside.kind == "help"


def test_a_reply_with_edit_names_the_message_to_edit(game: Game) -> None:
    row = stored(reply(vk_user_id=1001, text="Страница 2", game=game.pk, edit=77))
    assert row.payload == {EDIT: {"peer_id": 1001, "conversation_message_id": 77}}


def test_texts_are_cut_to_vks_limit(game: Game) -> None:
    long = "я" * 9500
    assert len(stored(reply(vk_user_id=1001, text=long)).text) == 9000
    assert len(stored(chat_reply(peer_id=2_000_000_001, text=long)).text) == 9000
    board = board_reply(game_id=game.pk, topic_id=topic_of(game), text=long)
    assert len(stored(board).text) == 9000


def test_a_chat_reply_goes_to_a_chat_only(game: Game) -> None:
    row = stored(chat_reply(peer_id=2_000_000_005, text="Номер беседы: 5", game=game))
    assert (row.channel, row.peer_ids, row.kind, row.game_id) == (
        OutboxChannel.CHAT,
        [2_000_000_005],
        "chat_reply",
        game.pk,
    )
    before = Outbox.objects.count()
    for peer in (1001, 2_000_000_000):
        with pytest.raises(NotAChat):
            chat_reply(peer_id=peer, text="x")
    assert Outbox.objects.count() == before


def test_a_pressed_button_is_answered_with_a_snackbar_or_silently(game: Game) -> None:
    silent = stored(answer_event(event_id="e1", user_id=1001, peer_id=1001, game=game))
    assert silent.channel == OutboxChannel.EVENT_ANSWER and silent.peer_ids == [1001]
    assert silent.payload == {"event_id": "e1", "user_id": 1001, "peer_id": 1001}
    assert silent.text == "Ответ на нажатие кнопки."
    long = "Голос принят. " * 10
    shown = stored(answer_event(event_id="e2", user_id=1001, peer_id=1001, snackbar=long))
    assert shown.payload is not None
    assert shown.payload["event_data"] == {"type": "show_snackbar", "text": long[:SNACKBAR_MAX]}
    assert shown.text == long and shown.game_id is None


def test_a_board_reply_goes_to_the_topic_named(game: Game) -> None:
    row = stored(board_reply(game_id=game.pk, topic_id=555, text="Запись закрыта", kind="x"))
    assert (row.channel, row.topic_id, row.text, row.kind, row.game_id) == (
        OutboxChannel.BOARD,
        555,
        "Запись закрыта",
        "x",
        game.pk,
    )
