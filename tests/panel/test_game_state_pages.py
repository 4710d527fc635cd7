"""What the game's pages say about its state: items held, used on night N or lost; who is
alive, executed, killed at night or modkilled; a player's history by name."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import grammar, services
from gameplay.models import Actor, Game, Seat, SeatStatus
from gameplay.rules import Item
from gameplay.selectors.game_page import ItemState
from tests.gameplay.factories import number_of
from tests.panel.support import living, make_game, module_gm, night_round, vote_round

pytestmark = pytest.mark.django_db


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def holder(game: Game, item: Item) -> Seat:
    return Seat.objects.get(game=game, status=SeatStatus.PLAYER, item=item)


def _games(gm: Any) -> dict[str, int]:
    """The GM's played game and a game of 26."""
    played = _played(gm)
    table = make_game(gm, players=26, vk_base=740_000, name="Стол на 26")
    return {"played": played.pk, "table": table.pk}


world, gm = module_gm(_games)


@pytest.fixture
def played(world: dict[str, int]) -> Game:
    return Game.objects.get(pk=world["played"])


def _played(gm: Any) -> Game:
    """Day 1 executes someone, Night 1 the book is used, then the red button's holder is
    modkilled with it unused: one item held, one used, one lost."""
    game = make_game(gm, players=7, seed="items-seed")
    vote_round(game)
    services.day_close(game_id=game.pk)
    book = holder(game, Item.BOOK)
    assert book.alive
    night_round(game)
    services.night_action_submit(
        game_id=game.pk, actor=book.number, act="book", target=number_of(book)
    )
    services.night_close(game_id=game.pk)
    services.night_publish(game_id=game.pk)
    button = holder(game, Item.RED_BUTTON)
    if button.alive:
        services.seat_modkill(
            game_id=game.pk, seat=number_of(button), by=Actor.gm("ведущий"), reason="тест"
        )
    game.refresh_from_db()
    assert game.status == "running"
    return game


def test_items_show_held_used_on_night_n_and_lost(played: Game, gm_client: Client) -> None:
    for name in ("panel_game", "panel_deal"):
        html = gm_client.get(url(name, played)).content.decode()
        assert "использована в ночь 1" in html, name  # the book
        assert "пропала (владелец выбыл)" in html, name  # the red button
        clock = holder(played, Item.CLOCK)
        assert ("у игрока" if clock.alive else "пропали (владелец выбыл)") in html, name
    page = gm_client.get(url("panel_game", played)).context["page"]
    states = {r.seat.item: r.item_state for r in page.seats if r.seat.item}
    assert states[Item.BOOK] == ItemState(Item.BOOK, used=True, night=1)  # facts; words above


def test_the_phase_list_words_each_phase_for_the_players_gender(
    played: Game, gm_client: Client
) -> None:
    """The page's «По фазам» reads the selector's facts (templates/panel/_phase_outcome.html):
    who was executed, in the verb of their gender, who died at night, the phase under way."""
    executed = Seat.objects.get(game=played, death_cause="executed")
    for sex, verb in ((1, "казнена"), (2, "казнён"), (0, "казнь:")):
        Seat.objects.filter(game=played).update(sex=sex)
        page = gm_client.get(url("panel_game", played))
        phases = {p.title: p.outcome for p in page.context["page"].phases}
        day, night = phases["День 1"], phases["Ночь 1"]
        assert (day.stage, day.executed.number) == ("done", executed.number)
        html = page.content.decode()
        assert f"<td>{verb} №{executed.number} {executed.name}</td>" in html
    dead = sorted(Seat.objects.filter(game=played, death_cause="night").values_list("number"))
    deaths = night.deaths
    assert sorted((p.number,) for p in deaths) == dead
    assert (f"<td>погибли: {deaths[0]}" if deaths else "<td>никто не погиб") in html
    current = page.context["page"].phase
    last = phases[str(current)]
    assert last.stage == "open"
    assert f"<td>идёт {'голосование' if last.kind == 'day' else 'приём действий'}</td>" in html


def test_players_tab_shows_who_is_alive_and_how_the_others_left(
    played: Game, gm_client: Client
) -> None:
    Seat.objects.filter(game=played).update(sex=1)  # VK said: all women
    response = gm_client.get(url("panel_players", played))
    html = response.content.decode()
    roster = response.context["roster"]
    assert roster.alive == len(living(played))
    assert roster.executed == 1 and roster.modkilled >= 1
    assert roster.alive + roster.executed + roster.killed + roster.modkilled == 7
    assert f"Живы: <strong>{roster.alive}</strong>" in html
    assert "казнена (День 1)" in html and "модкилл (День 2)" in html
    assert html.count('<span class="badge alive">жива</span>') == roster.alive
    Seat.objects.filter(game=played).update(sex=2)
    html = gm_client.get(url("panel_players", played)).content.decode()
    assert "казнён (День 1)" in html
    assert html.count('<span class="badge alive">жив</span>') == roster.alive
    Seat.objects.filter(game=played).update(sex=0)  # VK did not say: a neutral wording
    html = gm_client.get(url("panel_players", played)).content.decode()
    assert "казнь (День 1)" in html and "казнён" not in html
    assert html.count('<span class="badge alive">в игре</span>') == roster.alive


def test_a_players_history_is_headed_by_their_name(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, seed="history-seed", vk_base=730_000)  # beside `played`
    seat = living(game)[2]
    services.seat_replace(
        game_id=game.pk,
        seat=number_of(seat),
        vk_user_id=555_001,
        name="Юлия Анисимова",
        by=Actor.gm("ведущий"),
    )
    html = gm_client.get(url("panel_history", game, vk_user_id=555_001)).content.decode()
    assert "Юлия Анисимова: игр 1" in html and "id555001:" not in html
    old = gm_client.get(url("panel_history", game, vk_user_id=seat.vk_user_id)).content.decode()
    assert f"{seat.name}: игр" in old and "место передано: Юлия Анисимова" in old
    nobody = gm_client.get(url("panel_history", game, vk_user_id=1)).content.decode()
    assert "Игрок не найден" in nobody


@pytest.mark.parametrize(
    ("alive", "heading"),
    [(21, "21 живой игрок из 26"), (3, "3 живых игрока из 26"), (25, "25 живых игроков из 26")],
)
def test_the_seats_heading_agrees_with_its_number(
    world: dict[str, int], gm_client: Client, alive: int, heading: str
) -> None:
    game = Game.objects.get(pk=world["table"])  # 26 players, all alive
    dead = list(Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("number"))
    Seat.objects.filter(pk__in=[s.pk for s in dead[alive:]]).update(alive=False)
    html = gm_client.get(url("panel_game", game)).content.decode()
    assert f"Места: {heading}" in html and "живых из" not in html


def test_the_log_counts_its_entries_in_correct_russian(played: Game, gm_client: Client) -> None:
    html = gm_client.get(url("panel_log", played)).content.decode()
    assert re.search(r"Журнал: \d+ (запись|записи|записей)</h2>", html)
    count = re.search(r"Журнал: (\d+) ", html)
    assert count
    n = int(count.group(1))
    assert f"Журнал: {grammar.count(n, 'запись')}</h2>" in html
