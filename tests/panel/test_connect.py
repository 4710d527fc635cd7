"""«Подключить сообщество» against a fake of VK's API (``tests.panel.vk_fake``): the checks,
the setup calls with exactly the bot's event types, and every refusal in Russian with nothing
changed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay.messages import render
from gameplay.models import Community, CommunityMember, CommunityRole
from panel.connect import EVENT_TYPES
from tests.panel.vk_fake import MESSAGES, FakeVk

pytestmark = pytest.mark.django_db

CONNECT = reverse("panel:community_connect")


def connect(client: Client, group_token: str, user_token: str) -> Any:
    return client.post(CONNECT, {"group_token": group_token, "user_token": user_token}, follow=True)


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def test_the_event_types_are_exactly_the_bots() -> None:
    from vkbot.handlers.routes import UPDATES

    assert set(EVENT_TYPES) == set(UPDATES)


def test_connecting_a_community_sets_it_up_through_the_api(
    fake_vk: FakeVk, gm: Any, gm_client: Client
) -> None:
    group_token, user_token = fake_vk.club(101, "Мафия на Неве", admin=5)

    response = connect(gm_client, group_token, user_token)

    row = Community.objects.get(vk_id=101)
    assert response.redirect_chain[-1][0] == reverse("panel:community", kwargs={"vk_id": 101})
    assert (row.name, row.connected, row.group_token, row.user_token) == (
        "Мафия на Неве",
        True,
        group_token,
        user_token,
    )
    assert CommunityMember.objects.get(community=row).role == CommunityRole.OWNER
    assert CommunityMember.objects.get(community=row).user == gm
    [poll] = fake_vk.called("groups.setLongPollSettings")
    assert (poll["group_id"], poll["enabled"], poll["api_version"]) == (101, 1, "5.199")
    flags = {k: v for k, v in poll.items() if k not in ("group_id", "enabled", "api_version")}
    assert {k for k, v in flags.items() if v == 1} == set(EVENT_TYPES)
    assert {"wall_post_new", "message_reply", "group_join"} <= {
        k for k, v in flags.items() if v == 0
    }
    [features] = fake_vk.called("groups.setSettings")
    assert features["bots_capabilities"] == 1 and features["bots_add_to_chat"] == 1
    assert not fake_vk.called("groups.addCallbackServer")
    page = response.content.decode()
    assert "подключено" in " ".join(messages_of(response))
    assert "Long Poll API включён" in page and "Управление → Разделы" in page
    assert "Разрешить" in page  # players allow the community's messages: the checklist


@pytest.mark.parametrize(
    ("mask", "right"),
    [
        (MESSAGES, "доступ к управлению сообществом"),
        (262144, "доступ к сообщениям сообщества"),
    ],
)
def test_a_token_without_a_right_is_refused_naming_it(
    fake_vk: FakeVk, gm_client: Client, mask: int, right: str
) -> None:
    group_token, user_token = fake_vk.club(102, "Без прав", admin=6, rights=mask)

    response = connect(gm_client, group_token, user_token)

    assert response.status_code == 200
    [text] = messages_of(response)
    assert text == render("refusals/community_right_missing", right=right)
    assert f"«{right}»" in text and "Управление → Работа с API → Ключи доступа" in text
    assert not Community.objects.exists()
    assert not fake_vk.called("groups.setLongPollSettings")
    assert group_token not in response.content.decode()


@pytest.mark.parametrize(
    ("setup", "refusal", "params"),
    [
        ("wrong_group_token", "community_token_invalid", {}),
        ("wrong_user_token", "user_token_invalid", {}),
        ("group_token_as_user_token", "user_token_invalid", {}),
        ("not_admin", "user_not_community_admin", {"user": "Пётр Чужой", "community": "Клуб"}),
        ("no_offline", "user_token_right_missing", {"right": "offline"}),
        ("vk_down", "vk_unreachable", {}),
        ("vk_timeout", "vk_unreachable", {}),
        ("vk_garbage", "vk_answer_unreadable", {"step": "проверка ключа сообщества"}),
        ("poll_refused", "vk_refused_setup", {"step": "включение Long Poll API", "code": 100}),
    ],
)
def test_every_vk_failure_is_a_russian_refusal_that_changes_nothing(
    fake_vk: FakeVk, gm_client: Client, setup: str, refusal: str, params: dict
) -> None:
    group_token, user_token = fake_vk.club(103, "Клуб", admin=7)
    fake_vk.users[8] = ("Пётр", "Чужой")
    if setup == "wrong_group_token":
        group_token = "vk1.a.nonsense"
    elif setup == "wrong_user_token":
        user_token = "vk1.a.nonsense"
    elif setup == "group_token_as_user_token":
        user_token = group_token
    elif setup == "not_admin":
        user_token = "vk1.a.user8"
        fake_vk.user_tokens[user_token] = (8, 262144 | 65536)
    elif setup == "no_offline":
        fake_vk.user_tokens[user_token] = (7, 262144)
    elif setup == "vk_down":
        fake_vk.fail["groups.getById"] = "down"
    elif setup == "vk_timeout":
        fake_vk.fail["groups.getTokenPermissions"] = "timeout"
    elif setup == "vk_garbage":
        fake_vk.fail["groups.getById"] = "garbage"
    elif setup == "poll_refused":
        fake_vk.fail["groups.setLongPollSettings"] = 100

    response = connect(gm_client, group_token, user_token)

    assert response.status_code == 200
    texts = messages_of(response)
    assert len(texts) == 1 and "Traceback" not in response.content.decode()
    assert texts[0] == render(f"refusals/{refusal}", **params)
    assert not Community.objects.exists() and not CommunityMember.objects.exists()


def test_bot_features_vk_refuses_become_a_checklist_item(
    fake_vk: FakeVk, gm_client: Client
) -> None:
    group_token, user_token = fake_vk.club(104, "Клуб", admin=7)
    fake_vk.fail["groups.setSettings"] = 15

    response = connect(gm_client, group_token, user_token)

    row = Community.objects.get(vk_id=104)
    assert row.connected and "bot_features" in row.setup["todo"]
    assert "Настройки для бота: включите «Возможности ботов»" in response.content.decode()


def test_callback_mode_registers_this_server_with_a_fresh_secret(
    fake_vk: FakeVk, gm_client: Client, settings: Any
) -> None:
    settings.VK_CALLBACK_MODE = True
    settings.PUBLIC_URL = "https://mafia.example.org"
    group_token, user_token = fake_vk.club(105, "Клуб", admin=7)

    connect(gm_client, group_token, user_token)

    row = Community.objects.get(vk_id=105)
    [server] = fake_vk.called("groups.addCallbackServer")
    assert server["url"] == "https://mafia.example.org/vk/callback/"
    assert len(row.callback_secret) >= 32 and server["secret_key"] == row.callback_secret
    assert row.confirmation_code == "code105" and row.callback_server_id == 2
    [events] = fake_vk.called("groups.setCallbackSettings")
    assert events["server_id"] == 2 and events["api_version"] == "5.199"
    assert {k for k, v in events.items() if v == 1 and k != "server_id"} == set(EVENT_TYPES)
    assert not fake_vk.called("groups.setLongPollSettings")
    assert row.setup["mode"] == "callback" and "callback_confirm" in row.setup["todo"]


def test_callback_mode_without_the_public_address_is_refused(
    fake_vk: FakeVk, gm_client: Client, settings: Any
) -> None:
    settings.VK_CALLBACK_MODE, settings.PUBLIC_URL = True, ""
    group_token, user_token = fake_vk.club(106, "Клуб", admin=7)

    response = connect(gm_client, group_token, user_token)

    assert messages_of(response) == [render("refusals/callback_address_unknown")]
    assert not fake_vk.calls and not Community.objects.exists()


@pytest.mark.slow  # several connects, their VK calls waiting on each key's rate limit: `make test`
def test_a_community_another_owner_connected_is_refused_unless_superuser(
    fake_vk: FakeVk,
    gm: Any,
    other_gm: Any,
    gm_client: Client,
    other_client: Client,
    django_user_model: Any,
) -> None:
    group_token, user_token = fake_vk.club(107, "Клуб", admin=7)
    connect(gm_client, group_token, user_token)
    before = Community.objects.get(vk_id=107).setup

    response = connect(other_client, group_token, user_token)

    assert messages_of(response) == [
        render("refusals/community_owned_by_another", community="Клуб")
    ]
    assert not CommunityMember.objects.filter(user=other_gm).exists()
    assert Community.objects.get(vk_id=107).setup == before
    boss = django_user_model.objects.create_superuser("оператор", password="x")
    client = Client()
    client.force_login(boss)
    connect(client, group_token, user_token)
    owner = CommunityMember.objects.get(community__vk_id=107, role=CommunityRole.OWNER)
    assert owner.user == gm  # the operator did not take the community over


@pytest.mark.slow  # several connects, their VK calls waiting on each key's rate limit: `make test`
def test_connecting_again_keeps_the_stored_tokens_and_wants_this_communitys(
    fake_vk: FakeVk, gm_client: Client
) -> None:
    group_token, user_token = fake_vk.club(108, "Клуб", admin=7)
    other_token, _ = fake_vk.club(109, "Другой", admin=7)
    connect(gm_client, group_token, user_token)
    again = reverse("panel:community_reconnect", kwargs={"vk_id": 108})

    page = gm_client.get(again).content.decode()
    assert "Ключ сохранён" in page and group_token not in page and user_token not in page
    response = gm_client.post(again, {"group_token": other_token, "user_token": ""}, follow=True)
    assert messages_of(response) == [
        render("refusals/community_token_of_another", community="Клуб")
    ]
    assert not Community.objects.filter(vk_id=109).exists()
    response = gm_client.post(again, {"group_token": "", "user_token": ""}, follow=True)
    assert "подключено снова" in " ".join(messages_of(response))
    assert len(fake_vk.called("groups.setLongPollSettings")) == 2
    assert Community.objects.get(vk_id=108).group_token == group_token
