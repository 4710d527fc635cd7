"""gameplay.services.settings: a game opened from the panel, its settings; refusals."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from gameplay import services
from gameplay.models import (
    Game,
)
from gameplay.rules import RoleCounts
from gameplay.rules.errors import InvalidCommand, SetupError
from gameplay.services.settings import game_open, game_settings_update
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def test_game_open_adds_co_gms_and_refuses_non_staff(
    gm: Any, other_gm: Any, django_user_model: Any
) -> None:
    game = game_open(name="Игра", counts=RoleCounts(), gm=gm, co_gms=[other_gm])
    assert set(game.gms.all()) == {gm, other_gm}
    player = django_user_model.objects.create_user("игрок")
    with pytest.raises(SetupError, match="нет доступа к панели"):
        game_open(name="Игра 2", counts=RoleCounts(), gm=gm, co_gms=[player])
    assert Game.objects.count() == 1


def test_settings_update_refusals(gm: Any) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    with pytest.raises(SetupError, match="Нужна хотя бы одна мафия"):
        game_settings_update(game_id=game.pk, by="gm:x", counts=RoleCounts(mafia=0, civilian=7))
    with pytest.raises(InvalidCommand, match="Нельзя изменить"):
        game_settings_update(game_id=game.pk, by="gm:x", seed="x")
    with pytest.raises(SetupError, match="хотя бы один ведущий"):
        game_settings_update(game_id=game.pk, by="gm:x", gms=[])
    with pytest.raises(SetupError, match="от 5 минут"):
        game_settings_update(game_id=game.pk, by="gm:x", day_length=timedelta(minutes=1))
    game_settings_update(
        game_id=game.pk,
        by="gm:x",
        counts=RoleCounts(mafia=1, commissar=1, doctor=1, maniac=0, civilian=4),
    )
    game.refresh_from_db()
    assert (game.mafia_count, game.maniac_count, game.civilian_count) == (1, 0, 4)
    services.game_end(game_id=game.pk, by="gm:x")
    with pytest.raises(InvalidCommand, match="Игра завершена"):
        game_settings_update(game_id=game.pk, by="gm:x", name="Новое")
