"""«Подключить сообщество» end to end against the local VK (localvk hosting several
communities, answering the connect flow's methods as VK does): two communities connected
through the panel's form, a third whose token lacks ``manage`` refused with the missing right
named (issue 14, items 2 and 5)."""

from __future__ import annotations

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
