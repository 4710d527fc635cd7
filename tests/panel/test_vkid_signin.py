"""«Войти через VK ID» on «Подключить сообщество» against the local VK's VK ID (over real
HTTP, the panel through Django's test client): the Authorization Code Flow with PKCE, the code
exchanged on the server, the same checks as a pasted key; the ``state`` bound to the session
and single-use; a forged or replayed answer, a cancelled sign-in and a deployment without a VK
ID app refused with the panel's words; «Заменить ключи» signing in again."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import AdminTokenSource, Community, CommunityMember, CommunityRole
from gameplay.models.secrets import is_encrypted
from gameplay.selectors.communities import credentials, stored_secrets
from localvk import Communities, LocalVK, RunningServer, ServerThread
from panel.signin import SESSION_KEY
from tests.vkid_support import APP_ID, aim_at, consent, path_and_query, query_of

pytestmark = pytest.mark.django_db

GROUP, OTHER = 311, 312
ADMIN, STRANGER = 700, 701


@pytest.fixture
def vk(settings: Any) -> Any:
    state = LocalVK(group_id=GROUP, group_token="g-token", user_tokens={"u-token": ADMIN},
                    group_name="Мафия VK ID")  # fmt: skip
    communities = Communities.of(state)
    communities.create(group_id=OTHER, group_token="o-token", user_tokens={"o-user": STRANGER})
    state.add_user(ADMIN, "Анна", "Админова")
    with ServerThread(communities) as server:
        aim_at(settings, server)
        yield server


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def start(client: Client, url: str | None = None, **form: str) -> str:
    """Press «Войти через VK ID»; returns VK ID's address the browser is sent to."""
    response = client.post(url or reverse("panel:community_connect"), {"how": "vkid", **form})
    assert response.status_code == 302, response.content[:500]
    return str(response["Location"])


def back(client: Client, location: str) -> Any:
    return client.get(path_and_query(location), follow=True)


def test_an_admin_signs_in_with_vk_id_and_the_community_is_connected(
    vk: RunningServer, gm: Any, gm_client: Client
) -> None:
    authorize = start(gm_client, group_token="g-token")
    query = query_of(authorize)
    assert authorize.startswith(f"{vk.url}/vkid/authorize?")
    assert query["client_id"] == str(APP_ID) and query["response_type"] == "code"
    assert query["redirect_uri"] == "http://testserver" + reverse("panel:community_vkid")
    assert query["code_challenge_method"] == "s256" and len(query["code_challenge"]) == 43
    assert "groups" in query["scope"].split()
    # Nothing secret in the address: the verifier and the community token stay on the server.
    assert "g-token" not in authorize and len(query["state"]) >= 32

    response = back(gm_client, consent(vk, authorize, user_id=ADMIN))

    row = Community.objects.get(vk_id=GROUP)
    assert response.redirect_chain[-1][0] == reverse("panel:community", kwargs={"vk_id": GROUP})
    assert messages_of(response) == [
        f"Сообщество «{row}» подключено. Остались шаги в VK — они ниже."
    ]
    assert row.connected and row.user_token_source == AdminTokenSource.VK_ID
    assert row.user_refresh_token and row.user_device_id and row.user_token_expires_at
    assert CommunityMember.objects.get(community=row, user=gm).role == CommunityRole.OWNER
    # Stored encrypted, like every token; never on the page.
    stored = {s.field: s.stored for s in stored_secrets() if s.vk_id == GROUP}
    assert {"user_token", "user_refresh_token", "user_device_id"} <= set(stored)
    assert all(is_encrypted(value) for value in stored.values())
    page = response.content.decode()
    assert "продлевается сам" in page
    for secret in (row.user_token, row.user_refresh_token, row.user_device_id, "g-token"):
        assert secret not in page
    # The bot serves it with the admin's VK ID key, which the local VK takes for the board.
    found = credentials(GROUP)
    assert found is not None and found.user_token == row.user_token
    assert vk.communities.vkid.stats()["grants"] == 1
    assert SESSION_KEY not in gm_client.session


def test_the_answer_is_single_use_and_bound_to_the_session(
    vk: RunningServer, gm: Any, gm_client: Client, other_client: Client
) -> None:
    authorize = start(gm_client, group_token="g-token")
    location = consent(vk, authorize, user_id=ADMIN)
    lost = render("refusals/vk_id_sign_in_lost")

    # Another panel user's browser cannot use it: nothing of theirs was started.
    assert messages_of(back(other_client, location)) == [lost]
    # A forged state in this session's own browser: refused, and the sign-in is used up.
    forged = location.replace(query_of(location)["state"], "forged-state-" + "x" * 30)
    assert messages_of(back(gm_client, forged)) == [lost]
    assert messages_of(back(gm_client, location)) == [lost]
    assert not Community.objects.filter(vk_id=GROUP).exists()
    assert vk.communities.vkid.stats()["grants"] == 0  # no code was ever exchanged

    # A sign-in of its own works once; the same answer again is refused.
    location = consent(vk, start(gm_client, group_token="g-token"), user_id=ADMIN)
    back(gm_client, location)
    assert Community.objects.get(vk_id=GROUP).connected
    assert messages_of(back(gm_client, location)) == [lost]
    assert vk.communities.vkid.stats()["grants"] == 1


def test_a_cancelled_sign_in_and_a_stranger_are_refused(
    vk: RunningServer, gm_client: Client
) -> None:
    location = consent(vk, start(gm_client, group_token="g-token"), user_id=ADMIN, action="deny")
    assert messages_of(back(gm_client, location)) == [render("refusals/vk_id_cancelled")]

    # The admin of another community signs in: the same check as a pasted key refuses it.
    location = consent(vk, start(gm_client, group_token="g-token"), user_id=STRANGER)
    [said] = messages_of(back(gm_client, location))
    assert "а она не администратор сообщества «Мафия VK ID»" in said
    assert not Community.objects.filter(vk_id=GROUP).exists()


def test_a_wrong_community_token_is_said_before_the_trip_to_vk_id(
    vk: RunningServer, gm_client: Client
) -> None:
    response = gm_client.post(
        reverse("panel:community_connect"), {"how": "vkid", "group_token": "nonsense"}
    )
    assert response.status_code == 200
    assert messages_of(response) == [render("refusals/community_token_invalid")]
    assert SESSION_KEY not in gm_client.session


def test_without_a_vk_id_app_the_page_offers_the_pasted_key(
    vk: RunningServer, gm_client: Client, settings: Any
) -> None:
    settings.VK_ID_APP_ID = None
    page = gm_client.get(reverse("panel:community_connect")).content.decode()
    assert 'id="vkid-sign-in"' not in page and 'id="vkid-off"' in page
    response = gm_client.post(
        reverse("panel:community_connect"), {"how": "vkid", "group_token": "g-token"}
    )
    assert messages_of(response) == [render("refusals/vk_id_not_configured")]


def test_a_pasted_key_is_marked_without_renewal(vk: RunningServer, gm_client: Client) -> None:
    response = gm_client.post(
        reverse("panel:community_connect"),
        {"how": "paste", "group_token": "g-token", "user_token": "u-token"},
        follow=True,
    )
    row = Community.objects.get(vk_id=GROUP)
    assert row.user_token_source == AdminTokenSource.PASTED and not row.user_refresh_token
    assert "без продления" in response.content.decode()


def test_signing_in_again_replaces_a_pasted_key(vk: RunningServer, gm_client: Client) -> None:
    gm_client.post(
        reverse("panel:community_connect"),
        {"how": "paste", "group_token": "g-token", "user_token": "u-token"},
        follow=True,
    )
    reconnect = reverse("panel:community_reconnect", kwargs={"vk_id": GROUP})
    location = consent(vk, start(gm_client, reconnect), user_id=ADMIN)  # the stored group key
    response = back(gm_client, location)
    row = Community.objects.get(vk_id=GROUP)
    assert row.user_token_source == AdminTokenSource.VK_ID and row.user_token != "u-token"
    assert messages_of(response) == [f"Сообщество «{row}» подключено снова."]
