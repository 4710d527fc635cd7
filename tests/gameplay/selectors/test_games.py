"""gameplay.selectors.games: which games a GM may see (their own; all for a superuser) and
«Мои игры», what each active game needs from its GM now."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from gameplay import services
from gameplay.models import Actor, CommunityRole, Game, Outbox, OutboxStatus
from gameplay.selectors.games import games_for, my_games
from gameplay.services.communities import (
    community_member_remove,
    community_member_set,
    community_record,
)
from tests.panel.support import VK_BASE, make_game

pytestmark = pytest.mark.django_db


def test_a_gm_sees_only_their_games_a_superuser_all_a_visitor_none(
    gm: Any, other_gm: Any, django_user_model: Any
) -> None:
    mine = make_game(gm, start=False, deal=False)
    theirs = make_game(other_gm, start=False, deal=False, topic_id=VK_BASE + 1)
    root = django_user_model.objects.create_superuser("root", password="x")

    assert list(games_for(gm)) == [mine]
    assert list(games_for(other_gm)) == [theirs]
    assert set(games_for(root)) == {mine, theirs}
    assert list(games_for(AnonymousUser())) == []
    gm.is_staff = False
    assert list(games_for(gm)) == []


def test_my_games_puts_what_needs_the_gm_first_and_lists_the_ended(gm: Any, other_gm: Any) -> None:
    running = make_game(gm, name="Идёт", topic_id=VK_BASE + 1, vk_base=VK_BASE + 100)
    # Newer, so listed first were it not for the running game's undelivered messages.
    recruiting = make_game(gm, name="Набор", players=5, start=False, deal=False)
    ended = make_game(gm, name="Конец", topic_id=VK_BASE + 2, vk_base=VK_BASE + 200)
    services.game_end(game_id=ended.pk, by=Actor.gm("test"))
    make_game(other_gm, name="Чужая", topic_id=VK_BASE + 3, vk_base=VK_BASE + 300)
    failed = Outbox.objects.filter(game=running).update(status=OutboxStatus.FAILED)
    assert failed > 0

    rows, ends = my_games(gm)

    assert [r.game.name for r in rows] == ["Идёт", "Набор"]
    first, second = rows
    assert first.needs_attention and first.failed_outbox == failed
    assert first.phase is not None
    assert (first.phase.kind, first.phase.number, first.players, first.needed) == ("day", 1, 7, 7)
    assert (second.phase, second.players, second.needed, second.needs_attention) == (
        None,
        5,
        5,
        False,
    )
    assert recruiting == second.game
    assert [g.name for g in ends] == ["Конец"]


def test_a_gm_sees_only_the_games_of_their_communities() -> None:
    users = get_user_model().objects
    a = community_record(vk_id=50, name="A", group_token="ta", connected=True)
    b = community_record(vk_id=51, name="B", group_token="tb", connected=True)
    gm = users.create_user("gm", is_staff=True)
    owner = users.create_user("owner", is_staff=True)
    root = users.create_superuser("root", password="x")
    community_member_set(community=a, user=gm)
    community_member_set(community=b, user=owner, role=CommunityRole.OWNER)
    in_a = Game.objects.create(name="a", vk_group_id=50)
    in_a.gms.add(gm)
    in_b = Game.objects.create(name="b", vk_group_id=51)
    in_b_by_gm = Game.objects.create(name="b2", vk_group_id=51)
    in_b_by_gm.gms.add(gm)  # a GM of b's game, but not a member of b
    assert set(games_for(gm)) == {in_a}
    assert set(games_for(owner)) == {in_b, in_b_by_gm}
    assert set(games_for(root)) == {in_a, in_b, in_b_by_gm}
    community_member_remove(community=a, user=gm)
    assert set(games_for(gm)) == set()
