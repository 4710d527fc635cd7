"""gameplay.services.communities: the environment's row kept in step, a connection recorded with
its secrets encrypted at rest, disconnection, members, the long poll's status and the owner's
hand on the GMs (the secrets' rotation: tests/gameplay/test_secrets_rotation.py)."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.db import connection

from gameplay.models import Community, CommunityMember, CommunityRole
from gameplay.models.secrets import FERNET_PREFIX
from gameplay.refusals import NoSuchPanelUser, NotStaff, OwnerNotRemovable
from gameplay.selectors.communities import credentials, served_group_ids
from gameplay.services import communities as svc

pytestmark = pytest.mark.django_db


@pytest.fixture
def env(settings: Any) -> Any:
    settings.VK_GROUP_ID = 10
    settings.VK_GROUP_TOKEN = "env-group-token"
    settings.VK_USER_TOKEN = "env-user-token"
    settings.VK_CALLBACK_SECRET = "env-secret"
    settings.VK_CONFIRMATION_CODE = "abc123"
    return settings


def raw(column: str, vk_id: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM gameplay_community WHERE vk_id = %s", [vk_id])
        return cursor.fetchone()[0]


def test_the_environments_community_works_before_and_after_its_row(env: Any) -> None:
    before = credentials(10)
    assert before is not None and before.group_token == "env-group-token"
    assert served_group_ids() == [10]
    row = svc.community_sync_env()
    assert row is not None and row.connected and row.from_env
    after = credentials(10)
    assert credentials(None) == after
    assert after is not None and after.callback_secret == "env-secret"
    again = svc.community_sync_env()
    assert again is not None and again.pk == row.pk  # idempotent
    assert Community.objects.count() == 1
    env.VK_GROUP_TOKEN = "a-new-token"
    svc.community_sync_env()
    renewed = credentials(10)
    assert renewed is not None and renewed.group_token == "a-new-token"


def test_an_unknown_or_disconnected_community_is_not_served(env: Any) -> None:
    assert credentials(99) is None
    other = svc.community_record(vk_id=20, name="Другое", group_token="t20", connected=True)
    assert served_group_ids() == [10, 20]
    svc.community_disconnect(community=other)
    assert credentials(20) is None and served_group_ids() == [10]
    assert Community.objects.get(vk_id=20).group_token == "t20"  # kept, to connect again


def test_tokens_are_encrypted_at_rest_and_never_in_repr(env: Any) -> None:
    svc.community_record(
        vk_id=30,
        name="Х",
        group_token="vk1.a.secret-group",
        user_token="vk1.a.secret-user",
        callback_secret="cb",
        connected=True,
    )
    for column in ("group_token", "user_token", "callback_secret"):
        stored = raw(column, 30)
        assert stored.startswith(FERNET_PREFIX) and "secret" not in stored
    assert Community.objects.get(vk_id=30).group_token == "vk1.a.secret-group"
    assert "secret" not in repr(credentials(30))


def test_a_value_no_key_decrypts_reads_as_empty(env: Any, caplog: Any) -> None:
    env.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    svc.community_record(vk_id=31, name="Х", group_token="t31", connected=True)
    env.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    assert Community.objects.get(vk_id=31).group_token == ""
    assert "cannot be decrypted" in caplog.text and "t31" not in caplog.text


def test_the_first_key_encrypts_and_the_others_still_decrypt(env: Any) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    env.TOKEN_ENCRYPTION_KEYS = [old]
    svc.community_record(vk_id=32, name="Х", group_token="t32", connected=True)
    env.TOKEN_ENCRYPTION_KEYS = [new, old]
    assert Community.objects.get(vk_id=32).group_token == "t32"
    assert Fernet(old.encode()).decrypt(raw("group_token", 32).encode()) == b"t32"


# --- a connection, members and the owner's hand ------------------------------------------------


def roles(community: Community) -> dict[str, str]:
    return dict(
        CommunityMember.objects.filter(community=community).values_list("user__username", "role")
    )


def test_recording_a_connection_makes_its_first_recorder_the_owner(env: Any) -> None:
    users = get_user_model().objects
    first, second = users.create_user("first", is_staff=True), users.create_user("second")
    row = svc.community_record(
        vk_id=60, name="Клуб", group_token="t", callback_secret="s1", connected=False, by=first
    )
    assert not row.connected and row.connected_at is None
    assert roles(row) == {"first": CommunityRole.OWNER}
    again = svc.community_record(
        vk_id=60, name="Клуб 2", group_token="t2", connected=True, by=second, setup={"ok": 1}
    )
    assert again.pk == row.pk and again.connected and again.connected_at is not None
    assert (again.name, again.group_token, again.setup) == ("Клуб 2", "t2", {"ok": 1})
    assert again.callback_secret == "s1"  # not given: kept
    assert roles(row) == {"first": CommunityRole.OWNER, "second": CommunityRole.GM}


def test_disconnecting_twice_keeps_the_first_time(env: Any) -> None:
    row = svc.community_record(vk_id=61, name="Клуб", group_token="t", connected=True)
    first = svc.community_disconnect(community=row)
    second = svc.community_disconnect(community=row)
    assert not second.connected and second.disconnected_at == first.disconnected_at


def test_a_member_is_set_once_and_removed(env: Any) -> None:
    row = svc.community_record(vk_id=62, name="Клуб", group_token="t", connected=True)
    user = get_user_model().objects.create_user("gm", is_staff=True)
    svc.community_member_set(community=row, user=user)
    svc.community_member_set(community=row, user=user, role=CommunityRole.OWNER)
    assert roles(row) == {"gm": CommunityRole.OWNER}
    svc.community_member_remove(community=row, user=user)
    assert roles(row) == {}


def test_the_long_polls_status_is_written_only_when_it_changes(env: Any) -> None:
    assert svc.community_longpoll_status(vk_id=63, problem="no row") is False
    row = svc.community_record(vk_id=63, name="Клуб", group_token="t", connected=True)

    def status() -> tuple[bool, str]:
        saved = Community.objects.get(pk=row.pk).setup[svc.LONGPOLL_STATUS]
        return saved["ok"], saved["problem"]

    assert svc.community_longpoll_status(vk_id=63, problem="token refused") is True
    assert status() == (False, "token refused")
    assert svc.community_longpoll_status(vk_id=63, problem="token refused") is False
    assert svc.community_longpoll_status(vk_id=63) is True
    assert status() == (True, "")
    assert svc.community_longpoll_status(vk_id=63) is False


def test_the_owner_adds_active_staff_as_gms_and_cannot_be_removed(env: Any) -> None:
    users = get_user_model().objects
    owner = users.create_user("owner", is_staff=True)
    users.create_user("gm", is_staff=True)
    users.create_user("player")
    users.create_user("gone", is_staff=True, is_active=False)
    row = svc.community_record(vk_id=64, name="Клуб", group_token="t", connected=True, by=owner)
    for name, refusal in [("никто", NoSuchPanelUser), ("", NoSuchPanelUser),
                          ("player", NotStaff), ("gone", NotStaff)]:  # fmt: skip
        with pytest.raises(refusal):
            svc.community_gm_add(community=row, username=name)
    added = svc.community_gm_add(community=row, username=" gm ")
    assert added.role == CommunityRole.GM
    assert svc.community_gm_add(community=row, username="owner").role == CommunityRole.OWNER
    assert roles(row) == {"owner": CommunityRole.OWNER, "gm": CommunityRole.GM}
    with pytest.raises(OwnerNotRemovable):
        svc.community_gm_remove(community=row, user=owner)
    svc.community_gm_remove(community=row, user=added.user)
    assert roles(row) == {"owner": CommunityRole.OWNER}


def test_the_history_is_shared_with_other_communities_on_request(env: Any) -> None:
    row = svc.community_record(vk_id=65, name="Клуб", group_token="t", connected=True)
    assert not row.history_public
    assert svc.community_history_set(community=row, public=True).history_public
    assert Community.objects.get(pk=row.pk).history_public
    assert not svc.community_history_set(community=row, public=False).history_public
