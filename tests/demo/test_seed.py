"""``demo_seed``: the demo game is set up through the services and the local VK's API, once;
later runs continue it, give an overdue phase time again, or start anew when they must."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from demo import config
from demo import seed as demo_seed
from demo.vk import LocalVkClient, VkCallError
from gameplay.models import Game, GameEvent, GameStatus, Outbox, Phase, PollState, Seat
from gameplay.rules import Role
from localvk import LocalVK, ServerThread
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def debug_on(settings: Any) -> None:
    """``manage.py demo_seed`` runs with DEBUG on only (the test runner turns it off)."""
    settings.DEBUG = True


@pytest.fixture(autouse=True)
def drain_flags(rq_queues: Any) -> Iterator[None]:
    """The seed enqueues Outbox drains: leave no «drain queued» flag to the next tests."""
    redis = rq_queues["vk"].connection
    redis.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
    yield
    redis.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)


def local_vk() -> LocalVK:
    return LocalVK(group_id=config.GROUP_ID, group_token=config.GROUP_TOKEN,
                   user_tokens={config.USER_TOKEN: config.ADMIN_USER_ID},
                   group_rps=10_000, user_rps=10_000)


@pytest.fixture
def vk(rq_queues: Any) -> Iterator[tuple[LocalVK, LocalVkClient]]:
    with ServerThread(local_vk()) as srv:
        yield srv.state, LocalVkClient(srv.url)


OPTIONS = demo_seed.SeedOptions(seed="seed-test")


def test_the_first_run_sets_up_a_running_26_player_game(
    vk: tuple[LocalVK, LocalVkClient],
) -> None:
    state, client = vk
    report = demo_seed.seed(OPTIONS, client)
    game = report.game
    assert report.created and game.status == GameStatus.RUNNING
    assert game.name == config.GAME_NAME and game.vk_group_id == config.GROUP_ID
    assert (game.day_length, game.night_length) == (timedelta(minutes=5), timedelta(minutes=5))
    assert game.reminders == [1] and not game.auto_publish
    seats = list(Seat.objects.filter(game=game).order_by("number"))
    assert [s.vk_user_id for s in seats] == config.player_ids()
    assert seats[0].name == "{} {}".format(*config.community_users()[0][1:3])
    assert len({s.name.split()[0] for s in seats}) == 26  # first names never repeat
    assert sorted(s.role for s in seats).count(Role.MAFIA) == 6
    # The board and the spectator chat exist in the local VK; the game points at them.
    assert state.topic(game.recruit_topic_id).title.startswith("Набор")
    assert state.topic(game.topic_id).title == f"Игра «{config.GAME_NAME}»"
    assert game.spectator_chat_id - 2_000_000_000 in state.chats
    assert len(state.users) == config.PLAYERS + config.GUESTS
    # The GM can log in; role cards and the Day 1 prompts wait for the worker.
    gm = get_user_model().objects.get(username="gm")
    assert gm.is_staff and gm.check_password("gm") and game.gms.filter(pk=gm.pk).exists()
    kinds = set(Outbox.objects.filter(game=game).values_list("kind", flat=True))
    assert {"role_card", "roster", "day_opened", "day_prompt"} <= kinds
    assert Phase.objects.get(game=game).number == 1
    # The bot will start polling where the setup left the long poll.
    assert PollState.objects.get(group_id=config.GROUP_ID).ts == str(state.longpoll.ts)


def test_a_second_run_continues_the_same_game(vk: tuple[LocalVK, LocalVkClient]) -> None:
    state, client = vk
    first = demo_seed.seed(OPTIONS, client).game
    events = GameEvent.objects.filter(game=first).count()
    topics = len(state.topics)
    again = demo_seed.seed(demo_seed.SeedOptions(gm_password="other"), client)
    assert not again.created and again.notes == []
    assert again.game.pk == first.pk and Game.objects.count() == 1
    assert GameEvent.objects.filter(game=first).count() == events
    assert len(state.topics) == topics
    assert get_user_model().objects.get(username="gm").check_password("other")


def test_an_overdue_phase_gets_its_time_again(vk: tuple[LocalVK, LocalVkClient]) -> None:
    _, client = vk
    game = demo_seed.seed(OPTIONS, client).game
    Phase.objects.filter(game=game).update(deadline=timezone.now() - timedelta(hours=3))
    report = demo_seed.seed(OPTIONS, client)
    assert report.game.pk == game.pk
    assert any("extended by 5 min" in note for note in report.notes)
    phase = Phase.objects.get(game=game)
    assert phase.deadline > timezone.now() + timedelta(minutes=4)
    assert GameEvent.objects.filter(game=game, kind="deadline_extended").count() == 1
    assert "День 1 until" in demo_seed.describe(game)


def test_a_lost_local_vk_or_an_ended_game_means_a_new_game(rq_queues: Any) -> None:
    with ServerThread(local_vk()) as srv:
        old = demo_seed.seed(OPTIONS, LocalVkClient(srv.url)).game
    with ServerThread(local_vk()) as srv:  # the local VK's state file was lost
        client = LocalVkClient(srv.url)
        report = demo_seed.seed(OPTIONS, client)
        assert report.created and report.game.pk != old.pk
        assert any("lost the game's topic" in n or "потерял" in n for n in report.notes)
        old.refresh_from_db()
        assert old.status == GameStatus.FINISHED
        demo_seed.end_game(report.game, get_user_model().objects.get(username="gm"), "конец")
        newest = demo_seed.seed(OPTIONS, client)
        assert newest.created and newest.game.status == GameStatus.RUNNING
        forced = demo_seed.seed(demo_seed.SeedOptions(new_game=True), client)
        assert forced.created and forced.game.pk != newest.game.pk
    assert Game.objects.filter(status=GameStatus.RUNNING).count() == 1


def test_an_unreachable_local_vk_is_an_operator_error(rq_queues: Any) -> None:
    with pytest.raises(demo_seed.SeedError, match="does not answer"):
        demo_seed.seed(OPTIONS, LocalVkClient("http://127.0.0.1:9"), wait=0.3)
    with pytest.raises(CommandError, match="demo_seed: the local VK server"):
        call_command("demo_seed", "--vk-url", "http://127.0.0.1:9")
    with pytest.raises(VkCallError):
        LocalVkClient("http://127.0.0.1:9").call("users.get", "t")


def test_the_command_reports_what_it_did(vk: tuple[LocalVK, LocalVkClient]) -> None:
    _, client = vk
    out = StringIO()
    call_command("demo_seed", "--vk-url", client.base_url, "--day-minutes", "7",
                 "--auto-publish", stdout=out)
    assert "demo game created" in out.getvalue() and "День 1 until" in out.getvalue()
    game = Game.objects.get()
    assert game.day_length == timedelta(minutes=7) and game.auto_publish
    out = StringIO()
    call_command("demo_seed", "--vk-url", client.base_url, stdout=out)
    assert "demo game continues" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("demo_seed", "--day-minutes", "2")
