"""outbox.flags: what the GM reads about messages VK refused: one open delivery flag per player
(or per board topic) collects the lines, the newest ``MAX_FLAG_LINES``."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay.models import FlagKind, FlagStatus, Game, ModerationFlag, Outbox, OutboxChannel
from outbox.flags import MAX_FLAG_LINES, add_flag_line, flag_failed_delivery
from outbox.results import CREATE_CHAT_ASKED
from tests.gameplay.factories import make_game, seat_no, vk_id
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _day_one() -> int:
    return make_game(n=5, start=True).pk


_day_one_rows = module_rows(_day_one)


@pytest.fixture
def game(_day_one_rows: int) -> Game:
    """Five players, Day 1 open (built once per module)."""
    return Game.objects.get(pk=_day_one_rows)


def outbox_row(game: Game, channel: str, **fields: Any) -> Outbox:
    fields.setdefault("text", "Первая строка\nвторая строка")
    return Outbox.objects.create(game=game, channel=channel, kind="test", **fields)


def flags(game: Game) -> list[ModerationFlag]:
    return list(ModerationFlag.objects.filter(game=game, kind=FlagKind.DELIVERY).order_by("id"))


def test_each_refused_recipient_gets_a_line_with_their_reason(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.MESSAGE, peer_ids=[vk_id(1), vk_id(2), vk_id(3)])
    flag_failed_delivery(row, "общая причина", {vk_id(2): "закрыл личку", vk_id(1): "бан"})
    got = flags(game)
    assert [(f.vk_user_id, f.seat_id, f.status) for f in got] == [
        (vk_id(1), seat_no(game, 1).pk, FlagStatus.OPEN),
        (vk_id(2), seat_no(game, 2).pk, FlagStatus.OPEN),
    ]
    assert (
        got[0].text
        == f"Сообщение №{row.pk} («Первая строка») не доставлено: бан. Повторить — в панели."
    )
    assert "закрыл личку" in got[1].text and "общая причина" not in got[1].text


def test_without_recipients_every_peer_gets_the_rows_reason(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.MESSAGE, peer_ids=[vk_id(4), 99_999], text="")
    flag_failed_delivery(row, "ошибка VK", {})
    got = flags(game)
    assert [f.vk_user_id for f in got] == [vk_id(4), 99_999]
    assert got[1].seat is None  # not a player of the game: flagged all the same
    assert all("без текста" in f.text and "ошибка VK" in f.text for f in got)


def test_a_long_first_line_is_shortened(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.MESSAGE, peer_ids=[vk_id(1)], text="слово " * 30)
    flag_failed_delivery(row, "нет", {})
    [flag] = flags(game)
    what = flag.text.split("«", 1)[1].split("»", 1)[0]
    assert len(what) == 60 and what.endswith("…")


def test_a_board_post_is_flagged_for_its_topic(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.BOARD, topic_id=game.topic_id)
    flag_failed_delivery(row, "тема закрыта", {vk_id(1): "не о нём"})
    [flag] = flags(game)
    assert (flag.vk_user_id, flag.topic_id) == (None, game.topic_id)
    assert f"в обсуждении {game.topic_id}: тема закрыта" in flag.text


@pytest.mark.parametrize(
    ("asked", "words"), [(False, ") не создана: таймаут"), (True, "Неизвестно, создана ли")]
)
def test_a_chat_request_says_whether_the_chat_may_exist(
    game: Game, asked: bool, words: str
) -> None:
    row = outbox_row(
        game,
        OutboxChannel.CREATE_CHAT,
        payload={"title": "ЗЗ — игра"},
        result={CREATE_CHAT_ASKED: True} if asked else None,
    )
    flag_failed_delivery(row, "таймаут", {})
    [flag] = flags(game)
    assert words in flag.text and "«ЗЗ — игра»" in flag.text
    assert ("Повторно бот её не создаёт" in flag.text) is asked
    assert (flag.vk_user_id, flag.topic_id) == (None, None)


def test_a_chat_action_is_flagged_for_its_member(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.KICK, payload={"member_id": vk_id(3)})
    flag_failed_delivery(row, "нет прав", {})
    [flag] = flags(game)
    assert flag.vk_user_id == vk_id(3) and flag.seat == seat_no(game, 3)
    assert flag.text.startswith(f"Действие в беседе №{row.pk}") and "нет прав" in flag.text


def test_lines_collect_in_one_open_flag_per_player_newest_kept(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.MESSAGE, peer_ids=[vk_id(1)])
    for i in range(MAX_FLAG_LINES + 5):
        add_flag_line(row, f"строка {i}", vk_user_id=vk_id(1))
    add_flag_line(row, "другому", vk_user_id=vk_id(2))
    add_flag_line(row, "теме", topic_id=game.topic_id)
    add_flag_line(row, "игре")
    got = flags(game)
    assert [(f.vk_user_id, f.topic_id) for f in got] == [
        (vk_id(1), None),
        (vk_id(2), None),
        (None, game.topic_id),
        (None, None),
    ]
    lines = got[0].text.splitlines()
    assert lines == [f"строка {i}" for i in range(5, MAX_FLAG_LINES + 5)]


def test_a_flag_the_gm_settled_is_not_reopened(game: Game) -> None:
    row = outbox_row(game, OutboxChannel.MESSAGE, peer_ids=[vk_id(1)])
    add_flag_line(row, "первая", vk_user_id=vk_id(1))
    ModerationFlag.objects.filter(game=game).update(status=FlagStatus.DISMISSED)
    add_flag_line(row, "вторая", vk_user_id=vk_id(1))
    assert [(f.status, f.text) for f in flags(game)] == [
        (FlagStatus.DISMISSED, "первая"),
        (FlagStatus.OPEN, "вторая"),
    ]
