"""gameplay.services.mafia: a living mafia member's «!» message reaches the other living mafia
with the sender's name (G5); anyone else, an empty message or a game not running is refused."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor, Game
from gameplay.refusals import NotMafia, RelayEmpty
from gameplay.rules import Role
from gameplay.rules.errors import DeadCannotAct, GameNotRunning, NotInGame
from gameplay.services.mafia import RELAY_MAX, mafia_relay
from tests.gameplay.factories import (
    events,
    label,
    last_outbox_id,
    make_game,
    number_of,
    outbox,
    seat,
    seats,
    snapshot,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _day_one() -> int:
    return make_game(n=12, start=True).pk


_day_one_rows = module_rows(_day_one)


@pytest.fixture
def game(_day_one_rows: int) -> Game:
    """Twelve players (three mafia), Day 1 open (built once per module)."""
    return Game.objects.get(pk=_day_one_rows)


def test_the_message_reaches_the_other_living_mafia_and_the_sender_is_told(game: Game) -> None:
    sender, first, second = seats(game, Role.MAFIA)
    services.seat_modkill(
        game_id=game.pk, seat=number_of(second), by=Actor.gm("test"), reason="тест"
    )
    mark = last_outbox_id()
    assert mafia_relay(game_id=game.pk, vk_user_id=sender.vk_user_id, text="  стреляем в 5  ") == 1
    [relayed] = outbox(game, "mafia_relay", after=mark)
    assert relayed.peer_ids == [first.vk_user_id]
    assert relayed.text == f"Мафия, {label(sender)}:\nстреляем в 5"
    [told] = outbox(game, "mafia_relay_sent", after=mark)
    assert told.peer_ids == [sender.vk_user_id]
    assert told.text == "Сообщение передано живой мафии (1 игрок)."
    event = events(game, "mafia_relay")[-1]
    assert (event.actor, event.data) == (
        f"seat:{sender.number}",
        {"seat": sender.number, "recipients": 1, "text": "стреляем в 5"},
    )


def test_a_lone_mafia_member_is_told_nobody_heard(game: Game) -> None:
    sender, *others = seats(game, Role.MAFIA)
    for s in others:
        services.seat_modkill(
            game_id=game.pk, seat=number_of(s), by=Actor.gm("test"), reason="тест"
        )
    mark = last_outbox_id()
    assert mafia_relay(game_id=game.pk, vk_user_id=sender.vk_user_id, text="есть кто?") == 0
    assert outbox(game, "mafia_relay", after=mark) == []
    [told] = outbox(game, "mafia_relay_sent", after=mark)
    assert "некому передать" in told.text


def test_a_long_message_is_cut_to_the_limit(game: Game) -> None:
    sender = seat(game, Role.MAFIA)
    mark = last_outbox_id()
    mafia_relay(game_id=game.pk, vk_user_id=sender.vk_user_id, text="я" * (RELAY_MAX + 50))
    [relayed] = outbox(game, "mafia_relay", after=mark)
    assert relayed.text.endswith("\n" + "я" * RELAY_MAX)


def test_refusals_change_nothing(game: Game) -> None:
    mafia, civilian = seat(game, Role.MAFIA), seat(game, Role.CIVILIAN)
    before = snapshot(game)
    with pytest.raises(NotMafia):
        mafia_relay(game_id=game.pk, vk_user_id=civilian.vk_user_id, text="привет")
    with pytest.raises(RelayEmpty):
        mafia_relay(game_id=game.pk, vk_user_id=mafia.vk_user_id, text="   \n ")
    with pytest.raises(NotInGame):
        mafia_relay(game_id=game.pk, vk_user_id=424242, text="привет")
    assert snapshot(game) == before
    services.seat_modkill(
        game_id=game.pk, seat=number_of(mafia), by=Actor.gm("test"), reason="тест"
    )
    with pytest.raises(DeadCannotAct):
        mafia_relay(game_id=game.pk, vk_user_id=mafia.vk_user_id, text="привет")


def test_a_game_not_running_is_refused() -> None:
    game = make_game(n=12, deal=True)
    with pytest.raises(GameNotRunning):
        mafia_relay(game_id=game.pk, vk_user_id=seat(game, Role.MAFIA).vk_user_id, text="x")
