"""gameplay.services.admin_tokens: a community admin's token recorded (from VK ID or pasted),
renewed once when due, and refused for good: board posts wait and the GMs are told, until the
admin signs in again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gameplay import vkid
from gameplay.models import AdminTokenSource, Community, FlagKind, FlagStatus, ModerationFlag
from gameplay.services.admin_tokens import (
    RESOLVED_BY,
    AdminKey,
    admin_token_from_env,
    admin_token_refuse,
    admin_token_renew,
    admin_token_store,
)
from gameplay.services.communities import community_record
from tests.gameplay.factories import make_game

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 2, 9, 0, tzinfo=UTC)
VK_ID = 91
KEY = AdminKey(
    access_token="access-1",
    source=AdminTokenSource.VK_ID,
    refresh_token="refresh-1",
    device_id="device-1",
    expires_in=3600,
)


@pytest.fixture
def community(settings: Any) -> Community:
    """A community whose admin signed in with VK ID at ``NOW``, with a game under way."""
    settings.VK_ID_APP_ID = 777
    settings.VK_USER_TOKEN_RENEW_SECONDS = 300
    row = community_record(vk_id=VK_ID, name="Клуб", group_token="t", connected=True)
    admin_token_store(row=row, key=KEY, now=NOW)
    row.save()
    make_game(n=5, start=True, vk_group_id=VK_ID)
    return row


@pytest.fixture
def vk(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """VK ID's refresh, recorded: each call answers with the next pair."""
    calls: list[dict[str, Any]] = []

    def refresh(**kwargs: Any) -> vkid.Grant:
        calls.append(kwargs)
        n = len(calls) + 1
        return vkid.Grant(f"access-{n}", f"refresh-{n}", 7200, f"device-{n}")

    monkeypatch.setattr(vkid, "refresh", refresh)
    return calls


def stored(row: Community) -> Community:
    return Community.objects.get(pk=row.pk)


def flags(status: str = FlagStatus.OPEN) -> list[ModerationFlag]:
    return list(ModerationFlag.objects.filter(kind=FlagKind.ADMIN_KEY, status=status))


def test_a_vk_id_token_is_stored_with_what_renews_it(community: Community) -> None:
    row = stored(community)
    assert (row.user_token, row.user_refresh_token, row.user_device_id) == (
        "access-1",
        "refresh-1",
        "device-1",
    )
    assert row.user_token_issued_at == NOW and row.user_token_expires_at == NOW + timedelta(hours=1)
    admin_token_store(row=row, key=AdminKey(access_token="pasted"), now=NOW)
    assert (row.user_token_source, row.user_refresh_token, row.user_device_id) == (
        AdminTokenSource.PASTED,
        "",
        "",
    )
    assert row.user_token_expires_at is None


def test_a_token_not_due_is_used_as_it_is(community: Community, vk: list[Any]) -> None:
    got = admin_token_renew(vk_id=VK_ID, now=NOW + timedelta(minutes=50))
    assert (got.token, got.renewed, got.refused) == ("access-1", False, False)
    assert got.renew_at == NOW + timedelta(minutes=55) and vk == []
    assert admin_token_renew(vk_id=12345) == type(got)()  # no such community


def test_a_due_token_is_renewed_once(community: Community, vk: list[Any]) -> None:
    at = NOW + timedelta(minutes=56)
    got = admin_token_renew(vk_id=VK_ID, now=at)
    assert (got.token, got.renewed) == ("access-2", True)
    assert vk == [{"app_id": 777, "refresh_token": "refresh-1", "device_id": "device-1"}]
    row = stored(community)
    assert (row.user_token, row.user_refresh_token, row.user_token_renewals) == (
        "access-2",
        "refresh-2",
        1,
    )
    assert row.user_token_expires_at == at + timedelta(seconds=7200)
    again = admin_token_renew(vk_id=VK_ID, refused_token="access-1", now=at)
    assert (again.token, again.renewed) == ("access-2", False)  # renewed meanwhile
    assert len(vk) == 1


def test_a_renewal_vk_id_refuses_signs_the_admin_out_and_tells_the_gms(
    community: Community, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(**kwargs: Any) -> vkid.Grant:
        raise vkid.VkIdRefused("invalid_grant")

    monkeypatch.setattr(vkid, "refresh", refused)
    got = admin_token_renew(vk_id=VK_ID, refused_token="access-1", now=NOW)
    assert got.refused and not got.token
    row = stored(community)
    assert row.user_token_refused_at == NOW and "invalid_grant" in row.user_token_problem
    [flag] = flags()
    assert "Клуб" in flag.text and "VK ID" in flag.text
    assert admin_token_renew(vk_id=VK_ID, now=NOW).refused  # until the admin signs in again
    admin_token_store(row=row, key=KEY, now=NOW + timedelta(hours=1))
    row.save()
    assert stored(community).user_token_refused_at is None and flags() == []
    [closed] = flags(FlagStatus.ACTED)
    assert closed.resolved_by == RESOLVED_BY and "вошёл через VK ID заново" in closed.note


def test_vk_id_not_answering_keeps_the_token_for_a_later_try(
    community: Community, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(**kwargs: Any) -> vkid.Grant:
        raise vkid.VkIdUnavailable("timeout")

    monkeypatch.setattr(vkid, "refresh", unavailable)
    got = admin_token_renew(vk_id=VK_ID, now=NOW + timedelta(hours=2))
    assert (got.token, got.unavailable, got.refused) == ("access-1", True, False)
    assert stored(community).user_token_refused_at is None and flags() == []


def test_without_the_app_id_nothing_is_renewed(
    community: Community, vk: list[Any], settings: Any
) -> None:
    settings.VK_ID_APP_ID = None
    got = admin_token_renew(vk_id=VK_ID, now=NOW + timedelta(hours=2))
    assert got.unavailable and got.token == "access-1" and vk == []


def test_a_pasted_token_vk_refuses_cannot_renew_itself(community: Community) -> None:
    row = stored(community)
    admin_token_store(row=row, key=AdminKey(access_token="pasted"), now=NOW)
    row.save()
    assert admin_token_renew(vk_id=VK_ID, now=NOW).token == "pasted"
    assert admin_token_renew(vk_id=VK_ID, refused_token="pasted", now=NOW).refused
    assert stored(community).user_token_refused_at == NOW and len(flags()) == 1


def test_a_refusal_counts_only_for_the_token_in_use(community: Community) -> None:
    assert not admin_token_refuse(vk_id=VK_ID, token="an-old-one", why="error 5")
    assert not admin_token_refuse(vk_id=12345, token="access-1", why="error 5")
    assert stored(community).user_token_refused_at is None
    assert admin_token_refuse(vk_id=VK_ID, token="access-1", why="error 5", now=NOW)
    assert stored(community).user_token_problem == "error 5" and len(flags()) == 1
    assert not admin_token_refuse(vk_id=VK_ID, token="access-1", why="error 5")  # once
    assert len(flags()) == 1


def test_the_environments_token_is_taken_once_from_the_environment(settings: Any) -> None:
    row = Community(vk_id=92, name="env", from_env=True)
    settings.VK_USER_REFRESH_TOKEN = ""
    settings.VK_USER_TOKEN = "env-pasted"
    assert admin_token_from_env(row=row, now=NOW)
    assert (row.user_token, row.user_token_source) == ("env-pasted", AdminTokenSource.PASTED)
    assert not admin_token_from_env(row=row, now=NOW)
    settings.VK_USER_REFRESH_TOKEN, settings.VK_USER_DEVICE_ID = "env-refresh", "env-device"
    assert admin_token_from_env(row=row, now=NOW)
    assert (row.user_refresh_token, row.user_device_id, row.user_token_expires_at) == (
        "env-refresh",
        "env-device",
        None,
    )
    row.user_refresh_token = "renewed-since"  # VK ID took the environment's once
    assert not admin_token_from_env(row=row, now=NOW)
    assert row.user_refresh_token == "renewed-since"


def test_the_environments_refresh_token_is_spent_once_and_its_heirs_live_in_the_database(
    settings: Any,
) -> None:
    """VK_USER_REFRESH_TOKEN against the local VK's VK ID: the first start takes it, the first
    renewal spends it (VK ID would refuse it again), and a restart keeps renewing from the
    database's pair instead of handing VK ID the environment's spent one."""
    from gameplay.services.communities import community_sync_env
    from localvk import LocalVK, ServerThread
    from tests.vkid_support import APP_ID, aim_at, issue

    state = LocalVK(group_id=93, group_token="env-group", user_tokens={"declared": 990})
    with ServerThread(state) as vk:
        aim_at(settings, vk)
        grant = issue(vk, admin=990, redirect="http://testserver/panel/communities/vkid/")
        settings.VK_GROUP_ID, settings.VK_GROUP_TOKEN = 93, "env-group"
        settings.VK_USER_TOKEN = ""
        settings.VK_USER_REFRESH_TOKEN, settings.VK_USER_DEVICE_ID = (
            grant.refresh_token,
            grant.device_id,
        )
        community_sync_env()
        first = admin_token_renew(vk_id=93)  # its expiry unknown: renewed before first use
        community_sync_env()  # a restart, the environment unchanged
        row = Community.objects.get(vk_id=93)
        row.user_token_expires_at = row.user_token_issued_at  # due again
        row.save()
        second = admin_token_renew(vk_id=93)
        stats = vk.communities.vkid.stats()
        with pytest.raises(vkid.VkIdRefused):
            vkid.refresh(
                app_id=APP_ID, refresh_token=grant.refresh_token, device_id=grant.device_id
            )

    assert first.renewed and second.renewed and not second.refused
    assert stats["refreshes"] == 2 and stats["reused_refresh"] == 0
    row.refresh_from_db()
    assert row.from_env and row.user_token == second.token and row.user_token_renewals == 2
