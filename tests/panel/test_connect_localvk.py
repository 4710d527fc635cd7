"""«Подключить сообщество» end to end against the local VK (localvk hosting several
communities, answering the connect flow's methods as VK does): two communities connected
through the panel's form, a third whose token lacks ``manage`` refused with the missing right
named."""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import Community, CommunityMember, CommunityRole
from localvk import Communities, LocalVK, ServerThread
from panel.connect import EVENT_TYPES

pytestmark = pytest.mark.django_db

A, B, C = 301, 302, 303


def _connect(client: Client, group_token: str, user_token: str) -> list[str]:
    response = client.post(
        reverse("panel:community_connect"),
        {"group_token": group_token, "user_token": user_token},
        follow=True,
    )
    assert response.status_code == 200
    return [str(m) for m in response.context["messages"]]


def test_two_communities_connect_through_the_panel_and_a_token_without_manage_is_refused(
    gm: Any, gm_client: Client, settings: Any
) -> None:
    state = LocalVK(group_id=A, group_token="a-group", user_tokens=["a-user"], group_name="Мафия А")
    communities = Communities.of(state)
    communities.create(
        group_id=B, group_token="b-group", user_tokens=["b-user"], group_name="Мафия Б"
    )
    communities.create(
        group_id=C,
        group_token="c-group",
        user_tokens=["c-user"],
        group_name="Без управления",
        scopes="messages",
    )
    with ServerThread(communities) as vk:
        settings.VK_API_URL = vk.api_url

        assert "подключено" in " ".join(_connect(gm_client, "a-group", "a-user"))
        assert "подключено" in " ".join(_connect(gm_client, "b-group", "b-user"))
        refused = _connect(gm_client, "c-group", "c-user")

        for token in ("a-group", "b-group"):
            api = vk.vk_api(token)
            group_id = A if token == "a-group" else B
            answer = async_to_sync(api.request)(
                "groups.getLongPollSettings", {"group_id": group_id}
            )["response"]
            events = {k for k, v in answer["events"].items() if v}
            assert answer["is_enabled"] and events == set(EVENT_TYPES), token

    assert refused == [
        render("refusals/community_right_missing", right="доступ к управлению сообществом")
    ]
    rows = {c.vk_id: c for c in Community.objects.all()}
    assert set(rows) == {A, B}
    assert rows[A].name == "Мафия А" and rows[B].group_token == "b-group"
    assert all(rows[k].connected for k in (A, B))
    assert set(
        CommunityMember.objects.filter(user=gm, role=CommunityRole.OWNER).values_list(
            "community__vk_id", flat=True
        )
    ) == {A, B}


def test_a_second_attempt_right_after_the_first_waits_for_the_user_tokens_limiter(
    gm_client: Client, settings: Any
) -> None:
    """The connect checks' calls go through their tokens' shared limiters (VK's 3 a second for
    a user token): connecting, then at once connecting again, is never refused with error 6
    (which the panel would word as a missing right)."""
    run = str(time.time_ns())
    state = LocalVK(group_id=A, group_token=f"a-group-{run}", user_tokens=[f"a-user-{run}"],
                    group_name="Мафия А", user_rps=3, group_rps=20)  # fmt: skip
    with ServerThread(state) as vk:
        settings.VK_API_URL = vk.api_url
        first = _connect(gm_client, f"a-group-{run}", f"a-user-{run}")
        again = gm_client.post(
            reverse("panel:community_reconnect", kwargs={"vk_id": A}),
            {"group_token": f"a-group-{run}", "user_token": f"a-user-{run}"},
            follow=True,
        )
        said = [str(m) for m in again.context["messages"]]

    assert "подключено" in " ".join(first) and said == ["Сообщество «Мафия А» подключено снова."]
    assert not [c for c in state.calls() if c.error and c.error.get("error_code") == 6]
    assert state.max_requests_per_second("user") <= 3
