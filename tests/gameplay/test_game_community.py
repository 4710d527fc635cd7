"""Every game belongs to a community, and every Outbox row of a game goes out as it: a game of
no community is refused by the database and by the services (creating a game needs membership
of its community), and Outbox rows are written one way (``queue_outbox``), which stamps each
with its game's community."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from gameplay import services
from gameplay.context import serving
from gameplay.models import Actor, Community, Game, Outbox, OutboxChannel
from gameplay.models.community import NO_COMMUNITY_VK_ID
from gameplay.refusals import CommunityRequired
from gameplay.rules import RoleCounts
from gameplay.services.replies import answer_event, board_reply, chat_reply, reply
from gameplay.services.settings import game_open
from gameplay.services.spectators import (
    spectator_chat_create,
    spectator_chat_link,
    spectator_chat_set_open,
    spectator_joined,
    spectator_request,
)
from tests.gameplay.factories import (
    civilians,
    make_game,
    number_of,
    quiet_night,
    tie_day,
    topic_of,
    vk_id,
)
from tests.gameplay.migration_support import stepwise_executor

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
#: Where the project's code writes rows (the tests write their own on purpose).
PACKAGES = ["gameplay", "outbox", "vkbot", "panel", "localvk", "demo", "bench", "ops", "config"]


def connected(vk_id: int, name: str) -> Community:
    """A community connected in the panel (no ``VK_GROUP_ID`` behind it)."""
    return Community.objects.create(vk_id=vk_id, name=name, connected=True, group_token="t")


def test_the_database_refuses_a_game_of_no_community() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Game.objects.create(name="Ничья")


def test_a_staff_user_in_no_community_creates_no_game(settings: Any) -> None:
    """A GM just removed from their community (or never in one) creates no game: not with no
    community, not with a topic of another community's board."""
    settings.VK_GROUP_ID = None
    connected(40, "Сорок")
    removed = get_user_model().objects.create_user("бывший", is_staff=True)

    with pytest.raises(CommunityRequired):
        game_open(name="Чужая", counts=RoleCounts.default_for(7), gm=removed, topic_id=42)

    assert not Game.objects.exists()


def test_a_game_made_with_no_community_named_is_the_environments(settings: Any) -> None:
    settings.VK_GROUP_ID = 10
    game = services.game_create(name="Игра", counts=RoleCounts.default_for(7), by=Actor.gm("test"))
    assert game.vk_group_id == 10
    assert Community.objects.get(vk_id=10).from_env


def test_no_environment_and_no_community_named_is_refused(settings: Any) -> None:
    settings.VK_GROUP_ID = None
    with pytest.raises(CommunityRequired):
        services.game_create(name="Игра", counts=RoleCounts.default_for(7), by=Actor.gm("test"))
    assert not Game.objects.exists()


# --- the Outbox: one way to write a row -------------------------------------------------------

_WRITES = re.compile(
    r"Outbox\s*\.\s*(?:objects|_default_manager|_base_manager)\s*\.\s*"
    r"(?:create|bulk_create|get_or_create|update_or_create)\b"
)


def test_outbox_rows_are_written_only_by_queue_outbox() -> None:
    """No code but ``gameplay.services.common.queue_outbox`` inserts Outbox rows (in plain SQL,
    ``outbox.dbrows.insert``, or through the unit of work's deferred insert of the rows it
    queued), so none skips the stamp of its game's community: nothing creates one through the
    ORM."""
    writers = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            for match in _WRITES.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                writers.append(f"{path.relative_to(ROOT)}:{line}")
    assert writers == [], writers
    common = (ROOT / "gameplay/services/common.py").read_text(encoding="utf-8")
    queue = common[common.index("def queue_outbox(") :]
    queue = queue[: queue.index("\ndef ", 1)]
    assert "dbrows.insert(rows)" in queue, "queue_outbox writes no row?"


def test_every_outbox_row_goes_out_as_its_games_community(settings: Any) -> None:
    """Two communities connected in the panel, no ``VK_GROUP_ID``: a game played through the
    services — sign-up, deal, start, a day, a night, the spectator chat created, linked and
    opened, an invite and an intruder removed, the bot's replies (some while serving the other
    community), the end — writes every kind of row, each as its game's community."""
    settings.VK_GROUP_ID = None
    connected(40, "Сорок")
    connected(41, "Сорок один")
    other = make_game(n=7, start=True, name="Соседняя", vk_group_id=41)
    game = make_game(n=7, start=True, vk_group_id=40)
    tie_day(game)
    quiet_night(game)
    spectator_chat_create(game_id=game.pk, by=Actor.gm("test"))
    spectator_chat_link(game_id=game.pk, by=Actor.gm("test"), chat=3)
    dead, alive = civilians(game)[-1], civilians(game)[0]
    services.seat_modkill(
        game_id=game.pk, seat=number_of(dead), by=Actor.gm("test"), reason="проверка"
    )
    spectator_chat_set_open(game_id=game.pk, by=Actor.gm("test"), open=True)
    spectator_request(game_id=game.pk, vk_user_id=dead.vk_user_id)
    spectator_joined(game_id=game.pk, member_id=alive.vk_user_id)  # alive: removed
    with serving(41):
        reply(vk_user_id=vk_id(1), text="ответ", game=game)
        answer_event(event_id="e1", user_id=vk_id(2), peer_id=vk_id(2), game=game.pk)
        chat_reply(peer_id=2_000_000_003, text="в беседе", game=game)
        board_reply(game_id=game.pk, topic_id=topic_of(game), text="в теме")
    services.game_end(game_id=game.pk, by=Actor.gm("test"), reason="проверка")
    services.game_end(game_id=other.pk, by=Actor.gm("test"), reason="проверка")

    rows = list(Outbox.objects.filter(game__isnull=False).select_related("game"))
    assert {r.channel for r in rows if r.game_id == game.pk} == set(OutboxChannel.values)
    stray = [
        (r.pk, r.kind, r.group_id)
        for r in rows
        if r.game is None or r.group_id != r.game.vk_group_id
    ]
    assert not stray


# --- the migration: games of no community get one ---------------------------------------------


def _migrate(targets: list[tuple[str, str]] | None = None) -> Any:
    """Migrate to ``targets`` (one of gameplay's migrations, not their squash: back from the
    squash's end needs them one by one), or to the end (through the migrations the database
    lacks, as Django picks them); the apps as they are there."""
    executor = MigrationExecutor(connection) if targets is None else stepwise_executor(connection)
    targets = executor.loader.graph.leaf_nodes() if targets is None else targets
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("env", [10, None], ids=["environment", "no-environment"])
def test_the_migration_gives_every_game_a_community(settings: Any, env: int | None) -> None:
    """A game of no community becomes the environment's (its GM that community's GM); with no
    environment's community it goes to the row of no VK community, which is never connected.
    Unsent rows of every game go out as its community; sent rows keep what they went out as."""
    settings.VK_GROUP_ID = env
    graph = stepwise_executor(connection).loader.graph
    [ours] = [key for key in graph.nodes if key[1].endswith("_games_of_no_community")]
    [before] = graph.node_map[ours].parents
    try:
        old = _migrate([before.key])
        user = old.get_model("auth", "User").objects.create(username="ведущий", is_staff=True)
        Old = old.get_model("gameplay", "Game")
        old.get_model("gameplay", "Community").objects.create(vk_id=40, connected=True)
        orphan = Old.objects.create(name="Ничья", topic_id=5)
        orphan.gms.add(user.pk)
        in_40 = Old.objects.create(name="Своя", vk_group_id=40, topic_id=5)
        rows = old.get_model("gameplay", "Outbox").objects
        waiting = rows.create(game_id=orphan.pk, channel="message", text="ждёт")
        sent = rows.create(game_id=orphan.pk, channel="message", text="ушло", status="sent")
        chat = rows.create(game_id=in_40.pk, channel="create_chat", text="беседа")

        _migrate()

        community = env if env is not None else NO_COMMUNITY_VK_ID
        row = Community.objects.get(vk_id=community)
        assert not row.connected and not row.members.exclude(user_id=user.pk).exists()
        assert row.members.filter(user_id=user.pk).exists() == (env is not None)
        assert Game.objects.get(pk=orphan.pk).vk_group_id == community
        assert Game.objects.get(pk=in_40.pk).vk_group_id == 40
        groups = dict(Outbox.objects.values_list("pk", "group_id"))
        assert groups == {waiting.pk: community, sent.pk: None, chat.pk: 40}
        with pytest.raises(IntegrityError), transaction.atomic():
            Game.objects.filter(pk=in_40.pk).update(vk_group_id=None)
    finally:
        _migrate()
