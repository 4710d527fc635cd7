"""The Callback endpoint's flood cap (``CALLBACK_INBOX_MAX_PER_COMMUNITY``) and its keys
(``gameplay.selectors.communities.callback_keys``): read on every request, decrypted once."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client

from gameplay.models import Community, InboundEvent
from gameplay.selectors import communities
from gameplay.services.communities import community_record
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import SECRET, configure, message_update
from vkbot import views

pytestmark = pytest.mark.django_db

URL = "/vk/callback/"
OTHER = 88


@pytest.fixture(autouse=True)
def vk_settings(settings: Any) -> None:
    configure(settings)
    settings.CALLBACK_APPLY_IN_WEB = False  # nothing applies: the inbox only grows
    settings.CALLBACK_INBOX_MAX_PER_COMMUNITY = 3
    views._full_logged.clear()


def connect(*, secret: str, **fields: Any) -> None:
    community_record(vk_id=OTHER, name="Другое", group_token="t", callback_secret=secret,
                     connected=True, **fields)  # fmt: skip


def post(client: Client, group: int, event_id: str, secret: str = SECRET) -> Any:
    update = message_update(42, "привет", event_id=event_id, group_id=group)
    body = json.dumps({**update, "secret": secret})
    return client.post(URL, data=body, content_type="application/json")


def test_a_community_at_its_cap_gets_503_nothing_is_recorded_and_it_is_logged_once(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    connect(secret="other")
    for n in range(3):
        assert post(client, GROUP_ID, f"e{n}").content == b"ok"
    assert post(client, GROUP_ID, "e1").content == b"ok"  # a retry of one waiting: not a 4th

    with caplog.at_level(logging.WARNING, logger="vkbot.views"):
        refused = [post(client, GROUP_ID, f"x{n}") for n in range(5)]
        other = post(client, OTHER, "o1", secret="other")

    assert {r.status_code for r in refused} == {503}
    assert InboundEvent.objects.filter(group_id=GROUP_ID).count() == 3
    assert other.content == b"ok"  # another community is not held back by this one's flood
    full = [r for r in caplog.records if "CALLBACK_INBOX_MAX_PER_COMMUNITY" in r.getMessage()]
    assert len(full) == 1 and str(GROUP_ID) in full[0].getMessage()

    InboundEvent.objects.filter(event_id="e0").delete()  # the applier took one
    assert post(client, GROUP_ID, "x0").content == b"ok"


def test_the_refusal_is_logged_again_after_a_minute(
    client: Client, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        post(client, GROUP_ID, f"e{n}")
    now = [1000.0]
    monkeypatch.setattr(views.time, "monotonic", lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="vkbot.views"):
        post(client, GROUP_ID, "x1")
        now[0] += 59
        post(client, GROUP_ID, "x2")
        now[0] += 2
        post(client, GROUP_ID, "x3")
    full = [r for r in caplog.records if "CALLBACK_INBOX_MAX_PER_COMMUNITY" in r.getMessage()]
    assert len(full) == 2


def test_a_changed_or_re_encrypted_secret_takes_effect_at_once(
    client: Client, settings: Any
) -> None:
    settings.CALLBACK_INBOX_MAX_PER_COMMUNITY = 100
    connect(secret="first")
    communities._decrypted.cache_clear()
    assert post(client, OTHER, "a", secret="first").content == b"ok"
    assert post(client, OTHER, "b", secret="first").content == b"ok"
    assert communities._decrypted.cache_info().misses == 1  # decrypted once, then kept

    row = Community.objects.get(vk_id=OTHER)
    row.callback_secret = "second"
    row.save()
    assert post(client, OTHER, "c", secret="first").status_code == 403
    assert post(client, OTHER, "d", secret="second").content == b"ok"

    row.save()  # the same secret encrypted anew (as rotate_token_keys does): still read
    assert post(client, OTHER, "e", secret="second").content == b"ok"

    Community.objects.filter(vk_id=OTHER).update(connected=False)
    assert post(client, OTHER, "f", secret="second").status_code == 403


def test_the_keys_are_those_credentials_gives(settings: Any) -> None:
    connect(secret="sekret-88", confirmation_code="c")
    for group in (GROUP_ID, OTHER, 12345):
        full = communities.credentials(group)
        keys = communities.callback_keys(group)
        if full is None:
            assert keys is None
            continue
        assert keys is not None
        assert (keys.group_id, keys.callback_secret, keys.confirmation_code) == (
            full.group_id, full.callback_secret, full.confirmation_code
        )  # fmt: skip
    assert "sekret-88" not in repr(communities.callback_keys(OTHER))
