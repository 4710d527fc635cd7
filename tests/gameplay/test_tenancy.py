"""Chats and topics belong to one game: a sign-up or game topic and a
spectator chat belong to at most one unfinished game — a database constraint for each column
(PostgreSQL and SQLite alike) and a Russian refusal in the services for every way a GM links
one, the cross-column case (one game's sign-up topic as another's game topic) included."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction

from gameplay import services
from gameplay.messages import render
from gameplay.models import Actor, Game, GameStatus, Seat
from gameplay.rules import RoleCounts
from gameplay.rules.errors import SetupError
from gameplay.services.settings import game_settings_update
from gameplay.services.spectators import spectator_chat_link
from tests.gameplay.factories import community_id
from tests.vkbot.bot_support import board_post, make_game, run

pytestmark = pytest.mark.django_db

COUNTS = RoleCounts.default_for(7)


def recruiting(name: str, **links: Any) -> Game:
    links["vk_group_id"] = community_id(links.get("vk_group_id"))
    return services.game_create(name=name, counts=COUNTS, by=Actor.gm("test"), **links)


def finish(game: Game) -> None:
    services.game_end(game_id=game.pk, by=Actor.gm("test"), winner=None)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"recruit_topic_id": 71}, {"recruit_topic_id": 71}),
        ({"recruit_topic_id": 71}, {"topic_id": 71}),
        ({"topic_id": 71}, {"recruit_topic_id": 71}),
        ({"topic_id": 71, "recruit_topic_id": 72}, {"recruit_topic_id": 72, "topic_id": 73}),
    ],
)
def test_a_topic_of_an_unfinished_game_is_refused_to_a_new_game(
    first: dict[str, int], second: dict[str, int]
) -> None:
    older = recruiting("Первая", **first)

    with pytest.raises(SetupError) as refused:
        recruiting("Вторая", **second)

    assert refused.value.reason == render("refusals/topic_taken")
    assert list(Game.objects.values_list("pk", flat=True)) == [older.pk]


def test_a_topic_is_free_again_once_its_game_finished_and_one_game_may_use_it_twice() -> None:
    older = recruiting("Первая", recruit_topic_id=71, topic_id=71)
    finish(older)

    newer = recruiting("Вторая", recruit_topic_id=71, topic_id=71)

    assert newer.recruit_topic_id == newer.topic_id == 71


def test_a_settings_change_to_another_games_topic_is_refused() -> None:
    recruiting("Первая", recruit_topic_id=71)
    mine = recruiting("Вторая", recruit_topic_id=81)

    with pytest.raises(SetupError, match="уже идёт другая игра"):
        game_settings_update(game_id=mine.pk, by=Actor.gm("test"), topic_id=71)

    mine.refresh_from_db()
    assert (mine.recruit_topic_id, mine.topic_id) == (81, None)


def test_a_plus_in_a_sign_up_topic_goes_to_its_one_game() -> None:
    """Before: a newer game could recruit in the same topic and took every «+» meant for the
    older one. Now the newer game cannot have that topic, and the «+» reaches the older."""
    older = recruiting("Первая", recruit_topic_id=71)
    with pytest.raises(SetupError):
        recruiting("Вторая", recruit_topic_id=71)

    run(board_post(71, 4242, "+"))

    assert list(Seat.objects.values_list("game_id", "vk_user_id")) == [(older.pk, 4242)]


def test_another_unfinished_games_spectator_chat_is_refused() -> None:
    theirs = make_game(vk_base=1000)
    spectator_chat_link(game_id=theirs.pk, by=Actor.gm("them"), chat=5)
    mine = make_game(vk_base=2000)

    for chat in (5, 2_000_000_005):
        with pytest.raises(SetupError) as refused:
            spectator_chat_link(game_id=mine.pk, by=Actor.gm("me"), chat=chat)
        assert refused.value.reason == render("refusals/spectator_chat_taken")

    mine.refresh_from_db()
    assert mine.spectator_chat_id is None
    finish(theirs)
    spectator_chat_link(game_id=mine.pk, by=Actor.gm("me"), chat=5)
    mine.refresh_from_db()
    assert mine.spectator_chat_id == 2_000_000_005


@pytest.mark.parametrize("field", ["recruit_topic_id", "topic_id", "spectator_chat_id"])
def test_the_database_holds_one_unfinished_game_per_link(field: str) -> None:
    link = {field: 2_000_000_009, "vk_group_id": community_id()}
    Game.objects.create(name="Завершённая", status=GameStatus.FINISHED, **link)
    Game.objects.create(name="Первая", **link)

    with pytest.raises(IntegrityError), transaction.atomic():
        Game.objects.create(name="Вторая", status=GameStatus.RUNNING, **link)

    Game.objects.create(name="Отменённая", status=GameStatus.CANCELLED, **link)
    assert Game.objects.filter(**{field: 2_000_000_009}).count() == 3


def test_a_race_past_the_check_is_refused_in_russian(monkeypatch: pytest.MonkeyPatch) -> None:
    recruiting("Первая", recruit_topic_id=71)
    monkeypatch.setattr(services.setup, "check_vk_tenancy", lambda game: None)

    with pytest.raises(SetupError) as refused:
        recruiting("Вторая", recruit_topic_id=71)

    assert refused.value.reason == render("refusals/topic_taken")
