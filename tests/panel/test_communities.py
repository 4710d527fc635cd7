"""«Сообщества»: the list, a community's page, its GMs (the owner's to change), disconnecting
and the history setting; games only in the user's communities; a player's history per
community."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import Actor, Community, CommunityMember, CommunityRole, Game
from gameplay.refusals import NotCommunityMember
from gameplay.rules import RoleCounts
from gameplay.services.settings import game_open, game_settings_update
from tests.panel.support import community_of, make_game
from tests.panel.test_views_setup import NEW_GAME

pytestmark = pytest.mark.django_db


def page(name: str, community: Community, **kw: Any) -> str:
    return reverse(f"panel:{name}", kwargs={"vk_id": community.vk_id, **kw})


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


@pytest.fixture
def home(gm: Any) -> Community:
    return community_of(
        555,
        owner=gm,
        name="Мафия на Неве",
        setup={
            "mode": "longpoll",
            "done": ["long_poll"],
            "todo": ["board_section", "players_allow"],
        },
    )


def test_the_list_shows_the_users_communities_with_their_state(
    home: Community,
    gm: Any,
    other_gm: Any,
    gm_client: Client,
    other_client: Client,
    django_user_model: Any,
) -> None:
    community_of(777, owner=other_gm, name="Чужое", connected=False)
    mine = gm_client.get(reverse("panel:communities")).content.decode()
    assert "Мафия на Неве" in mine and "Чужое" not in mine
    assert "подключено" in mine and "осталось шагов в VK: 2" in mine and "владелец" in mine
    theirs = other_client.get(reverse("panel:communities")).content.decode()
    assert "Чужое" in theirs and "отключено" in theirs and "Мафия на Неве" not in theirs
    boss = django_user_model.objects.create_superuser("оператор", password="x")
    client = Client()
    client.force_login(boss)
    both = client.get(reverse("panel:communities")).content.decode()
    assert "Чужое" in both and "Мафия на Неве" in both
    assert "Сообщества" in gm_client.get(reverse("admin:index")).content.decode()


def test_the_community_page_shows_its_state_checklist_and_gms(
    home: Community, gm_client: Client
) -> None:
    html = gm_client.get(page("community", home)).content.decode()
    assert "Мафия на Неве" in html and "id 555" in html
    assert "Long Poll API включён" in html and "Управление → Разделы" in html
    assert "ведущий" in html.lower() and "Владелец" in html
    assert 'id="disconnect"' in html and 'id="gm-add"' in html


def test_the_owner_adds_and_removes_a_gm(
    home: Community, other_gm: Any, gm_client: Client, django_user_model: Any
) -> None:
    response = gm_client.post(page("community_gm_add", home), {"username": "чужой"}, follow=True)
    assert "чужой — ведущий сообщества." in messages_of(response)
    assert CommunityMember.objects.get(community=home, user=other_gm).role == CommunityRole.GM
    response = gm_client.post(page("community_gm_add", home), {"username": "никто"}, follow=True)
    assert messages_of(response) == [render("refusals/no_such_panel_user", username="никто")]
    django_user_model.objects.create_user("игрок", password="x")
    response = gm_client.post(page("community_gm_add", home), {"username": "игрок"}, follow=True)
    assert messages_of(response) == [render("refusals/not_staff", username="игрок")]
    remove = page("community_gm_remove", home, user_id=other_gm.pk)
    confirm = gm_client.get(remove)
    assert confirm.status_code == 200 and "Убрать чужой" in confirm.content.decode()
    assert CommunityMember.objects.filter(community=home, user=other_gm).exists()
    gm_client.post(remove, {"confirm": "yes"})
    assert not CommunityMember.objects.filter(community=home, user=other_gm).exists()
    owner = CommunityMember.objects.get(community=home, role=CommunityRole.OWNER).user
    response = gm_client.post(
        page("community_gm_remove", home, user_id=owner.pk), {"confirm": "yes"}, follow=True
    )
    assert messages_of(response)[-1] == render("refusals/owner_not_removable")
    assert CommunityMember.objects.filter(community=home, user=owner).exists()


def test_a_gm_of_the_community_sees_it_but_cannot_change_it(
    home: Community, other_gm: Any, other_client: Client
) -> None:
    CommunityMember.objects.create(community=home, user=other_gm, role=CommunityRole.GM)
    html = other_client.get(page("community", home)).content.decode()
    assert "Мафия на Неве" in html and 'id="disconnect"' not in html and 'id="gm-add"' not in html
    before = list(CommunityMember.objects.values_list("user", "role"))
    for url in (
        page("community_disconnect", home),
        page("community_reconnect", home),
        page("community_gm_add", home),
        page("community_history", home),
        page("community_gm_remove", home, user_id=other_gm.pk),
    ):
        response = other_client.post(
            url, {"confirm": "yes", "username": "чужой", "history_public": "on"}
        )
        assert response.status_code == 403, url
    home.refresh_from_db()
    assert home.connected and not home.history_public
    assert list(CommunityMember.objects.values_list("user", "role")) == before


def test_disconnecting_confirms_first_stops_traffic_and_keeps_the_games(
    home: Community, gm: Any, gm_client: Client
) -> None:
    game = make_game(gm, players=7, vk_group_id=home.vk_id)
    url = page("community_disconnect", home)
    confirm = gm_client.get(url)
    assert confirm.status_code == 200 and "Отключить сообщество «Мафия на Неве»?" in (
        confirm.content.decode()
    )
    home.refresh_from_db()
    assert home.connected
    response = gm_client.post(url, {"confirm": "yes"}, follow=True)
    home.refresh_from_db()
    assert not home.connected and home.disconnected_at is not None
    assert "отключено" in " ".join(messages_of(response))
    assert Game.objects.filter(pk=game.pk, vk_group_id=home.vk_id).exists()
    assert 'id="reconnect"' in response.content.decode()
    from gameplay.selectors.communities import credentials

    assert credentials(home.vk_id) is None


def test_the_environments_community_is_not_disconnected_from_the_panel(
    gm: Any, gm_client: Client
) -> None:
    env = community_of(888, owner=gm, name="Из настроек", from_env=True)
    response = gm_client.post(page("community_disconnect", env), {"confirm": "yes"}, follow=True)
    assert messages_of(response) == [
        render("refusals/community_from_environment", community="Из настроек")
    ]
    env.refresh_from_db()
    assert env.connected


def test_games_are_created_only_in_the_users_communities(
    home: Community, gm: Any, other_gm: Any, gm_client: Client
) -> None:
    theirs = community_of(777, owner=other_gm, name="Чужое")
    form = gm_client.get(reverse("admin:gameplay_game_add")).context["form"]
    assert [v for v, _ in form.fields["vk_group_id"].choices] == ["", 555]
    assert form["vk_group_id"].initial == 555  # the one community is chosen already
    response = gm_client.post(
        reverse("admin:gameplay_game_add"),
        {**NEW_GAME, "vk_group_id": "777", "topic": "", "recruit_topic": ""},
    )
    assert response.status_code == 200 and not Game.objects.exists()
    response = gm_client.post(reverse("admin:gameplay_game_add"), {**NEW_GAME, "vk_group_id": ""})
    assert render("refusals/community_required") in response.content.decode()
    with pytest.raises(NotCommunityMember, match="Чужое"):
        game_open(name="Игра", counts=RoleCounts(), gm=gm, vk_group_id=theirs.vk_id)
    assert not Game.objects.exists()


def test_a_topic_link_of_another_community_is_refused(home: Community, gm_client: Client) -> None:
    response = gm_client.post(
        reverse("admin:gameplay_game_add"), {**NEW_GAME, "topic": "https://vk.com/topic-777_42"}
    )
    assert render("refusals/topic_of_another_community", community="Мафия на Неве") in (
        response.content.decode()
    )
    assert not Game.objects.exists()


def test_a_game_is_not_moved_into_another_community(
    home: Community, gm: Any, other_gm: Any, gm_client: Client
) -> None:
    game = make_game(gm, players=7, start=False, vk_group_id=home.vk_id)
    community_of(777, owner=other_gm, name="Чужое")
    with pytest.raises(NotCommunityMember):
        game_settings_update(game_id=game.pk, by=Actor.gm("ведущий"), editor=gm, vk_group_id=777)
    game.refresh_from_db()
    assert game.vk_group_id == home.vk_id


def _cancelled_game(gm: Any, vk_id: int, vk_base: int) -> Game:
    from gameplay.services.phases import game_end

    game = make_game(
        gm,
        players=7,
        start=False,
        deal=False,
        vk_base=vk_base,
        vk_group_id=vk_id,
        name=f"Игра {vk_id}",
    )
    game_end(game_id=game.pk, by=Actor.gm("test"), reason="проверка")
    return game


def test_a_players_history_is_per_community_unless_it_is_public(
    home: Community, gm: Any, other_gm: Any, gm_client: Client, other_client: Client
) -> None:
    theirs = community_of(777, owner=other_gm, name="Чужое")
    ours = _cancelled_game(gm, home.vk_id, 90_000)
    _cancelled_game(other_gm, theirs.vk_id, 90_000)  # the same player, 90 001, in both
    own = make_game(
        other_gm, players=7, start=False, vk_base=91_000, vk_group_id=777, name="Их открытая игра"
    )
    url = reverse("admin:panel_history", kwargs={"game_id": own.pk, "vk_user_id": 90_001})
    assert ours.name not in other_client.get(url).content.decode()
    response = gm_client.post(
        page("community_history", home), {"history_public": "on"}, follow=True
    )
    assert "открыта другим сообществам" in " ".join(messages_of(response))
    home.refresh_from_db()
    assert home.history_public
    html = other_client.get(url).content.decode()
    assert ours.name in html and "Игра 777" in html
