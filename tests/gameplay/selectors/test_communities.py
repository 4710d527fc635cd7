"""gameplay.selectors.communities: which communities are served and with what credentials (the
environment's before and after its row), the games of the community being served, who may use
which community, and the secrets as stored."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from gameplay.context import serving
from gameplay.models import Community, CommunityRole, Game, Outbox, OutboxChannel
from gameplay.models.secrets import FERNET_PREFIX
from gameplay.selectors import communities as sel
from gameplay.services.communities import (
    community_member_set,
    community_record,
    community_sync_env,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def env(settings: Any) -> Any:
    settings.VK_GROUP_ID = 10
    settings.VK_GROUP_TOKEN = "env-group-token"
    settings.VK_USER_TOKEN = "env-user-token"
    settings.VK_CALLBACK_SECRET = "env-secret"
    settings.VK_CONFIRMATION_CODE = "abc123"
    return settings


def record(vk_id: int, *, connected: bool = True, **secrets: Any) -> Community:
    secrets.setdefault("group_token", f"t{vk_id}")
    return community_record(vk_id=vk_id, name=f"club{vk_id}", connected=connected, **secrets)


def test_without_an_environments_community_only_rows_are_served(settings: Any) -> None:
    settings.VK_GROUP_ID = None
    assert sel.env_group_id() is None and sel.default_group_id() is None
    assert sel.credentials(None) is None and sel.served() == []
    record(30)
    record(20, user_token="u20", callback_secret="s20", confirmation_code="c20")
    record(25, connected=False)
    assert sel.served_group_ids() == [20, 30]
    got = sel.credentials(20)
    assert got == sel.Credentials(20, "club20", "t20", "u20", "s20", "c20")
    assert sel.credentials(25) is None and sel.credentials(99) is None


def test_the_environments_credentials_are_the_settings_even_once_it_has_a_row(env: Any) -> None:
    assert sel.served() == [sel.Credentials(10, "", "env-group-token", "env-user-token",
                                            "env-secret", "abc123")]  # fmt: skip
    record(5)
    assert sel.served_group_ids() == [5, 10]
    row = community_sync_env()
    env.VK_GROUP_TOKEN = "changed-since"  # not written to the row yet
    served = sel.credentials(10)
    assert row is not None and served is not None
    assert served.group_token == "changed-since"
    assert served.name == row.name and sel.credentials(None) == served
    Community.objects.filter(vk_id=10).update(connected=False)
    assert sel.credentials(10) is None and sel.served_group_ids() == [5]


def test_the_credentials_never_show_a_secret() -> None:
    shown = repr(sel.Credentials(1, "Клуб", "tok-1", "tok-2", "sec-3", "code-4"))
    assert "Клуб" in shown and not any(s in shown for s in ("tok-1", "tok-2", "sec-3", "code-4"))


def test_this_community_is_the_one_served_else_the_environments(env: Any) -> None:
    assert sel.this_group_id() == 10
    with serving(7):
        assert sel.this_group_id() == 7
        assert sel.default_group_id() == 10


def test_only_the_served_communitys_games_are_in_scope(env: Any) -> None:
    record(7)
    record(8)
    ours = Game.objects.create(name="наша", vk_group_id=7)
    theirs = Game.objects.create(name="их", vk_group_id=8)
    ours_row = Outbox.objects.create(game=ours, channel=OutboxChannel.MESSAGE, text="x")
    Outbox.objects.create(game=theirs, channel=OutboxChannel.MESSAGE, text="y")
    assert set(Game.objects.filter(sel.in_served_community())) == {ours, theirs}
    assert sel.of_served_community(ours) and sel.of_served_community(theirs)
    with serving(7):
        assert list(Game.objects.filter(sel.in_served_community())) == [ours]
        assert list(Outbox.objects.filter(sel.in_served_community("game__"))) == [ours_row]
        assert sel.of_served_community(ours) and not sel.of_served_community(theirs)


def test_who_may_use_and_who_owns_which_community() -> None:
    users = get_user_model().objects
    a, b = record(50), record(51)
    gm = users.create_user("gm", is_staff=True)
    owner = users.create_user("owner", is_staff=True)
    player = users.create_user("player")
    root = users.create_superuser("root", password="x")
    community_member_set(community=a, user=gm)
    community_member_set(community=b, user=gm)
    community_member_set(community=b, user=owner, role=CommunityRole.OWNER)
    community_member_set(community=a, user=player)  # not staff: no panel at all
    assert list(sel.communities_for(gm).order_by("vk_id")) == [a, b]
    assert list(sel.communities_for(owner)) == [b]
    assert set(sel.communities_for(root)) == {a, b}
    assert list(sel.owned_by(gm)) == [] and list(sel.owned_by(owner)) == [b]
    assert set(sel.owned_by(root)) == {a, b}
    for nobody in (AnonymousUser(), player):
        assert not sel.communities_for(nobody).exists() and not sel.owned_by(nobody).exists()
    in_a = Game.objects.create(name="a", vk_group_id=50)
    in_b = Game.objects.create(name="b", vk_group_id=51)
    assert set(Game.objects.filter(sel.membership_q(gm))) == {in_a, in_b}
    assert list(Game.objects.filter(sel.owner_q(owner))) == [in_b]
    assert not Game.objects.filter(sel.owner_q(gm)).exists()


def test_secrets_are_listed_as_stored_and_those_no_key_reads(settings: Any) -> None:
    settings.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    a = record(70, user_token="u70")
    record(71, group_token="")  # nothing stored
    found = sel.stored_secrets()
    assert [(s.vk_id, s.field) for s in found] == [(70, "group_token"), (70, "user_token")]
    assert all(s.stored.startswith(FERNET_PREFIX) and "t70" not in repr(s) for s in found)
    assert found[0].where == f"community {a.pk} (VK 70) group_token"
    assert sel.stored_secrets(Community.objects.filter(vk_id=71)) == []
    assert sel.unreadable_secrets() == []
    settings.TOKEN_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    assert sel.unreadable_secrets() == found
