"""gameplay.services.signup on the GM's behalf: lists, removal; a refusal changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.models import (
    Actor,
    Game,
    GameEvent,
    Outbox,
    Seat,
    SeatStatus,
)
from gameplay.refusals import NobodyAdded, NoSuchGame, PlayerListTooLong, RecruitmentClosed
from gameplay.rules.errors import InvalidCommand
from gameplay.services.signup import (
    MOST_PLAYER_LINES,
    parse_player_lines,
    player_add,
    player_remove,
    players_add_bulk,
)
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_player_lines() -> None:
    lines = parse_player_lines(text="id1 Аня Петрова\n\nvk.com/id2;Боря\n3")
    assert [(x.vk_user_id, x.name) for x in lines] == [(1, "Аня Петрова"), (2, "Боря"), (3, "")]
    with pytest.raises(InvalidCommand, match="уже есть в строке 1"):
        parse_player_lines(text="id1\n1")
    with pytest.raises(InvalidCommand, match="Список пуст"):
        parse_player_lines(text="\n  \n")


def test_a_list_longer_than_a_game_and_its_reserve_is_refused_before_it_is_read() -> None:
    """A pasted list is signed up in one batch: its length is bounded (blank lines aside),
    and the refusal comes before the lines past the bound are parsed."""
    most = [f"id{n}" for n in range(1, MOST_PLAYER_LINES + 1)]
    assert len(parse_player_lines(text="\n\n".join(most))) == MOST_PLAYER_LINES
    with pytest.raises(PlayerListTooLong, match=f"не больше {MOST_PLAYER_LINES} строк"):
        parse_player_lines(text="\n".join([*most, "не ссылка"]))


def test_player_remove_checks_the_game(gm: Any) -> None:
    game = make_game(gm, players=7)
    other = make_game(gm, players=7, vk_base=90_000)
    reserve = services.signup_create(game_id=game.pk, vk_user_id=1, name="Запас", reserve=True)
    with pytest.raises(InvalidCommand, match="Такого игрока нет"):
        player_remove(game_id=other.pk, by=Actor.gm("x"), seat_id=reserve.pk)
    player_remove(game_id=game.pk, by=Actor.gm("x"), seat_id=reserve.pk)
    reserve.refresh_from_db()
    assert reserve.status == SeatStatus.WITHDRAWN


def test_a_list_adds_what_adding_its_lines_one_by_one_adds(gm: Any) -> None:
    text = "id201 Аня\nvk.com/id202\nid203;  Боря Петров  \n204\tВера"
    listed, alone = make_game(gm, players=7), make_game(gm, players=7, vk_base=90_000)
    by = Actor.gm("anna")

    seats = players_add_bulk(game_id=listed.pk, by=by, text=text, reserve=True)
    for line in parse_player_lines(text=text):
        player_add(game_id=alone.pk, by=by, vk=line.vk_user_id, name=line.name, reserve=True)

    assert [(s.vk_user_id, s.name, s.status) for s in seats] == [
        (201, "Аня", SeatStatus.RESERVE),
        (202, "VK id 202", SeatStatus.RESERVE),
        (203, "Боря Петров", SeatStatus.RESERVE),
        (204, "Вера", SeatStatus.RESERVE),
    ]
    assert added(listed) == added(alone)


def added(game: Game) -> list[tuple[Any, ...]]:
    """The sign-ups, their events and messages of the VK ids 201-204 in ``game``."""
    return [
        *Seat.objects.filter(game=game, vk_user_id__lt=1000)
        .order_by("id")
        .values_list("vk_user_id", "name", "sex", "status", "pm_allowed"),
        *GameEvent.objects.filter(game=game, data__vk_user_id__lt=1000)
        .order_by("seq")
        .values_list("kind", "actor", "data"),
        *Outbox.objects.filter(game=game, kind="signup")
        .order_by("id")
        .values_list("peer_ids", "text")[7:],
    ]


def test_a_list_is_refused_whole_naming_its_first_line_refused(gm: Any) -> None:
    game = make_game(gm, players=7, start=False, deal=False)  # «Игрок 1» is VK id 700001
    services.signup_create(game_id=game.pk, vk_user_id=300, name="Запас", reserve=True)
    by = Actor.gm("anna")
    before = Seat.objects.filter(game=game).count()

    with pytest.raises(NobodyAdded) as listed:
        players_add_bulk(game_id=game.pk, by=by, text="id201\nid300 Другой\nid700001")
    with pytest.raises(NobodyAdded) as in_game:
        players_add_bulk(game_id=game.pk, by=by, text="id201\nid700001 Снова\nid300")
    services.game_deal(game_id=game.pk)
    with pytest.raises(NobodyAdded) as closed:
        players_add_bulk(game_id=game.pk, by=by, text="id201\nid202")
    with pytest.raises(NobodyAdded) as no_game:
        players_add_bulk(game_id=0, by=by, text="id205\nid206")

    assert listed.value.reason == "VK id 300: Запас уже в запасе. Никто не добавлен."
    assert in_game.value.reason == "VK id 700001: Игрок 1 уже в составе игры. Никто не добавлен."
    assert closed.value.params["vk_user_id"] == 201
    assert closed.value.params["why"] == RecruitmentClosed().reason
    assert no_game.value.params == {"vk_user_id": 205, "why": NoSuchGame().reason}
    assert Seat.objects.filter(game=game).count() == before
