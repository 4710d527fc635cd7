"""The bot's own requests on the community token (the facts of sign-ups, the long-poll server)
wait for the token's shared rate limiter, the one the delivery uses: a burst of sign-ups in the
recruitment topic stays within VK's limit instead of tripping error 6 (which left players
named ``id123``)."""

from __future__ import annotations

import secrets
from typing import Any

from vkbottle.http import SingleAiohttpClient

from localvk import running_server
from outbox.ratelimit import limiter_for
from tests.localvk.support import GROUP_ID, make_state
from tests.vkbot.ingest_support import configure
from vkbot.polling import DatabasePolling
from vkbot.prefetch import prefetch
from vkbot.vkapi import make_api

RPS = 4
SIGNERS = range(7001, 7006)


def board_signup(user_id: int) -> dict[str, Any]:
    return {
        "type": "board_post_new", "event_id": f"signup-{user_id}", "v": "5.199",
        "group_id": GROUP_ID,
        "object": {"id": user_id, "from_id": user_id, "date": 1, "text": "+", "topic_id": 5,
                   "topic_owner_id": -GROUP_ID},
    }  # fmt: skip


async def test_a_burst_of_board_sign_ups_keeps_within_the_community_token_limit(
    settings: Any,
) -> None:
    token = f"group-{secrets.token_hex(4)}"  # a limiter of its own in a shared Redis
    async with running_server(make_state(group_token=token, group_rps=RPS)) as srv:
        configure(settings, api_url=srv.api_url)
        settings.VK_GROUP_TOKEN = token
        settings.VK_GROUP_RPS = RPS
        for user_id in SIGNERS:
            srv.state.add_user(user_id, "Имя", f"Фамилия{user_id}")
        api = make_api(token)
        try:
            polling = DatabasePolling(
                api=api, group_id=GROUP_ID, start_ts=None, wait=1, persist=_nothing
            )
            await polling.get_server()
            # each sign-up asks users.get and messages.isMessagesFromGroupAllowed
            facts = [await prefetch(api, board_signup(u), group_id=GROUP_ID) for u in SIGNERS]
        finally:
            await SingleAiohttpClient().close()
            limiter_for(token, "group").reset()

    asked = [f for f in facts if f is not None]
    assert len(asked) == len(facts)  # every sign-up asked VK
    assert [f.names for f in asked] == [{u: f"Имя Фамилия{u}"} for u in SIGNERS]
    assert [f.pm_allowed for f in asked] == [{u: True} for u in SIGNERS]
    calls = srv.state.calls(token_kind="group")
    assert len(calls) == 1 + 2 * len(SIGNERS)
    assert not [c.error for c in calls if c.error]
    assert srv.state.max_requests_per_second("group") <= RPS


async def _nothing(ts: str) -> None:
    return None
