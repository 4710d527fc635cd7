"""gameplay.services.gm: the GM's commands, each refusing bad input and changing nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gameplay import services
from gameplay.models import (
    FlagKind,
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
)
from gameplay.rules import Role, RoleCounts
from gameplay.rules.errors import InvalidCommand, SetupError
from gameplay.services.deadlines import phase_extend
from gameplay.services.moderation import flag_resolve
from gameplay.services.retries import outbox_retry_all
from gameplay.services.settings import game_open, game_settings_update
from gameplay.services.signup import parse_player_lines, player_remove
from gameplay.services.spectators import (
    spectator_chat_create,
    spectator_chat_link,
    spectator_chat_set_open,
)
from gameplay.services.vkrefs import chat_peer_id, parse_vk_user
from tests.panel.support import living, make_game

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("text", "vk_id"), [
    ("123", 123), (" id123 ", 123), ("ID123", 123), ("vk.com/id123", 123),
    ("https://vk.com/id123", 123), ("http://m.vk.com/id123/", 123), ("vk.ru/id7", 7),
    ("https://www.vk.com/id42", 42), ("[id9|Аня]", 9),
])
def test_vk_user_references(text: str, vk_id: int) -> None:
    assert parse_vk_user(text=text) == vk_id


@pytest.mark.parametrize(("text", "reason"), [
    ("", "Укажите VK id"),
    ("vk.com/durov", "Короткое имя «durov»"),
    ("https://vk.com/club1", "Короткое имя «club1»"),
    ("id0", "не id пользователя"),
    ("2000000005", "не id пользователя"),
    ("https://example.com/id5", "Не понял"),
    ("123 456", "Не понял"),
])
def test_bad_vk_user_references_are_refused(text: str, reason: str) -> None:
    with pytest.raises(InvalidCommand) as e:
        parse_vk_user(text=text)
    assert reason in e.value.reason


def test_player_lines() -> None:
    lines = parse_player_lines(text="id1 Аня Петрова\n\nvk.com/id2;Боря\n3")
    assert [(x.vk_user_id, x.name) for x in lines] == [(1, "Аня Петрова"), (2, "Боря"),
                                                       (3, "")]
    with pytest.raises(InvalidCommand, match="уже есть в строке 1"):
        parse_player_lines(text="id1\n1")
    with pytest.raises(InvalidCommand, match="Список пуст"):
        parse_player_lines(text="\n  \n")


def test_game_open_adds_co_gms_and_refuses_non_staff(gm: Any, other_gm: Any,
                                                     django_user_model: Any) -> None:
    game = game_open(name="Игра", counts=RoleCounts(), gm=gm, co_gms=[other_gm])
    assert set(game.gms.all()) == {gm, other_gm}
    player = django_user_model.objects.create_user("игрок")
    with pytest.raises(SetupError, match="нет доступа к панели"):
        game_open(name="Игра 2", counts=RoleCounts(), gm=gm, co_gms=[player])
    assert Game.objects.count() == 1


def test_settings_update_refusals(gm: Any) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    with pytest.raises(SetupError, match="Нужна хотя бы одна мафия"):
        game_settings_update(game_id=game.pk, by="gm:x",
                                         counts=RoleCounts(mafia=0, civilian=7))
    with pytest.raises(InvalidCommand, match="Нельзя изменить"):
        game_settings_update(game_id=game.pk, by="gm:x", seed="x")
    with pytest.raises(SetupError, match="хотя бы один ведущий"):
        game_settings_update(game_id=game.pk, by="gm:x", gms=[])
    with pytest.raises(SetupError, match="от 5 минут"):
        game_settings_update(game_id=game.pk, by="gm:x",
                                         day_length=timedelta(minutes=1))
    game_settings_update(game_id=game.pk, by="gm:x",
                                     counts=RoleCounts(mafia=1, commissar=1, doctor=1,
                                                       maniac=0, civilian=4))
    game.refresh_from_db()
    assert (game.mafia_count, game.maniac_count, game.civilian_count) == (1, 0, 4)
    services.game_end(game_id=game.pk, by="gm:x")
    with pytest.raises(InvalidCommand, match="Игра завершена"):
        game_settings_update(game_id=game.pk, by="gm:x", name="Новое")


def test_player_remove_checks_the_game(gm: Any) -> None:
    game = make_game(gm, players=7)
    other = make_game(gm, players=7, vk_base=90_000)
    reserve = services.signup_create(game_id=game.pk, vk_user_id=1, name="Запас", reserve=True)
    with pytest.raises(InvalidCommand, match="Такого игрока нет"):
        player_remove(game_id=other.pk, by="gm:x", seat_id=reserve.pk)
    player_remove(game_id=game.pk, by="gm:x", seat_id=reserve.pk)
    reserve.refresh_from_db()
    assert reserve.status == SeatStatus.WITHDRAWN


def test_extend_moves_the_deadline_and_resets_reminders_ahead(gm: Any) -> None:
    game = make_game(gm, players=7)
    now = timezone.now()
    phase = Phase.objects.get(game=game, status=PhaseStatus.OPEN)
    Phase.objects.filter(pk=phase.pk).update(deadline=now + timedelta(minutes=30),
                                             reminded=[180, 60])
    new = phase_extend(game_id=game.pk, by="gm:x", minutes=120, now=now)
    assert new == now + timedelta(minutes=150)
    phase.refresh_from_db()
    assert phase.reminded == [180]  # 60 minutes before the new deadline is ahead again
    Phase.objects.filter(pk=phase.pk).update(deadline=now - timedelta(hours=1))
    assert phase_extend(game_id=game.pk, by="gm:x", minutes=30, now=now) == (
        now + timedelta(minutes=30))  # a passed deadline is extended from now
    for bad in (0, -5, True, 60 * 24 * 31):
        with pytest.raises(InvalidCommand):
            phase_extend(game_id=game.pk, by="gm:x", minutes=bad)
    assert GameEvent.objects.filter(game=game, kind="deadline_extended").count() == 2


def test_extend_needs_an_open_phase(gm: Any) -> None:
    game = make_game(gm, players=7, start=False)
    with pytest.raises(InvalidCommand, match="не идёт"):
        phase_extend(game_id=game.pk, by="gm:x", minutes=10)


def test_spectator_chat_rules(gm: Any) -> None:
    game = make_game(gm, players=7)
    assert chat_peer_id(value=5) == 2_000_000_005
    assert chat_peer_id(value=2_000_000_005) == 2_000_000_005
    with pytest.raises(InvalidCommand):
        chat_peer_id(value=0)
    spectator_chat_link(game_id=game.pk, by="gm:x", chat=3)
    mafia = Seat.objects.filter(game=game, role=Role.MAFIA).first()
    civ = Seat.objects.filter(game=game, role=Role.CIVILIAN).first()
    Seat.objects.filter(pk__in=[mafia.pk, civ.pk]).update(alive=False)
    spectator_chat_set_open(game_id=game.pk, by="gm:x", open=True)
    told = Outbox.objects.get(game=game, kind="spectators", channel="message")
    assert told.peer_ids == [civ.vk_user_id]  # never the mafia (G6)
    with pytest.raises(InvalidCommand, match="уже открыта"):
        spectator_chat_set_open(game_id=game.pk, by="gm:x", open=True)
    spectator_chat_set_open(game_id=game.pk, by="gm:x", open=False)
    with pytest.raises(InvalidCommand, match="уже закрыта"):
        spectator_chat_set_open(game_id=game.pk, by="gm:x", open=False)


def test_spectator_chat_create_rules(gm: Any) -> None:
    game = make_game(gm, players=7, gm_vk_ids=[5, 6])
    row = spectator_chat_create(game_id=game.pk, by="gm:x")
    assert (row.channel, row.status) == ("create_chat", "pending")
    assert row.payload == {"title": "ЗЗ — Тестовая игра", "user_ids": [5, 6], "by": "gm:x"}
    event = GameEvent.objects.get(game=game, kind="spectator_chat_create_requested")
    assert event.actor == "gm:x" and event.data["outbox"] == row.pk
    with pytest.raises(InvalidCommand, match="уже создаётся"):
        spectator_chat_create(game_id=game.pk, by="gm:x")
    # Failed: the GM may ask again; «повторить все» leaves it alone (no second chat by accident).
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.FAILED)
    Outbox.objects.exclude(pk=row.pk).update(status=OutboxStatus.SENT)
    with pytest.raises(InvalidCommand, match="Недоставленных сообщений нет"):
        outbox_retry_all(game_id=game.pk, by="gm:x")
    assert Outbox.objects.get(pk=row.pk).status == OutboxStatus.FAILED
    spectator_chat_create(game_id=game.pk, by="gm:x")
    Outbox.objects.filter(game=game, channel="create_chat").update(status=OutboxStatus.SENT)
    spectator_chat_link(game_id=game.pk, by="gm:x", chat=3)
    spectator_chat_set_open(game_id=game.pk, by="gm:x", open=True)
    with pytest.raises(InvalidCommand, match="Беседа зрителей открыта"):
        spectator_chat_create(game_id=game.pk, by="gm:x")
    services.game_end(game_id=game.pk, by="gm:x", winner=None)
    with pytest.raises(InvalidCommand, match="Игра завершена"):
        spectator_chat_create(game_id=game.pk, by="gm:x")
    assert Outbox.objects.filter(game=game, channel="create_chat").count() == 2


def test_flags_and_outbox_rows_of_another_game_are_refused(gm: Any) -> None:
    game = make_game(gm, players=7)
    other = make_game(gm, players=7, vk_base=80_000)
    flag = ModerationFlag.objects.create(game=other, kind=FlagKind.PROFANITY)
    with pytest.raises(InvalidCommand, match="Такой отметки нет"):
        flag_resolve(game_id=game.pk, flag_id=flag.pk, by="gm:x", acted=False)
    with pytest.raises(InvalidCommand, match="Неизвестное решение"):
        flag_resolve(game_id=other.pk, flag_id=flag.pk, by="gm:x", acted=True,
                                 punish="ban", seat=1)
    row = Outbox.objects.filter(game=other).first()
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.FAILED)
    with pytest.raises(InvalidCommand, match="Недоставленных сообщений нет"):
        outbox_retry_all(game_id=game.pk, by="gm:x")
    flag.refresh_from_db()
    row.refresh_from_db()
    assert flag.status == "open" and row.status == OutboxStatus.FAILED


def test_flag_acted_on_with_a_modkill(gm: Any) -> None:
    game = make_game(gm, players=7)
    seat = living(game)[0]
    flag = ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.PROFANITY)
    flag_resolve(game_id=game.pk, flag_id=flag.pk, by="gm:x", acted=True,
                             note="оскорбления", punish="modkill", seat=seat.number)
    flag.refresh_from_db()
    seat.refresh_from_db()
    assert not seat.alive and flag.status == "acted" and flag.note == "Модкилл. оскорбления"
