"""The bot's lookups under ``gameplay.context.serving``: two communities with a game each, the
same player in both, the same topic ids and the same spectator chat peer id (each community's
own): serving one community finds only its game; outside ``serving`` nothing is filtered."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay.context import serving
from gameplay.models import Actor, Community, Game, GameEvent, Outbox, Vote
from gameplay.selectors import bot as sel
from gameplay.services.spectators import spectator_chat_link, spectator_chat_set_open
from tests.vkbot.bot_support import board_post, kill, make_game, pm, run
from vkbot.handlers.spectators import is_community
from vkbot.pipeline import apply_updates

pytestmark = pytest.mark.django_db

A, B = 77, 88
TOPIC, RECRUIT = 4242, 4243
CHAT = 2_000_000_001  # every community's first chat
PLAYER = 1003  # seat 3 in both games


@pytest.fixture
def games(settings: Any) -> dict[int, Game]:
    settings.VK_GROUP_ID = A
    for vk_id in (A, B):
        Community.objects.create(
            vk_id=vk_id, name=f"club{vk_id}", connected=True, group_token=f"token-{vk_id}"
        )
    out = {}
    for vk_id in (A, B):
        game = make_game(topic_id=TOPIC, recruit_topic_id=RECRUIT, vk_group_id=vk_id)
        spectator_chat_link(game_id=game.pk, by=Actor.gm("test"), chat=CHAT)
        spectator_chat_set_open(game_id=game.pk, by=Actor.gm("test"), open=True)
        out[vk_id] = Game.objects.get(pk=game.pk)
    return out


def test_the_same_topic_and_chat_are_each_communitys_own(games: dict[int, Game]) -> None:
    assert {g.topic_id for g in games.values()} == {TOPIC}
    assert {g.spectator_chat_id for g in games.values()} == {CHAT}


@pytest.mark.parametrize("group", [A, B])
def test_serving_a_community_finds_only_its_games(games: dict[int, Game], group: int) -> None:
    mine, other = games[group].pk, games[A if group == B else B].pk
    with serving(group):
        assert [s.game_id for s in sel.seats_of_user(PLAYER)] == [mine]
        assert sel.active_games_of_users([PLAYER]) == {PLAYER: {mine}}
        assert sel.active_games_of_topics([TOPIC, RECRUIT]) == {TOPIC: {mine}, RECRUIT: {mine}}
        assert [g.pk for g in sel.games_for_topic(TOPIC)] == [mine]
        by_topic, by_chat = sel.game_for_topic(TOPIC), sel.game_for_chat(CHAT)
        assert by_topic is not None and by_topic.pk == mine
        assert by_chat is not None and by_chat.pk == mine
        assert [g.pk for g in sel.reserve_games()] == [mine]
        by_id = sel.game_by_id(mine)
        assert by_id is not None and by_id.pk == mine and sel.game_by_id(other) is None
        kill(games[group], 3)
        assert [s.game_id for s in sel.spectator_seats(PLAYER)] == [mine]


def test_outside_serving_nothing_is_filtered(games: dict[int, Game]) -> None:
    both = {games[A].pk, games[B].pk}
    assert {s.game_id for s in sel.seats_of_user(PLAYER)} == both
    assert sel.active_games_of_users([PLAYER]) == {PLAYER: both}
    assert {g.pk for g in sel.games_for_topic(TOPIC)} == both
    assert {g.pk for g in sel.reserve_games()} == both


def test_recruiting_games_are_the_communitys(settings: Any) -> None:
    settings.VK_GROUP_ID = A
    Community.objects.create(vk_id=B, connected=True, group_token="t")
    Community.objects.create(vk_id=A, connected=True, group_token="t")
    of_b = make_game(start=False, vk_group_id=B)
    of_none = make_game(start=False)  # none named: the environment's
    with serving(B):
        assert [g.pk for g in sel.recruiting_games()] == [of_b.pk]
    with serving(A):
        assert [g.pk for g in sel.recruiting_games()] == [of_none.pk]
    assert {g.pk for g in sel.recruiting_games()} == {of_b.pk, of_none.pk}


def test_a_game_without_a_community_is_the_environments(settings: Any) -> None:
    settings.VK_GROUP_ID = A
    Community.objects.create(vk_id=B, connected=True, group_token="t")
    game = make_game(vk_base=5000)
    assert game.vk_group_id == A  # none named: the environment's, in the game row itself
    with serving(A):
        assert [s.game_id for s in sel.seats_of_user(5003)] == [game.pk]
    with serving(B):
        assert sel.seats_of_user(5003) == []


def test_a_private_vote_goes_to_the_game_of_the_community_written_to(
    games: dict[int, Game],
) -> None:
    update = pm(PLAYER, "голос 4")
    update["group_id"] = B
    assert apply_updates([update], None, group_id=B) == 1
    assert Vote.objects.filter(phase__game=games[B]).count() == 1
    assert not Vote.objects.filter(phase__game=games[A]).exists()


def test_a_vote_in_a_topic_goes_to_the_game_of_that_communitys_topic(
    games: dict[int, Game],
) -> None:
    with serving(A):
        run(board_post(TOPIC, PLAYER, "голос 5"))
    assert Vote.objects.filter(phase__game=games[A], source="board").count() == 1
    assert not Vote.objects.filter(phase__game=games[B]).exists()


def test_the_community_added_to_a_chat_is_the_one_served(settings: Any) -> None:
    settings.VK_GROUP_ID = A
    assert is_community(-A) and not is_community(-B)
    with serving(B):
        assert is_community(-B) and not is_community(-A)


def test_replies_go_out_as_the_community_served(games: dict[int, Game]) -> None:
    """A reply outside any game (a refusal) carries the community it answers for."""
    update = pm(42, "что-то непонятное")
    update["group_id"] = B
    apply_updates([update], None, group_id=B)
    update = pm(42, "что-то ещё")
    update["group_id"] = A
    apply_updates([update], None, group_id=A)
    assert [r.group_id for r in Outbox.objects.filter(game=None).order_by("id")] == [B, A]


def test_an_update_of_another_community_is_not_applied(games: dict[int, Game]) -> None:
    before = GameEvent.objects.count()
    update = pm(PLAYER, "голос 4")  # group 77
    assert apply_updates([update], None, group_id=B) == 0
    assert GameEvent.objects.count() == before
