"""gameplay.services.settings: a game opened from the panel, its settings; refusals."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from gameplay import services
from gameplay.models import (
    Actor,
    Game,
    Outbox,
)
from gameplay.refusals import CommunityFixedInPlay, TopicRequiredInPlay
from gameplay.rules import RoleCounts
from gameplay.rules.errors import InvalidCommand, SetupError
from gameplay.services.settings import game_open, game_settings_update
from tests.gameplay.factories import topic_of
from tests.panel.support import community_of, make_game

pytestmark = pytest.mark.django_db


def test_game_open_adds_co_gms_and_refuses_non_staff(
    gm: Any, other_gm: Any, django_user_model: Any
) -> None:
    club = community_of(555, other_gm, owner=gm).vk_id
    game = game_open(name="Игра", counts=RoleCounts(), gm=gm, co_gms=[other_gm], vk_group_id=club)
    assert set(game.gms.all()) == {gm, other_gm}
    player = django_user_model.objects.create_user("игрок")
    with pytest.raises(SetupError, match="нет доступа к панели"):
        game_open(name="Игра 2", counts=RoleCounts(), gm=gm, co_gms=[player], vk_group_id=club)
    assert Game.objects.count() == 1


def test_settings_update_refusals(gm: Any) -> None:
    game = make_game(gm, players=7, deal=False, start=False)
    with pytest.raises(SetupError, match="Нужна хотя бы одна мафия"):
        game_settings_update(
            game_id=game.pk, by=Actor.gm("x"), counts=RoleCounts(mafia=0, civilian=7)
        )
    with pytest.raises(InvalidCommand, match="Нельзя изменить"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), seed="x")
    with pytest.raises(SetupError, match="хотя бы один ведущий"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), gms=[])
    with pytest.raises(SetupError, match="от 5 минут"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), day_length=timedelta(minutes=1))
    game_settings_update(
        game_id=game.pk,
        by=Actor.gm("x"),
        counts=RoleCounts(mafia=1, commissar=1, doctor=1, maniac=0, civilian=4),
    )
    game.refresh_from_db()
    assert (game.mafia_count, game.maniac_count, game.civilian_count) == (1, 0, 4)
    services.game_end(game_id=game.pk, by=Actor.gm("x"))
    with pytest.raises(InvalidCommand, match="Игра завершена"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), name="Новое")


# --- a dealt or running game: what would break it is refused ----------------------------------


@pytest.mark.parametrize("start", [False, True], ids=["dealt", "running"])
def test_the_topic_of_a_game_in_play_is_never_cleared(gm: Any, start: bool) -> None:
    game = make_game(gm, players=7, start=start)
    topic = game.topic_id

    with pytest.raises(TopicRequiredInPlay, match="Тему игры нельзя убрать после раздачи ролей"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), topic_id=None, name="Другое имя")

    game.refresh_from_db()
    assert (game.topic_id, game.name) == (topic, "Тестовая игра")
    assert "укажите номер или ссылку другой темы" in str(TopicRequiredInPlay())


def test_in_recruitment_the_topic_may_be_cleared(gm: Any) -> None:
    game = make_game(gm, players=7, deal=False, start=False)

    game_settings_update(game_id=game.pk, by=Actor.gm("x"), topic_id=None)

    game.refresh_from_db()
    assert game.topic_id is None


def test_a_running_games_topic_moves_and_the_old_topic_says_where(gm: Any) -> None:
    game = make_game(gm, players=7)
    old = topic_of(game)

    game_settings_update(game_id=game.pk, by=Actor.gm("x"), topic_id=old + 1000)

    game.refresh_from_db()
    assert game.topic_id == old + 1000
    [notice] = Outbox.objects.filter(game=game, kind="topic_moved")
    assert notice.topic_id == old
    assert notice.text.startswith("Игра «Тестовая игра» переехала в другую тему")
    if game.vk_group_id:
        assert f"https://vk.com/topic-{game.vk_group_id}_{old + 1000}" in notice.text


def test_a_game_in_play_stays_in_its_community(gm: Any) -> None:
    game = make_game(gm, players=7, vk_group_id=community_of(4242, owner=gm).vk_id)
    elsewhere = community_of(4343, owner=gm).vk_id

    with pytest.raises(CommunityFixedInPlay, match="Сообщество игры нельзя сменить"):
        game_settings_update(game_id=game.pk, by=Actor.gm("x"), vk_group_id=elsewhere)

    game.refresh_from_db()
    assert game.vk_group_id == 4242


def test_every_other_setting_of_a_running_game_changes(gm: Any) -> None:
    """The rest apply from the next phase or post on: nothing of the game in progress breaks."""
    game = make_game(gm, players=7)
    changes: dict[str, Any] = {
        "name": "Новое имя",
        "recruit_topic_id": None,
        "day_length": timedelta(hours=30),
        "night_length": timedelta(hours=6),
        "reminders": [30],
        "early_close": "all",
        "reveal_on_night_death": True,
        "auto_publish": True,
        "time_zone": "Asia/Omsk",
        "gm_vk_ids": [5],
        "theme": "classic",
    }

    game_settings_update(game_id=game.pk, by=Actor.gm("x"), **changes)

    game.refresh_from_db()
    assert {key: getattr(game, key) for key in changes} == changes
