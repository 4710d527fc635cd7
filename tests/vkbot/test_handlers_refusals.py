"""The bot's one answer to a refusal (``vkbot.handlers.routes``): a private command's or a
button's refusal is its text to the sender, stamped with the game the command was for; a
board command's is answered in its topic, its author mentioned."""

from __future__ import annotations

import pytest

from gameplay.buttons import Payload
from gameplay.models import Outbox, OutboxChannel
from gameplay.refusals import AlreadySignedUp, OutOfGame
from gameplay.rules.errors import NotInGame
from tests.gameplay.factories import recruit_topic_of
from tests.vkbot.bot_support import board_post, board_rows, kill, make_game, pm, press, run
from vkbot.handlers import VkFacts

pytestmark = pytest.mark.django_db


def test_a_refused_private_command_is_answered_in_its_game() -> None:
    game = make_game()
    kill(game, 3)
    [row] = run(pm(1003, "голос 5"))
    assert (row.kind, row.peer_ids, row.game_id) == ("refusal", [1003], game.pk)
    assert row.text == OutOfGame().reason


def test_a_refused_button_is_answered_in_its_game_or_none() -> None:
    game = make_game()
    kill(game, 2)
    out = run(press(1002, Payload("vote", game=game.pk).encode()))
    [row] = [o for o in out if o.kind == "refusal"]
    assert (row.game_id, row.text) == (game.pk, OutOfGame().reason)
    out = run(press(999, Payload("vote", game=game.pk).encode()))  # no seat in that game
    [row] = [o for o in out if o.kind == "refusal"]
    assert (row.game_id, row.text) == (None, NotInGame().reason)


def test_a_refused_board_sign_up_is_answered_in_its_topic_by_name() -> None:
    game = make_game(start=False)
    facts = VkFacts(names={2001: "Аня Петрова"})
    run(board_post(recruit_topic_of(game), 2001, "+"), facts=facts)
    before = Outbox.objects.count()
    [row] = board_rows(run(board_post(recruit_topic_of(game), 2001, "+"), facts=facts))
    assert Outbox.objects.count() == before + 1
    assert (row.channel, row.kind, row.topic_id) == (
        OutboxChannel.BOARD,
        "board_reply",
        game.recruit_topic_id,
    )
    assert row.text.startswith("[id2001|Аня Петрова], ")
    assert AlreadySignedUp(reserve=False).reason[1:] in row.text
