"""gameplay.services.spectators: the spectator chat (RULES.md G6) as the GM links, creates and
opens it, and one answer to who may be in it, the bot's and the panel's."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.models import (
    Actor,
    GameEvent,
    Outbox,
    OutboxStatus,
    Seat,
)
from gameplay.rules import Role
from gameplay.rules.errors import InvalidCommand
from gameplay.selectors.game_page import game_page
from gameplay.selectors.spectators import spectator_page
from gameplay.services.retries import outbox_retry_all
from gameplay.services.spectators import (
    spectator_chat_create,
    spectator_chat_link,
    spectator_chat_set_open,
    spectator_refusal,
)
from gameplay.services.vkrefs import chat_peer_id
from tests.panel.support import make_game
from tests.vkbot.bot_support import kill
from tests.vkbot.bot_support import make_game as bot_game

pytestmark = pytest.mark.django_db


def test_spectator_chat_rules(gm: Any) -> None:
    game = make_game(gm, players=7)
    assert chat_peer_id(value=5) == 2_000_000_005
    assert chat_peer_id(value=2_000_000_005) == 2_000_000_005
    with pytest.raises(InvalidCommand):
        chat_peer_id(value=0)
    spectator_chat_link(game_id=game.pk, by=Actor.gm("x"), chat=3)
    mafia = Seat.objects.filter(game=game, role=Role.MAFIA).first()
    assert mafia is not None
    civ = Seat.objects.filter(game=game, role=Role.CIVILIAN).first()
    assert civ is not None
    Seat.objects.filter(pk__in=[mafia.pk, civ.pk]).update(alive=False)
    spectator_chat_set_open(game_id=game.pk, by=Actor.gm("x"), open=True)
    told = Outbox.objects.get(game=game, kind="spectators", channel="message")
    assert told.peer_ids == [civ.vk_user_id]  # never the mafia (G6)
    with pytest.raises(InvalidCommand, match="уже открыта"):
        spectator_chat_set_open(game_id=game.pk, by=Actor.gm("x"), open=True)
    spectator_chat_set_open(game_id=game.pk, by=Actor.gm("x"), open=False)
    with pytest.raises(InvalidCommand, match="уже закрыта"):
        spectator_chat_set_open(game_id=game.pk, by=Actor.gm("x"), open=False)


def test_spectator_chat_create_rules(gm: Any) -> None:
    game = make_game(gm, players=7, gm_vk_ids=[5, 6])
    row = spectator_chat_create(game_id=game.pk, by=Actor.gm("x"))
    assert (row.channel, row.status) == ("create_chat", "pending")
    assert row.payload == {"title": "ЗЗ — Тестовая игра", "user_ids": [5, 6], "by": "gm:x"}
    event = GameEvent.objects.get(game=game, kind="spectator_chat_create_requested")
    assert event.actor == "gm:x" and event.data["outbox"] == row.pk
    with pytest.raises(InvalidCommand, match="уже создаётся"):
        spectator_chat_create(game_id=game.pk, by=Actor.gm("x"))
    # Failed: the GM may ask again; «повторить все» leaves it alone (no second chat by accident).
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.FAILED)
    Outbox.objects.exclude(pk=row.pk).update(status=OutboxStatus.SENT)
    with pytest.raises(InvalidCommand, match="Недоставленных сообщений нет"):
        outbox_retry_all(game_id=game.pk, by=Actor.gm("x"))
    assert Outbox.objects.get(pk=row.pk).status == OutboxStatus.FAILED
    spectator_chat_create(game_id=game.pk, by=Actor.gm("x"))
    Outbox.objects.filter(game=game, channel="create_chat").update(status=OutboxStatus.SENT)
    spectator_chat_link(game_id=game.pk, by=Actor.gm("x"), chat=3)
    spectator_chat_set_open(game_id=game.pk, by=Actor.gm("x"), open=True)
    with pytest.raises(InvalidCommand, match="Беседа зрителей открыта"):
        spectator_chat_create(game_id=game.pk, by=Actor.gm("x"))
    services.game_end(game_id=game.pk, by=Actor.gm("x"), winner=None)
    with pytest.raises(InvalidCommand, match="Игра завершена"):
        spectator_chat_create(game_id=game.pk, by=Actor.gm("x"))
    assert Outbox.objects.filter(game=game, channel="create_chat").count() == 2


@pytest.mark.parametrize("over", [False, True])
def test_the_panel_and_the_bot_give_one_answer_to_who_may_watch(over: bool) -> None:
    """G6 once (docs/rules.md): the bot's invitation and guard (``spectator_refusal``), the
    spectators' page and the game page agree, while the game runs and once it is over (then
    every player of the game may join)."""
    game = bot_game()
    kill(game, 2)  # mafia
    kill(game, 4)  # doctor
    if over:
        services.game_end(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    seats = list(Seat.objects.filter(game=game, number__isnull=False).order_by("number"))
    bot = [s.number for s in seats if spectator_refusal(game=game, seat=s) is None]
    assert bot == ([s.number for s in seats] if over else [4])
    assert [s.number for s in spectator_page(game).eligible] == bot
    assert [r.seat.number for r in game_page(game).seats if r.spectator_eligible] == bot
