"""Who a GM may make a co-GM: the people of their own communities. The new-game form and a
game's settings list only them (never another community's GMs, a staff account of no
community or the operator), and the services refuse anyone else."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.models import Actor, Community, Game
from gameplay.refusals import GmNotCommunityMember
from gameplay.rules import RoleCounts
from gameplay.services.settings import game_open, game_settings_update
from tests.panel.support import community_of, make_game
from tests.panel.test_views_setup import NEW_GAME

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(gm: Any, other_gm: Any, django_user_model: Any) -> dict[str, Any]:
    users = django_user_model.objects
    people = {
        "gm": gm,
        "colleague": users.create_user("коллега", is_staff=True),
        "stranger": other_gm,
        "loner": users.create_user("одиночка", is_staff=True),
        "operator": users.create_superuser("оператор", password="x"),
    }
    community_of(555, people["colleague"], owner=gm, name="Своё")
    community_of(777, owner=other_gm, name="Чужое")
    return people


def listed(form: Any) -> set[str]:
    return {form.fields["co_gms"].label_from_instance(u) for u in form.fields["co_gms"].queryset}


def test_the_new_game_form_lists_only_the_people_of_the_gms_communities(
    people: dict[str, Any], gm_client: Client
) -> None:
    page = gm_client.get(reverse("admin:gameplay_game_add"))
    assert listed(page.context["form"]) == {"ведущий", "коллега"}
    html = page.content.decode()
    assert "коллега" in html
    assert not {"чужой", "одиночка", "оператор"} & set(html.replace("<", " ").split())


def test_a_game_from_the_form_takes_no_co_gm_from_outside(
    people: dict[str, Any], gm_client: Client
) -> None:
    data = {**NEW_GAME, "co_gms": [people["gm"].pk, people["stranger"].pk]}
    response = gm_client.post(reverse("admin:gameplay_game_add"), data)
    assert response.status_code == 200 and not Game.objects.exists()


def test_the_settings_list_the_people_of_the_games_community(
    people: dict[str, Any], gm: Any, gm_client: Client
) -> None:
    game = make_game(gm, players=7, start=False, vk_group_id=555)
    page = gm_client.get(reverse("admin:panel_settings", kwargs={"game_id": game.pk}))
    assert listed(page.context["form"]) == {"ведущий", "коллега"}


def test_the_services_refuse_a_co_gm_of_another_community(people: dict[str, Any]) -> None:
    gm, stranger = people["gm"], people["stranger"]
    with pytest.raises(GmNotCommunityMember, match="чужой"):
        game_open(name="Игра", counts=RoleCounts(), gm=gm, vk_group_id=555, co_gms=[gm, stranger])
    assert not Game.objects.exists()
    game = game_open(name="Игра", counts=RoleCounts(), gm=gm, vk_group_id=555)
    with pytest.raises(GmNotCommunityMember, match="оператор"):
        game_settings_update(
            game_id=game.pk, by=Actor.gm("ведущий"), editor=gm, gms=[gm, people["operator"]]
        )
    assert list(game.gms.all()) == [gm]
    assert Community.objects.count() == 2
