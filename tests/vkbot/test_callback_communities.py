"""The Callback API endpoint with two communities: each event is routed by its ``group_id`` to
that community's confirmation code and secret and applied for it; a disconnected or unknown
community is refused; an event id is applied once within each community."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client

from gameplay.context import current_group
from gameplay.models import Community, VkEvent
from gameplay.services.communities import (
    community_disconnect,
    community_record,
    community_sync_env,
)
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import (
    CONFIRMATION_CODE,
    SECRET,
    configure,
    message_update,
    use_dispatch,
)
from vkbot.inbox import apply_inbox
from vkbot.pipeline import LONGPOLL, apply_updates

pytestmark = pytest.mark.django_db

URL = "/vk/callback/"
A, B = GROUP_ID, 88
SECRET_B, CODE_B = "secret-of-b", "code-of-b"


@pytest.fixture
def seen(settings: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int | None, str]]:
    configure(settings)
    community_record(vk_id=B, name="Второе", group_token="token-b", callback_secret=SECRET_B,
                     confirmation_code=CODE_B, connected=True)  # fmt: skip
    applied: list[tuple[int | None, str]] = []
    use_dispatch(monkeypatch, lambda u: applied.append((current_group(), u["event_id"])))
    return applied


def post(client: Client, body: dict[str, Any]) -> Any:
    """POST ``body`` to the endpoint, then run the applier as the web process's thread would."""
    response = client.post(URL, data=json.dumps(body), content_type="application/json")
    apply_inbox()
    return response


def event(group: int, event_id: str, secret: str) -> dict[str, Any]:
    return {**message_update(42, "привет", event_id=event_id, group_id=group), "secret": secret}


def test_each_community_is_confirmed_with_its_own_code(client: Client, seen: list) -> None:
    for group, code in ((A, CONFIRMATION_CODE), (B, CODE_B)):
        response = post(client, {"type": "confirmation", "group_id": group})
        assert (response.status_code, response.content.decode()) == (200, code)
    assert post(client, {"type": "confirmation", "group_id": 99}).status_code == 403


def test_each_event_needs_its_communitys_secret_and_is_applied_for_it(
    client: Client, seen: list, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        assert post(client, event(B, "b-1", SECRET)).status_code == 403  # A's secret
        assert post(client, event(A, "a-1", SECRET_B)).status_code == 403  # B's secret
    assert seen == [] and not VkEvent.objects.exists()
    assert SECRET not in caplog.text and SECRET_B not in caplog.text

    assert post(client, event(B, "b-1", SECRET_B)).content == b"ok"
    assert post(client, event(A, "a-1", SECRET)).content == b"ok"
    assert seen == [(B, "b-1"), (A, "a-1")]


def test_the_same_event_id_in_two_communities_is_two_events(client: Client, seen: list) -> None:
    for _ in range(2):
        assert post(client, event(A, "same", SECRET)).content == b"ok"
        assert post(client, event(B, "same", SECRET_B)).content == b"ok"
    assert seen == [(A, "same"), (B, "same")]
    assert sorted(VkEvent.objects.values_list("group_id", "event_id")) == [(A, "same"), (B, "same")]


def test_a_disconnected_or_unknown_community_is_refused(client: Client, seen: list) -> None:
    community_disconnect(community=Community.objects.get(vk_id=B))
    assert post(client, event(B, "b-2", SECRET_B)).status_code == 403
    assert post(client, {"type": "confirmation", "group_id": B}).status_code == 403
    assert post(client, event(99, "x-1", SECRET)).status_code == 403
    assert seen == [] and not VkEvent.objects.exists()
    assert post(client, event(A, "a-2", SECRET)).content == b"ok"  # the other goes on


def test_the_long_poll_records_events_within_its_community(seen: list) -> None:
    a_update = message_update(42, "привет", event_id="lp-1", group_id=A)
    b_update = message_update(42, "привет", event_id="lp-1", group_id=B)
    assert apply_updates([a_update], "10", source=LONGPOLL, group_id=A) == 1
    assert apply_updates([b_update], "20", source=LONGPOLL, group_id=B) == 1
    assert apply_updates([a_update, b_update], "21", source=LONGPOLL, group_id=B) == 0
    assert seen == [(A, "lp-1"), (B, "lp-1")]


def test_the_environments_community_answers_with_the_environments_secret(
    client: Client, seen: list, settings: Any
) -> None:
    """A web process restarted with a new secret uses it at once, though runbot wrote the old
    one into the environment's row."""
    community_sync_env()
    settings.VK_CALLBACK_SECRET = "rotated-secret"
    assert post(client, event(A, "a-3", SECRET)).status_code == 403
    assert post(client, event(A, "a-3", "rotated-secret")).content == b"ok"
    assert seen == [(A, "a-3")]
