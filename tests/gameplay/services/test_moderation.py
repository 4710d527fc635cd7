"""gameplay.services.moderation and .retries: the GM's decisions on flags and deliveries."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay.models import (
    Actor,
    FlagKind,
    ModerationFlag,
    Outbox,
    OutboxStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.moderation import flag_resolve
from gameplay.services.retries import outbox_retry_all
from tests.panel.support import living, make_game

pytestmark = pytest.mark.django_db


def test_flags_and_outbox_rows_of_another_game_are_refused(gm: Any) -> None:
    game = make_game(gm, players=7)
    other = make_game(gm, players=7, vk_base=80_000)
    flag = ModerationFlag.objects.create(game=other, kind=FlagKind.PROFANITY)
    with pytest.raises(InvalidCommand, match="Такой отметки нет"):
        flag_resolve(game_id=game.pk, flag_id=flag.pk, by=Actor.gm("x"), acted=False)
    with pytest.raises(InvalidCommand, match="Неизвестное решение"):
        flag_resolve(
            game_id=other.pk, flag_id=flag.pk, by=Actor.gm("x"), acted=True, punish="ban", seat=1
        )
    row = Outbox.objects.filter(game=other).first()
    assert row is not None
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.FAILED)
    with pytest.raises(InvalidCommand, match="Недоставленных сообщений нет"):
        outbox_retry_all(game_id=game.pk, by=Actor.gm("x"))
    flag.refresh_from_db()
    row.refresh_from_db()
    assert flag.status == "open" and row.status == OutboxStatus.FAILED


def test_flag_acted_on_with_a_modkill(gm: Any) -> None:
    game = make_game(gm, players=7)
    seat = living(game)[0]
    flag = ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.PROFANITY)
    flag_resolve(
        game_id=game.pk,
        flag_id=flag.pk,
        by=Actor.gm("x"),
        acted=True,
        note="оскорбления",
        punish="modkill",
        seat=seat.number,
    )
    flag.refresh_from_db()
    seat.refresh_from_db()
    assert not seat.alive and flag.status == "acted" and flag.note == "Модкилл. оскорбления"
