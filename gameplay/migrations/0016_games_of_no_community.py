"""Every game gets a community (the next migration makes it a database constraint).

A game of no community went out as the environment's community (``VK_GROUP_ID``), so that is
the one it gets, created as 0012 created communities (disconnected, no tokens: the environment
fills them in on start); whoever ran it becomes one of that community's GMs, as in 0012.

Without ``VK_GROUP_ID`` such a game's messages never went anywhere (nothing sent rows of no
community), and no other community can be presumed its own: giving it one would send its
waiting messages as that community, the very leak this closes. It goes to the row that stands
for no VK community (``NO_COMMUNITY_VK_ID``): never connected, so nothing of those games
reaches VK, and no one is its member, so only operators see them.

An Outbox row of a game not yet sent (pending or failed) goes out as the game's community
(a spectator chat request written without one waited forever); sent rows keep what they
went out as.
"""

from django.conf import settings
from django.db import migrations

NO_COMMUNITY_VK_ID = 0  # gameplay.models.community.NO_COMMUNITY_VK_ID
NO_COMMUNITY_NAME = "Без сообщества VK"  # gameplay.models.community.NO_COMMUNITY_NAME
UNSENT = ["pending", "failed"]


def communities_of_games_of_none(apps, schema_editor):  # noqa: ANN001, ANN201
    Game = apps.get_model("gameplay", "Game")
    Community = apps.get_model("gameplay", "Community")
    Member = apps.get_model("gameplay", "CommunityMember")
    orphans = Game.objects.filter(vk_group__isnull=True)
    if orphans.exists():
        env = getattr(settings, "VK_GROUP_ID", None)
        vk_id = int(env) if env is not None else NO_COMMUNITY_VK_ID
        name = f"club{vk_id}" if env is not None else NO_COMMUNITY_NAME
        community, _ = Community.objects.get_or_create(vk_id=vk_id, defaults={"name": name})
        if env is not None:
            users = Game.gms.through.objects.filter(game__in=orphans).values_list(
                "user_id", flat=True
            )
            for user_id in sorted(set(users)):
                Member.objects.get_or_create(
                    community=community, user_id=user_id, defaults={"role": "gm"}
                )
        orphans.update(vk_group_id=community.vk_id)
    stamp_unsent_rows(apps)


def stamp_unsent_rows(apps):  # noqa: ANN001, ANN201
    Outbox = apps.get_model("gameplay", "Outbox")
    unsent = Outbox.objects.filter(game__isnull=False, group_id__isnull=True, status__in=UNSENT)
    groups = unsent.values_list("game__vk_group_id", flat=True).distinct()
    for vk_id in sorted(set(groups)):
        unsent.filter(game__vk_group_id=vk_id).update(group_id=vk_id)


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0015_encrypted_seeds"),
    ]

    operations = [
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(
            communities_of_games_of_none, migrations.RunPython.noop, elidable=True
        ),
    ]
