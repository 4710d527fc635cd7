"""Communities as data: credentials, the environment's row, secrets at rest, who sees what."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.db import connection

from gameplay.context import current_group, serving
from gameplay.models import Community, CommunityRole, Game, Outbox
from gameplay.models.secrets import FERNET_PREFIX
from gameplay.selectors.communities import credentials, served_group_ids
from gameplay.selectors.games import games_for
from gameplay.services import communities as svc
from gameplay.services.common import send_message

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
    assert credentials(None) == credentials(10)
    assert credentials(10).callback_secret == "env-secret"
    assert svc.community_sync_env().pk == row.pk  # idempotent
    assert Community.objects.count() == 1
    env.VK_GROUP_TOKEN = "a-new-token"
    svc.community_sync_env()
    assert credentials(10).group_token == "a-new-token"


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


def test_an_outbox_row_goes_out_as_its_game_or_the_community_served(env: Any) -> None:
    svc.community_record(vk_id=40, name="Сорок", group_token="t40", connected=True)
    game = Game.objects.create(name="g", vk_group_id=40)
    [row] = send_message(game=game, peer_ids=[5], text="x", kind="t")
    assert row.group_id == 40
    with serving(41):
        assert current_group() == 41
        [row] = send_message(game=None, peer_ids=[5], text="x", kind="t")
        assert row.group_id == 41
        [row] = send_message(game=game, peer_ids=[5], text="x", kind="t")
        assert row.group_id == 40
    assert current_group() is None
    [row] = send_message(game=None, peer_ids=[5], text="x", kind="t")
    assert row.group_id is None and Outbox.objects.count() == 4


def test_a_gm_sees_only_the_games_of_their_communities(env: Any) -> None:
    users = get_user_model().objects
    a = svc.community_record(vk_id=50, name="A", group_token="ta", connected=True)
    b = svc.community_record(vk_id=51, name="B", group_token="tb", connected=True)
    gm = users.create_user("gm", is_staff=True)
    owner = users.create_user("owner", is_staff=True)
    root = users.create_superuser("root", password="x")
    svc.community_member_set(community=a, user=gm)
    svc.community_member_set(community=b, user=owner, role=CommunityRole.OWNER)
    in_a = Game.objects.create(name="a", vk_group_id=50)
    in_a.gms.add(gm)
    in_b = Game.objects.create(name="b", vk_group_id=51)
    in_b_by_gm = Game.objects.create(name="b2", vk_group_id=51)
    in_b_by_gm.gms.add(gm)  # a GM of b's game, but not a member of b
    assert set(games_for(gm)) == {in_a}
    assert set(games_for(owner)) == {in_b, in_b_by_gm}
    assert set(games_for(root)) == {in_a, in_b, in_b_by_gm}
    svc.community_member_remove(community=a, user=gm)
    assert set(games_for(gm)) == set()
