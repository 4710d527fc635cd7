"""The Callback API endpoint (POST /vk/callback/) through Django's test client."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import Outbox, VkEvent
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import (
    CONFIRMATION_CODE,
    SECRET,
    VK_BASE,
    configure,
    make_game,
    message_update,
    snapshot,
    use_dispatch,
    vote_dispatch,
    vote_events,
    votes_cast,
)
from vkbot.inbox import apply_inbox

pytestmark = pytest.mark.django_db

URL = "/vk/callback/"


@pytest.fixture(autouse=True)
def vk_settings(settings: Any) -> None:
    configure(settings)


@pytest.fixture
def game_id(monkeypatch: pytest.MonkeyPatch) -> int:
    game = make_game()
    use_dispatch(monkeypatch, vote_dispatch(game))
    return game


def post(client: Client, body: Any, **headers: str) -> Any:
    """POST ``body`` to the endpoint, then run the applier as the web process's thread would."""
    data = body if isinstance(body, bytes | str) else json.dumps(body, ensure_ascii=False)
    response = client.post(URL, data=data, content_type="application/json", headers=headers)
    apply_inbox()
    return response


def signed(update: dict[str, Any], secret: str = SECRET) -> dict[str, Any]:
    return {**update, "secret": secret}


def test_the_url_is_mounted() -> None:
    assert reverse("vkbot:callback") == URL


def test_confirmation_answers_the_code(client: Client) -> None:
    response = post(client, {"type": "confirmation", "group_id": GROUP_ID})
    assert response.status_code == 200
    assert response.content.decode() == CONFIRMATION_CODE
    assert response["Content-Type"].startswith("text/plain")
    assert not VkEvent.objects.exists()


def test_confirmation_for_another_community_is_refused(client: Client) -> None:
    response = post(client, {"type": "confirmation", "group_id": GROUP_ID + 1})
    assert response.status_code == 403
    assert CONFIRMATION_CODE not in response.content.decode()


def test_confirmation_without_a_configured_code_is_refused(client: Client, settings: Any) -> None:
    settings.VK_CONFIRMATION_CODE = ""
    assert post(client, {"type": "confirmation", "group_id": GROUP_ID}).status_code == 403


def test_the_same_event_posted_twice_changes_the_game_once(
    client: Client, game_id: int, caplog: pytest.LogCaptureFixture
) -> None:
    event = signed(message_update(VK_BASE + 1, "голос 4", event_id="cb-1"))

    first = post(client, event)
    after_first = snapshot(game_id)
    with caplog.at_level(logging.INFO, logger="vkbot.views"):
        again = post(client, event, **{"X-Retry-Counter": "1"})

    assert (first.status_code, first.content) == (200, b"ok")
    assert (again.status_code, again.content) == (200, b"ok")
    assert snapshot(game_id) == after_first
    assert votes_cast(game_id) == 1 and vote_events(game_id) == 1
    assert VkEvent.objects.get().source == "callback"
    assert "retry 1" in caplog.text


@pytest.mark.parametrize("secret", ["wrong", "", None, 12345, SECRET + "x", SECRET.upper()])
def test_a_wrong_or_missing_secret_gets_403_and_changes_nothing(
    client: Client, game_id: int, secret: Any
) -> None:
    update = message_update(VK_BASE + 1, "голос 4", event_id="cb-2")
    body = update if secret is None else {**update, "secret": secret}
    before = snapshot(game_id)

    response = post(client, body)

    assert response.status_code == 403
    assert snapshot(game_id) == before
    # The same event with the right secret is still applied afterwards.
    assert post(client, signed(update)).status_code == 200
    assert votes_cast(game_id) == 1


def test_no_configured_secret_refuses_every_event(
    client: Client, game_id: int, settings: Any
) -> None:
    settings.VK_CALLBACK_SECRET = ""
    before = snapshot(game_id)
    response = post(client, {**message_update(VK_BASE + 1, "голос 4"), "secret": ""})
    assert response.status_code == 403 and snapshot(game_id) == before


def test_an_event_for_another_community_gets_403(client: Client, game_id: int) -> None:
    before = snapshot(game_id)
    event = signed(message_update(VK_BASE + 1, "голос 4", group_id=GROUP_ID + 1))
    assert post(client, event).status_code == 403
    assert snapshot(game_id) == before


@pytest.mark.parametrize("group_id", [10**30, -(10**30), 2**63, -(2**63) - 1])
def test_a_group_id_no_database_column_holds_gets_403(
    client: Client, game_id: int, group_id: int
) -> None:
    """Beyond a 64-bit integer: no community has it, on either database (SQLite would not
    take it as a parameter at all)."""
    before = snapshot(game_id)
    event = signed(message_update(VK_BASE + 1, "голос 4", group_id=group_id))
    assert post(client, event).status_code == 403
    assert snapshot(game_id) == before


@pytest.mark.parametrize(
    "body",
    [b"", b"{not json", b"\xff\xfe\x00garbage", "[1, 2]", "42", '"ok"', "null",
     json.dumps({"group_id": GROUP_ID, "secret": SECRET}),
     json.dumps({"type": "", "group_id": GROUP_ID, "secret": SECRET}),
     json.dumps({"type": ["message_new"], "group_id": GROUP_ID, "secret": SECRET})],
)  # fmt: skip
def test_malformed_bodies_get_400(client: Client, game_id: int, body: Any) -> None:
    before = snapshot(game_id)
    response = post(client, body)
    assert response.status_code == 400
    assert snapshot(game_id) == before


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400", "-1e400"])
@pytest.mark.parametrize("kind", ["confirmation", "message_new"])
def test_non_standard_json_numbers_are_a_400(
    client: Client, game_id: int, kind: str, number: str
) -> None:
    before = snapshot(game_id)
    body = f'{{"type": "{kind}", "secret": "{SECRET}", "group_id": {number}}}'

    response = post(client, body)

    assert response.status_code == 400
    assert snapshot(game_id) == before
    assert not VkEvent.objects.exists()


def test_non_standard_json_deep_inside_an_event_is_a_400(client: Client, game_id: int) -> None:
    event = signed(message_update(1001, "проверка 3"))
    event["object"]["extra"] = "NUMBER"
    body = json.dumps(event).replace('"NUMBER"', "[1, NaN]")

    assert post(client, body).status_code == 400
    assert not VkEvent.objects.exists()


def test_only_post_is_allowed(client: Client) -> None:
    assert client.get(URL).status_code == 405


def test_the_handler_gets_the_update_without_the_secret(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, seen.append)
    update = message_update(42, "привет", event_id="cb-3")
    assert post(client, signed(update)).status_code == 200
    assert seen == [update]


def test_odd_but_valid_events_are_answered_ok(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, seen.append)
    odd = {"type": "group_change_photo", "group_id": GROUP_ID, "object": None, "secret": SECRET}
    assert post(client, odd).content == b"ok"
    assert post(client, odd).content == b"ok"  # no event_id: the derived id de-duplicates
    assert len(seen) == 1 and VkEvent.objects.count() == 1


def test_a_crashing_handler_still_answers_ok_and_apologises(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(update: dict[str, Any]) -> None:
        raise KeyError("bug")

    use_dispatch(monkeypatch, crash)
    response = post(client, signed(message_update(77, "статус", event_id="cb-4")))
    assert (response.status_code, response.content) == (200, b"ok")
    [apology] = Outbox.objects.all()
    assert apology.peer_ids == [77] and apology.text == render("player/internal_error")
    assert VkEvent.objects.filter(event_id="cb-4").exists()


# --- untrusted bytes: size and nesting are refused before anything else -----------------------


@pytest.mark.parametrize("depth", [40, 5_000, 30_000])
def test_deeply_nested_json_is_a_400(client: Client, depth: int) -> None:
    response = post(client, "[" * depth + "]" * depth)

    assert response.status_code == 400
    assert not VkEvent.objects.exists()


def test_deep_nesting_inside_a_signed_event_is_a_400(client: Client) -> None:
    event = signed(message_update(1001, "проверка 3"))
    event["object"]["extra"] = "NESTED"
    body = json.dumps(event).replace('"NESTED"', '{"a": ' * 2_000 + "1" + "}" * 2_000)

    response = post(client, body)

    assert response.status_code == 400
    assert not VkEvent.objects.exists()


def test_a_body_over_64_kib_is_a_413(client: Client) -> None:
    event = signed(message_update(1001, "x" * (64 * 1024)))

    response = post(client, event)

    assert response.status_code == 413
    assert not VkEvent.objects.exists()


def test_a_body_just_under_the_cap_is_read(client: Client, game_id: int) -> None:
    event = signed(message_update(1001, "проверка 3"))
    event["object"]["padding"] = "y" * (60 * 1024)

    response = post(client, event)

    assert response.status_code == 200
    assert VkEvent.objects.count() == 1
