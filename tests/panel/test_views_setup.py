"""Panel views before the start: new game, settings, players and reserves, the deal."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services
from gameplay.models import Actor, Game, GameEvent, GameStatus, Seat, SeatStatus
from gameplay.refusals import DiscardNotConfirmed
from gameplay.services.signup import player_remove
from tests.panel.support import community_of, make_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def club555(gm: Any) -> Any:
    """The GM's community (the topic links of NEW_GAME are its)."""
    return community_of(555, owner=gm)


NEW_GAME = {
    "name": "Машина времени",
    "topic": "https://vk.com/topic-555_42",
    "recruit_topic": "41",
    "vk_group_id": "555",
    "mafia_count": "6",
    "commissar_count": "1",
    "doctor_count": "1",
    "maniac_count": "1",
    "civilian_count": "17",
    "day_length": "24:00",
    "night_length": "12:30",
    "reminders": "60, 180, 60",
    "early_close": "majority",
    "time_zone": "Europe/Moscow",
    "gm_vk_ids": "vk.com/id5, id6 vk.com/id5",
}


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def test_new_game_form_defaults_to_the_26_player_table(gm_client: Client) -> None:
    page = gm_client.get(reverse("admin:gameplay_game_add"))
    assert page.status_code == 200
    form = page.context["form"]
    assert [form[f].initial for f in form.COUNT_FIELDS] == [6, 1, 1, 1, 17]
    assert "Новая игра" in page.content.decode()


def test_creating_a_game(gm: Any, gm_client: Client) -> None:
    response = gm_client.post(reverse("admin:gameplay_game_add"), NEW_GAME, follow=True)
    game = Game.objects.get()
    assert response.redirect_chain[-1][0] == url("panel_game", game)
    assert "создана" in " ".join(messages_of(response))
    assert (game.vk_group_id, game.topic_id, game.recruit_topic_id) == (555, 42, 41)
    assert game.reminders == [180, 60]
    assert game.gm_vk_ids == [5, 6]
    assert game.night_length.total_seconds() == 12.5 * 3600
    assert list(game.gms.all()) == [gm]
    assert GameEvent.objects.get(game=game, kind="game_created").actor == "gm:ведущий"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"mafia_count": "0"}, "Нужна хотя бы одна мафия."),
        ({"mafia_count": "13", "civilian_count": "10"}, "закончится, не начавшись"),
        ({"doctor_count": "2"}, "Убедитесь"),  # the field's own bound (Django's message)
        ({"day_length": "abc"}, "ЧЧ:ММ"),
        ({"day_length": "0:01"}, "от 5 минут"),
        ({"reminders": "60, минута"}, "не число минут"),
        ({"topic": "vk.com/durov"}, "vk.com/topic-"),
        ({"recruit_topic": "vk.com/topic-1_2"}, "одном сообществе"),
        ({"time_zone": "Марс/Олимп"}, "Неизвестный часовой пояс"),
        ({"time_zone": "America"}, "Неизвестный часовой пояс"),  # a folder of the zone database
        ({"gm_vk_ids": "vk.com/durov"}, "Короткое имя"),
        ({"name": "  "}, "Обязательное поле"),
    ],
)
def test_impossible_setups_are_refused(gm_client: Client, change: dict, error: str) -> None:
    response = gm_client.post(reverse("admin:gameplay_game_add"), {**NEW_GAME, **change})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not Game.objects.exists()


def test_a_topic_with_a_running_game_is_refused(gm: Any, gm_client: Client) -> None:
    make_game(gm, start=False, topic_id=42, vk_group_id=555)
    response = gm_client.post(reverse("admin:gameplay_game_add"), NEW_GAME)
    assert "уже идёт другая игра" in response.content.decode()
    assert Game.objects.count() == 1


def test_settings_change_and_lock_counts_after_the_deal(
    gm: Any, other_gm: Any, gm_client: Client, club555: Any
) -> None:
    club555.members.create(user=other_gm, role="gm")  # a co-GM is one of the community's
    game = make_game(gm, players=7, start=False, vk_group_id=555)
    page = gm_client.get(url("panel_settings", game))
    assert page.context["form"].fields["mafia_count"].disabled
    data = {**NEW_GAME, "mafia_count": "3", "day_length": "36", "co_gms": [gm.pk, other_gm.pk]}
    response = gm_client.post(url("panel_settings", game), data, follow=True)
    assert "Настройки сохранены." in messages_of(response)
    game.refresh_from_db()
    assert game.mafia_count == 2  # locked: the deal stands
    assert game.day_length.total_seconds() == 36 * 3600
    assert set(game.gms.all()) == {gm, other_gm}
    changed = GameEvent.objects.get(game=game, kind="settings_changed").data["changed"]
    assert "day_length" in changed and "counts" not in changed


def test_adding_players_by_link_id_and_list(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    for ref in ("https://vk.com/id91", "vk.com/id92", "id93", "94"):
        gm_client.post(url("panel_player_add", game), {"vk": ref, "name": ""})
    response = gm_client.post(
        url("panel_player_add", game),
        {"vk": "95", "name": "Мария Ефремова", "reserve": "on"},
        follow=True,
    )
    # The confirmation does not guess a gender: no «записан» for Мария.
    assert "Мария Ефремова (id95) — в запасе." in response.content.decode()
    assert "записан" not in response.content.decode()
    ids = set(Seat.objects.filter(game=game).values_list("vk_user_id", flat=True))
    assert {91, 92, 93, 94, 95} <= ids
    assert Seat.objects.get(game=game, vk_user_id=95).status == SeatStatus.RESERVE
    assert GameEvent.objects.filter(game=game, kind="signup", actor="gm:ведущий").count() == 5


def test_a_screen_name_is_refused_with_a_reason(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    before = Seat.objects.count()
    response = gm_client.post(
        url("panel_player_add", game), {"vk": "https://vk.com/durov"}, follow=True
    )
    assert any("Короткое имя «durov»" in m for m in messages_of(response))
    assert Seat.objects.count() == before


def test_a_list_is_added_whole_or_not_at_all(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    before = Seat.objects.count()
    text = "id201 Аня\nid202 Боря\nid700001 Уже записан"  # signed up already
    response = gm_client.post(url("panel_players_bulk", game), {"lines": text}, follow=True)
    assert any("Никто не добавлен" in m for m in messages_of(response))
    assert Seat.objects.count() == before
    response = gm_client.post(
        url("panel_players_bulk", game), {"lines": "id201 Аня\nбред"}, follow=True
    )
    assert any("Строка 2" in m for m in messages_of(response))
    response = gm_client.post(
        url("panel_players_bulk", game), {"lines": "id201 Аня\nvk.com/id202\tБоря"}, follow=True
    )
    assert "Добавлено игроков: 2." in messages_of(response)
    assert Seat.objects.get(game=game, vk_user_id=202).name == "Боря"


def test_removing_players(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, start=False)
    seat = Seat.objects.filter(game=game).first()
    assert seat is not None
    Seat.objects.filter(pk=seat.pk).update(sex=1)  # VK said: a woman
    # After the deal, removing a player discards it: confirmed on its own page first.
    response = gm_client.post(url("panel_player_remove", game, seat_id=seat.pk))
    page = response.content.decode()
    assert response.status_code == 200 and "раздача будет сброшена" in page
    assert f"{seat.name} получит сообщение, что она снята с игры." in page
    assert "Снять и сбросить раздачу" in page
    seat.refresh_from_db()
    game.refresh_from_db()
    assert seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT
    response = gm_client.post(
        url("panel_player_remove", game, seat_id=seat.pk),
        {"confirm": "yes", "discard": "yes"},
        follow=True,
    )
    assert f"{seat.name} снята с игры. Раздача сброшена: раздайте роли заново." in messages_of(
        response
    )
    seat.refresh_from_db()
    game.refresh_from_db()
    assert seat.status == SeatStatus.WITHDRAWN
    assert game.status == GameStatus.RECRUITING  # the deal is discarded


def test_a_removal_confirmed_before_the_deal_does_not_discard_a_deal_made_since(
    gm: Any, gm_client: Client
) -> None:
    """The page said nothing of a deal (there was none); a co-GM dealt meanwhile: the confirm
    does not discard that deal unseen, the page with the warning is shown instead."""
    game = make_game(gm, players=7, deal=False, start=False)
    seat = Seat.objects.filter(game=game).first()
    assert seat is not None
    page = gm_client.get(url("panel_player_remove", game, seat_id=seat.pk)).content.decode()
    assert "раздача будет сброшена" not in page
    services.game_deal(game_id=game.pk)
    response = gm_client.post(url("panel_player_remove", game, seat_id=seat.pk), {"confirm": "yes"})
    assert response.status_code == 200 and "раздача будет сброшена" in response.content.decode()
    seat.refresh_from_db()
    game.refresh_from_db()
    assert seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT


def test_the_service_refuses_a_removal_that_would_discard_an_unconfirmed_deal(gm: Any) -> None:
    game = make_game(gm, players=7, start=False)
    seat = Seat.objects.filter(game=game).first()
    assert seat is not None
    with pytest.raises(DiscardNotConfirmed):
        player_remove(game_id=game.pk, by=Actor.gm("x"), seat_id=seat.pk, discard=False)
    seat.refresh_from_db()
    game.refresh_from_db()
    assert seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT


def test_a_player_cannot_be_removed_from_a_running_game(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7)
    seat = Seat.objects.filter(game=game).first()
    assert seat is not None
    response = gm_client.post(url("panel_player_remove", game, seat_id=seat.pk), follow=True)
    assert any("замену или модкилл" in m for m in messages_of(response))
    seat.refresh_from_db()
    assert seat.status == SeatStatus.PLAYER


def test_the_deal_shows_every_draw_and_a_new_round_is_confirmed(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=26, deal=False, start=False)
    response = gm_client.post(url("panel_deal_run", game), follow=True)
    game.refresh_from_db()
    assert game.status == GameStatus.DEALT
    draws = list(game.draws.all())
    page = response.content.decode()
    assert page.count("отклонён: у мафии") == len(draws) - 1
    assert page.count("принят: ровно один у мафии") == 1
    assert draws[-1].accepted and draws[-1].mafia_items == 1
    assert game.commitment in page

    first = game.commitment
    assert "Новый раунд…" in page
    # Dealing again is no re-roll: a dealt game is sent to the new round's confirmation.
    again = gm_client.post(url("panel_deal_run", game), follow=True)
    assert "Начать новый раунд раздачи?" in again.content.decode()
    confirm = gm_client.get(url("panel_deal_round", game))
    assert "Начать новый раунд раздачи?" in confirm.content.decode()
    gm_client.post(url("panel_deal_round", game))  # no confirmation: nothing happens
    game.refresh_from_db()
    assert game.commitment == first
    done = gm_client.post(url("panel_deal_round", game), {"confirm": "yes"}, follow=True)
    assert any("Начат раунд 2 раздачи" in m for m in messages_of(done))
    game.refresh_from_db()
    assert game.commitment != first and game.status == GameStatus.DEALT
    opened = GameEvent.objects.filter(game=game, kind="deal_round_opened").order_by("seq")
    assert [e.override for e in opened] == [False, True]
    assert opened[1].actor == "gm:ведущий"
    assert GameEvent.objects.get(game=game, kind="deal_discarded").override


def test_dealing_with_the_wrong_number_of_players_is_a_message(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    signup = Seat.objects.filter(game=game).first()
    assert signup is not None
    signup.delete()
    response = gm_client.post(url("panel_deal_run", game), follow=True)
    assert response.status_code == 200
    assert any("Записано игроков: 6" in m for m in messages_of(response))


def test_start(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, start=False)
    # The button leads to a confirmation page: what the start publishes and sends.
    page = gm_client.get(url("panel_start", game)).content.decode()
    assert "Начать игру «Тестовая игра»?" in page
    assert "Все игроки (7) получат в личные сообщения свою роль" in page
    assert gm_client.post(url("panel_start", game)).status_code == 200  # not confirmed
    game.refresh_from_db()
    assert game.status == GameStatus.DEALT
    response = gm_client.post(url("panel_start", game), {"confirm": "yes"}, follow=True)
    assert any("Игра началась" in m for m in messages_of(response))
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING
    assert "День 1" in response.content.decode()
    again = gm_client.post(url("panel_start", game), {"confirm": "yes"}, follow=True)
    assert "Сначала раздайте роли." in messages_of(again)


def test_cancel_before_the_start_is_confirmed(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    page = gm_client.get(url("panel_end", game)).content.decode()
    assert "Отменить игру до начала?" in page
    gm_client.post(url("panel_end", game), {"reason": "не набрались"})
    game.refresh_from_db()
    assert game.status == GameStatus.CANCELLED


def test_clearing_a_running_games_topic_is_refused_with_what_to_do(
    gm: Any, gm_client: Client
) -> None:
    from gameplay.messages import render
    from panel.forms import GameSettingsForm

    game = make_game(gm, players=7, topic_id=42, vk_group_id=555)
    initial = GameSettingsForm.initial_for(game)
    data = {k: v for k, v in initial.items() if v is not None and not isinstance(v, bool | list)}
    data.update({k: "on" for k, v in initial.items() if v is True})
    data["co_gms"] = [u.pk for u in initial["co_gms"]]
    data["topic"] = ""

    response = gm_client.post(url("panel_settings", game), data, follow=True)

    assert messages_of(response) == [render("refusals/topic_required_in_play")]
    game.refresh_from_db()
    assert game.topic_id is not None


def test_adding_a_player_already_listed_is_told_in_the_gms_words(
    gm: Any, gm_client: Client
) -> None:
    game = make_game(gm, players=7, deal=False, start=False)  # «Игрок 1» is VK id 700001
    before = Seat.objects.count()
    response = gm_client.post(url("panel_player_add", game), {"vk": "700001"}, follow=True)
    assert messages_of(response) == ["Игрок 1 уже в составе игры."]
    response = gm_client.post(
        url("panel_players_bulk", game), {"lines": "id201 Аня\nid700001 Снова"}, follow=True
    )
    assert messages_of(response) == ["VK id 700001: Игрок 1 уже в составе игры. Никто не добавлен."]
    assert Seat.objects.count() == before


@pytest.mark.parametrize("vk", ["99999999999999999999999", "id99999999999999999999999"])
def test_a_too_large_vk_id_is_refused_as_not_a_vk_id(gm: Any, gm_client: Client, vk: str) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    before = Seat.objects.count()
    response = gm_client.post(url("panel_player_add", game), {"vk": vk}, follow=True)
    assert messages_of(response) == [f"«{vk}» — не id пользователя VK."]
    assert Seat.objects.count() == before


def test_a_player_added_without_a_name_is_called_by_the_vk_id(gm: Any, gm_client: Client) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    gm_client.post(url("panel_player_add", game), {"vk": "1003", "name": ""}, follow=True)
    assert Seat.objects.get(game=game, vk_user_id=1003).name == "VK id 1003"
    page = gm_client.get(url("panel_players", game)).content.decode()
    assert "VK id 1003" in page and "Id1003" not in page
