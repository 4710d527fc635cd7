"""``demo_seed``: the demo games (one per game community) are set up through the services and
the local VK's API, once; later runs continue them, give an overdue phase time again, or start
anew when they must. The connectable community is in the local VK only.

The first run on an empty database is done once for the module (:func:`seeded`, its rows in a
transaction rolled back at the module's end; each test runs in a savepoint of it) and its local
VK saved with the local VK's own persistence (:mod:`localvk.persist`, what the demo keeps across
restarts); each test gets that state back in a server of its own. The command's first run on an
empty database is test_seed_command's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import django_rq
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from demo import config
from demo import seed as demo_seed
from demo.vk import LocalVkClient, VkCallError
from gameplay.models import (
    Community,
    CommunityMember,
    CommunityRole,
    Game,
    GameEvent,
    GameStatus,
    Outbox,
    Phase,
    PollState,
    Seat,
)
from gameplay.rules import Role
from localvk import LocalVK, ServerThread
from localvk.communities import Communities
from localvk.persist import export_state, fingerprint, import_state
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY
from tests.demo.seed_support import debug_on, drain_flags, local_vk  # noqa: F401 - fixtures
from tests.gameplay.factories import deadline_of, recruit_topic_of, topic_of
from tests.module_db import module_transaction

pytestmark = pytest.mark.django_db


OPTIONS = demo_seed.SeedOptions(seed="seed-test")


@dataclass(frozen=True)
class Seeded:
    """The first run on an empty database: its report and its local VK's saved state."""

    report: demo_seed.SeedReport
    state: dict[str, Any]
    fingerprint: tuple[Any, ...]


@pytest.fixture(scope="module")
def seeded_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[Seeded]:
    """:func:`demo_seed.seed` run once on the empty test database, in a transaction that stays
    open for the module (the tests run in savepoints of it) and is rolled back at its end."""
    with module_transaction(django_db_blocker):
        with django_db_blocker.unblock(), override_settings(DEBUG=True):
            with ServerThread(local_vk()) as srv:
                report = demo_seed.seed(OPTIONS, LocalVkClient(srv.url))
                saved = Seeded(report, export_state(srv.state), fingerprint(srv.state))
            # The seed enqueued a drain; the tests start with the queue empty.
            queue = django_rq.get_queue(django_settings.OUTBOX_DELIVERY_QUEUE)
            queue.empty()
            queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
        yield saved


@pytest.fixture
def seeded(seeded_once: Seeded) -> demo_seed.SeedReport:
    """The first run's report (a copy: a test may change its objects)."""
    return copy.deepcopy(seeded_once.report)


@pytest.fixture
def vk(seeded_once: Seeded, rq_queues: Any) -> Iterator[tuple[LocalVK, LocalVkClient]]:
    """A local VK server holding what the first run left there."""
    state = local_vk()
    import_state(state, seeded_once.state)
    assert fingerprint(state) == seeded_once.fingerprint
    with ServerThread(state) as srv:
        yield srv.state, LocalVkClient(srv.url)


def test_the_first_run_sets_up_a_running_26_player_game(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    state, _ = vk
    report = seeded
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
    assert state.topic(recruit_topic_of(game)).title.startswith("Набор")
    assert state.topic(topic_of(game)).title == f"Игра «{config.GAME_NAME}»"
    assert game.spectator_chat_id is not None
    assert game.spectator_chat_id - 2_000_000_000 in state.chats
    assert len(state.users) == config.all_users_count()
    # The GM can log in; role cards and the Day 1 prompts wait for the worker.
    gm = get_user_model().objects.get(username="gm")
    assert gm.is_staff and gm.check_password("gm") and game.gms.filter(pk=gm.pk).exists()
    kinds = set(Outbox.objects.filter(game=game).values_list("kind", flat=True))
    assert {"role_card", "roster", "day_opened", "day_prompt"} <= kinds
    assert Phase.objects.get(game=game).number == 1
    # The bot will start polling where the setup left the long poll.
    assert PollState.objects.get(group_id=config.GROUP_ID).ts == str(state.longpoll.ts)


def test_a_second_run_continues_the_same_game(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    state, client = vk
    first = seeded.game
    events = GameEvent.objects.filter(game=first).count()
    topics = len(state.topics)
    again = demo_seed.seed(demo_seed.SeedOptions(gm_password="other"), client)
    assert not again.created and again.notes == []
    assert again.game.pk == first.pk and Game.objects.count() == len(config.GAME_COMMUNITIES)
    assert GameEvent.objects.filter(game=first).count() == events
    assert len(state.topics) == topics
    assert get_user_model().objects.get(username="gm").check_password("other")


def test_an_overdue_phase_gets_its_time_again(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    _, client = vk
    game = seeded.game
    Phase.objects.filter(game=game).update(deadline=timezone.now() - timedelta(hours=3))
    report = demo_seed.seed(OPTIONS, client)
    assert report.game.pk == game.pk
    assert any("extended by 5 min" in note for note in report.notes)
    phase = Phase.objects.get(game=game)
    assert deadline_of(phase) > timezone.now() + timedelta(minutes=4)
    assert GameEvent.objects.filter(game=game, kind="deadline_extended").count() == 1
    assert "День 1 until" in demo_seed.describe(game)


def test_a_lost_local_vk_or_an_ended_game_means_a_new_game(
    seeded: demo_seed.SeedReport, rq_queues: Any
) -> None:
    old = seeded.game  # seeded in a local VK whose state file was then lost:
    with ServerThread(local_vk()) as srv:
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
    assert Game.objects.filter(status=GameStatus.RUNNING).count() == len(config.GAME_COMMUNITIES)


def test_an_unreachable_local_vk_is_an_operator_error(rq_queues: Any) -> None:
    with pytest.raises(demo_seed.SeedError, match="does not answer"):
        demo_seed.seed(OPTIONS, LocalVkClient("http://127.0.0.1:9"), wait=0.3)
    with pytest.raises(CommandError, match="demo_seed: the local VK server"):
        call_command("demo_seed", "--vk-url", "http://127.0.0.1:9")
    with pytest.raises(VkCallError):
        LocalVkClient("http://127.0.0.1:9").call("users.get", "t")


def test_each_game_community_gets_its_connected_row_and_its_own_game(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    state, _ = vk
    report = seeded
    gm = get_user_model().objects.get(username="gm")
    assert [r.community for r in report.games] == list(config.GAME_COMMUNITIES)
    registry = Communities.of(state)
    for r in report.games:
        community, game = r.community, r.game
        row = Community.objects.get(vk_id=community.group_id)
        assert row.connected and row.name == community.name
        assert (row.group_token, row.user_token) == (community.group_token, community.user_token)
        assert CommunityMember.objects.get(community=row, user=gm).role == CommunityRole.OWNER
        assert r.created and game.status == GameStatus.RUNNING
        assert game.vk_group_id == community.group_id and game.name == community.game_name
        assert game.theme == community.theme
        seats = Seat.objects.filter(game=game).order_by("number")
        assert [s.vk_user_id for s in seats] == config.player_ids(community)
        # Its topics and spectator chat are in its own community of the local VK.
        hosted = registry.get(community.group_id)
        assert hosted.topic(topic_of(game)).title == f"Игра «{community.game_name}»"
        assert game.spectator_chat_id is not None
        assert game.spectator_chat_id - 2_000_000_000 in hosted.chats
        assert PollState.objects.get(group_id=community.group_id).ts == str(hosted.longpoll.ts)
        assert set(Outbox.objects.filter(game=game).values_list("group_id", flat=True)) == {
            community.group_id
        }
    classic = report.games[1].game
    assert classic.theme == "classic" and Seat.objects.filter(game=classic).count() == 12
    assert (
        sorted(Seat.objects.filter(game=classic).values_list("role", flat=True)).count(Role.MAFIA)
        == 3
    )
    # No player sits in both games.
    assert not set(config.player_ids(config.MAIN)) & set(config.player_ids(config.CLASSIC))


def test_the_connectable_community_is_in_the_local_vk_only(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    state, client = vk
    assert not Community.objects.filter(vk_id=config.CONNECT.group_id).exists()
    hosted = Communities.of(state).get(config.CONNECT.group_id)
    assert hosted.group_name == config.CONNECT.name
    assert set(hosted.group_tokens) == {config.CONNECT.group_token, config.CONNECT_WEAK_TOKEN}
    assert "manage" in hosted.group_tokens[config.CONNECT.group_token]
    assert set(hosted.group_tokens[config.CONNECT_WEAK_TOKEN]) == set(config.CONNECT_WEAK_SCOPES)
    assert config.CONNECT.user_token in hosted.user_tokens
    # Through the API, as the panel checks it: the weak token lacks «manage».
    weak = client.call("groups.getTokenPermissions", config.CONNECT_WEAK_TOKEN)
    strong = client.call("groups.getTokenPermissions", config.CONNECT.group_token)
    assert "manage" not in {p["name"] for p in weak["permissions"]}
    assert "manage" in {p["name"] for p in strong["permissions"]}
    # A second run adds nothing twice.
    demo_seed.seed(OPTIONS, client)
    assert len(Communities.of(state).get(config.CONNECT.group_id).group_tokens) == 2
    assert [c["group_id"] for c in client.communities()] == [c.group_id for c in config.COMMUNITIES]


def test_re_seeding_resumes_both_games(
    seeded: demo_seed.SeedReport, vk: tuple[LocalVK, LocalVkClient]
) -> None:
    state, client = vk
    first = seeded
    Phase.objects.filter(game=first.games[1].game).update(
        deadline=timezone.now() - timedelta(hours=1)
    )
    topics = {
        c.group_id: len(Communities.of(state).get(c.group_id).topics)
        for c in config.GAME_COMMUNITIES
    }
    again = demo_seed.seed(OPTIONS, client)
    assert [r.game.pk for r in again.games] == [r.game.pk for r in first.games]
    assert not any(r.created for r in again.games)
    assert again.games[0].notes == []
    assert any("extended by 5 min" in note for note in again.games[1].notes)
    assert {
        c.group_id: len(Communities.of(state).get(c.group_id).topics)
        for c in config.GAME_COMMUNITIES
    } == topics
    assert Community.objects.filter(connected=True).count() == len(config.GAME_COMMUNITIES)
    # --new-game starts both anew.
    forced = demo_seed.seed(demo_seed.SeedOptions(new_game=True), client)
    assert all(r.created for r in forced.games)
    assert {r.game.pk for r in forced.games}.isdisjoint({r.game.pk for r in first.games})
