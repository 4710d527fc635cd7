"""Fixtures and helpers for the delivery tests: the local VK in a thread, settings aimed at
it, and a drain run in the test's own process (import the fixtures into a test module)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from gameplay import services
from gameplay.models import Actor, Game, Outbox, OutboxChannel
from gameplay.rules import RoleCounts
from localvk import LocalVK, RunningServer, ServerThread
from outbox.ratelimit import token_key
from tests.gameplay.factories import community_id
from vkbot.delivery.drain import Drainer, DrainReport

GROUP_ID = 77
GROUP_TOKEN = "delivery-group-token"
USER_TOKEN = "delivery-user-token"
ADMIN_ID = 500


def make_vk(**overrides: Any) -> LocalVK:
    """The test community with VK's own limits (20/s community token, 3/s user token)."""
    options: dict[str, Any] = {
        "group_id": GROUP_ID,
        "group_token": GROUP_TOKEN,
        "user_tokens": {USER_TOKEN: ADMIN_ID},
        "group_rps": 20,
        "user_rps": 3,
    }
    options.update(overrides)
    return LocalVK(**options)


def reset_limiters() -> None:
    import django_rq

    redis = django_rq.get_connection("vk")
    redis.delete(token_key(GROUP_TOKEN), token_key(USER_TOKEN))


@pytest.fixture(name="vk")
def vk_fixture(settings: Any) -> Iterator[RunningServer]:
    """A local VK server in a thread, and the settings pointing the delivery at it (fast
    retries: a test never waits for a backoff of seconds)."""
    with ServerThread(make_vk()) as server:
        settings.VK_API_URL = server.api_url
        settings.VK_GROUP_TOKEN = GROUP_TOKEN
        settings.VK_USER_TOKEN = USER_TOKEN
        settings.VK_GROUP_ID = GROUP_ID
        settings.OUTBOX_RETRY_BASE_MS = 20
        settings.OUTBOX_RETRY_MAX_SECONDS = 1
        reset_limiters()
        yield server
        reset_limiters()


def deliver(*, max_seconds: float = 20.0, wait_up_to: float = 5.0) -> DrainReport:
    """One drain run in this process, until nothing is due or falls due within ``wait_up_to``."""
    with Drainer() as drainer:
        return drainer.run(max_seconds=max_seconds, wait_up_to=wait_up_to)


def make_game(topic_id: int | None = None, players: int = 0, **fields: Any) -> Game:
    """A game in recruitment (``players`` signed up, VK ids 1001, 1002, …); the sign-up
    confirmations are dropped from the Outbox (not what a test sends)."""
    counts = RoleCounts.default_for(players) if players >= 4 else RoleCounts()
    fields["vk_group_id"] = community_id(fields.get("vk_group_id"))
    game = services.game_create(
        name="Машина времени", counts=counts, by=Actor.gm("test"), topic_id=topic_id, **fields
    )
    entries = [services.SignupEntry(1000 + n, f"Игрок {n}") for n in range(1, players + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    Outbox.objects.filter(game=game).delete()
    return game


def message_row(peers: list[int], text: str, game: Game | None = None, **fields: Any) -> Outbox:
    return Outbox.objects.create(
        game=game, channel=OutboxChannel.MESSAGE, peer_ids=peers, text=text, **fields
    )


def received(server: RunningServer) -> Counter[tuple[int, str]]:
    """(peer, text) of every message the server stored as sent by the community."""
    return Counter((m.peer_id, m.text) for m in server.state.sent_messages())


def requests(server: RunningServer, kind: str) -> int:
    """Top-level requests the server saw with a token kind (an ``execute`` counts once)."""
    return len(server.state.calls(token_kind=kind, include_inner=False))
