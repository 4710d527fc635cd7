"""The pipeline with the bot's real handlers (vkbot.handlers.dispatch), not test doubles:
a private-message sign-up through the long poll, replayed after a restart, and a board vote
through the Callback API, posted twice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from vkbottle.http import SingleAiohttpClient

from gameplay import services
from gameplay.models import GameEvent, Outbox, PollState, Seat, SeatStatus, VkEvent, Vote
from gameplay.rules import RoleCounts
from localvk import running_server
from tests.async_support import wait_until
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, make_state
from tests.vkbot.ingest_support import (
    SECRET,
    VK_BASE,
    close_db_thread_connections,  # noqa: F401
    configure,
    make_game,
)
from vkbot.inbox import apply_inbox
from vkbot.longpoll import Backoff, LongPoller
from vkbot.pipeline import stored_ts
from vkbot.vkapi import make_api

SIGNER = 4242
TOPIC = 3131


async def eventually(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Wait until the (sync, database-reading) condition holds."""
    return await wait_until(
        sync_to_async(condition, thread_sensitive=True), timeout=timeout, interval=0.02
    )


def signups() -> list[tuple[str, str, bool | None]]:
    return [(s.name, s.status, s.pm_allowed) for s in Seat.objects.filter(vk_user_id=SIGNER)]


def state_of_play() -> tuple[int, int, int, int]:
    return (
        Seat.objects.count(),
        GameEvent.objects.count(),
        Outbox.objects.count(),
        VkEvent.objects.count(),
    )


@pytest.mark.django_db(transaction=True)
async def test_a_private_sign_up_through_the_long_poll_is_applied_once(settings: Any) -> None:
    async with running_server(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        # No community named: the environment's, now configured.
        await sync_to_async(services.game_create, thread_sensitive=True)(
            name="Машина времени", counts=RoleCounts.default_for(7)
        )
        srv.state.add_user(SIGNER, "Анна", "Каренина")

        def caught_up() -> bool:
            """The poller applied every event there is (the ts is stored with its batch)."""
            return stored_ts() == str(srv.state.longpoll.ts)

        def start() -> tuple[LongPoller, asyncio.Task[None]]:
            poller = LongPoller(make_api(GROUP_TOKEN), GROUP_ID, wait=1, backoff=Backoff(0.02))
            return poller, asyncio.create_task(poller.run())

        try:
            poller, task = start()
            await eventually(lambda: srv.state.calls("groups.getLongPollServer"))
            first_ts = str(srv.state.longpoll.ts)
            srv.state.inject_message(SIGNER, "участвую")
            await eventually(signups)
            await eventually(caught_up)
            poller.request_stop()
            await asyncio.wait_for(task, 5)
            after_first = await sync_to_async(state_of_play, thread_sensitive=True)()

            # A restart from an older ts: VK delivers the same update again.
            await sync_to_async(
                lambda: PollState.objects.update(ts=first_ts), thread_sensitive=True
            )()
            poller, task = start()
            await eventually(lambda: len(srv.state.calls("groups.getLongPollServer")) == 2)
            await eventually(caught_up)  # the update delivered again has been applied (again)
            poller.request_stop()
            await asyncio.wait_for(task, 5)
        finally:
            await SingleAiohttpClient().close()

    assert await sync_to_async(signups, thread_sensitive=True)() == [
        ("Анна Каренина", SeatStatus.PLAYER, True)  # the name from users.get (prefetch)
    ]
    assert await sync_to_async(state_of_play, thread_sensitive=True)() == after_first
    replies = await sync_to_async(
        lambda: list(Outbox.objects.filter(peer_ids=[SIGNER]).values_list("kind", flat=True)),
        thread_sensitive=True,
    )()
    assert replies and "internal_error" not in replies


@pytest.mark.django_db
def test_a_board_vote_posted_twice_to_the_callback_counts_once(
    settings: Any, client: Client
) -> None:
    configure(settings)
    game_id = make_game(topic_id=TOPIC)
    post = {
        "group_id": GROUP_ID, "type": "board_post_new", "event_id": "board-vote-1", "v": "5.199",
        "object": {"id": 77, "from_id": VK_BASE + 1, "date": 1_700_000_000, "text": "голос 2",
                   "topic_id": TOPIC, "topic_owner_id": -GROUP_ID},
    }  # fmt: skip

    def send(body: dict[str, Any]) -> Any:
        response = client.post("/vk/callback/", json.dumps(body), content_type="application/json")
        apply_inbox()
        return response

    assert send({**post, "secret": "wrong"}).status_code == 403
    assert not Vote.objects.exists()

    first = send({**post, "secret": SECRET})
    after_first = state_of_play()
    again = send({**post, "secret": SECRET})

    assert first.content == again.content == b"ok"
    [vote] = Vote.objects.filter(phase__game_id=game_id)
    assert (vote.voter.number, vote.target.number, vote.vk_post_id) == (1, 2, 77)
    assert state_of_play() == after_first
    assert not Outbox.objects.filter(kind="internal_error").exists()
