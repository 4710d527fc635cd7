"""Communities become data (a row per VK community, tokens encrypted at rest) and games
belong to one: ``Game.vk_group_id`` keeps its column and becomes a key into
``Community.vk_id``. Every VK id games already name gets a row (disconnected, no tokens: the
environment's community is filled in on start, others are connected from the panel). Outbox
rows learn the community they go out as; an event id is unique within its community.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import gameplay.models.secrets


def communities_of_existing_games(apps, schema_editor):  # noqa: ANN001, ANN201
    Game = apps.get_model("gameplay", "Game")
    Community = apps.get_model("gameplay", "Community")
    ids = set(Game.objects.exclude(vk_group_id__isnull=True).values_list("vk_group_id", flat=True))
    for vk_id in sorted(ids):
        Community.objects.get_or_create(vk_id=vk_id, defaults={"name": f"club{vk_id}"})


def gms_of_existing_games(apps, schema_editor):  # noqa: ANN001, ANN201
    """Whoever runs a game of a community keeps running it: they become its GMs (an owner, who
    manages them, is named later by an operator on the community's page)."""
    Game = apps.get_model("gameplay", "Game")
    Community = apps.get_model("gameplay", "Community")
    Member = apps.get_model("gameplay", "CommunityMember")
    pairs = Game.gms.through.objects.filter(game__vk_group__isnull=False).values_list(
        "game__vk_group_id", "user_id"
    )
    for vk_id, user_id in sorted(set(pairs)):
        community = Community.objects.get(vk_id=vk_id)
        Member.objects.get_or_create(community=community, user_id=user_id, defaults={"role": "gm"})


def _columns(apps):  # noqa: ANN001, ANN202
    """The column as a number and as a key into gameplay_community.vk_id (the same column)."""
    Game = apps.get_model("gameplay", "Game")
    Community = apps.get_model("gameplay", "Community")
    number = Game._meta.get_field("vk_group_id")
    key = models.ForeignKey(
        Community,
        to_field="vk_id",
        db_column="vk_group_id",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    key.set_attributes_from_name("vk_group")
    key.model = Game
    return Game, number, key


def game_column_to_key(apps, schema_editor):  # noqa: ANN001, ANN201
    Game, number, key = _columns(apps)
    schema_editor.alter_field(Game, number, key)


def game_key_to_column(apps, schema_editor):  # noqa: ANN001, ANN201
    Game, number, key = _columns(apps)
    schema_editor.alter_field(Game, key, number)


def events_of_the_environment(apps, schema_editor):  # noqa: ANN001, ANN201
    """Events recorded without a community came from the environment's (0 if unset)."""
    from django.conf import settings

    VkEvent = apps.get_model("gameplay", "VkEvent")
    VkEvent.objects.filter(group_id__isnull=True).update(group_id=settings.VK_GROUP_ID or 0)


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0011_h11a_seat_sex_game_theme_phase_story"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Community",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("vk_id", models.BigIntegerField(unique=True, verbose_name="id сообщества VK")),
                ("name", models.CharField(blank=True, max_length=200, verbose_name="название")),
                (
                    "screen_name",
                    models.CharField(blank=True, max_length=100, verbose_name="короткий адрес"),
                ),
                (
                    "group_token",
                    gameplay.models.secrets.SecretField(
                        blank=True, verbose_name="ключ доступа сообщества"
                    ),
                ),
                (
                    "user_token",
                    gameplay.models.secrets.SecretField(
                        blank=True, verbose_name="ключ администратора"
                    ),
                ),
                (
                    "callback_secret",
                    gameplay.models.secrets.SecretField(
                        blank=True, verbose_name="секретный ключ Callback API"
                    ),
                ),
                (
                    "confirmation_code",
                    models.CharField(
                        blank=True, max_length=64, verbose_name="код подтверждения Callback API"
                    ),
                ),
                (
                    "callback_server_id",
                    models.BigIntegerField(
                        blank=True, null=True, verbose_name="сервер Callback API в VK"
                    ),
                ),
                ("connected", models.BooleanField(default=False, verbose_name="подключено")),
                (
                    "from_env",
                    models.BooleanField(default=False, verbose_name="из настроек сервера"),
                ),
                (
                    "history_public",
                    models.BooleanField(
                        default=False, verbose_name="история игр открыта другим сообществам"
                    ),
                ),
                (
                    "setup",
                    models.JSONField(blank=True, default=dict, verbose_name="проверка подключения"),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="добавлено")),
                (
                    "connected_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="подключено"),
                ),
                (
                    "disconnected_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="отключено"),
                ),
            ],
            options={
                "verbose_name": "сообщество",
                "verbose_name_plural": "сообщества",
                "ordering": ["name", "vk_id"],
            },
        ),
        migrations.CreateModel(
            name="CommunityMember",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "role",
                    models.CharField(
                        choices=[("owner", "Владелец"), ("gm", "Ведущий")],
                        default="gm",
                        max_length=8,
                        verbose_name="роль",
                    ),
                ),
                ("added_at", models.DateTimeField(auto_now_add=True, verbose_name="добавлен")),
            ],
            options={
                "verbose_name": "участник сообщества",
                "verbose_name_plural": "участники сообщества",
            },
        ),
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(
            communities_of_existing_games, migrations.RunPython.noop, elidable=True
        ),
        # The column stays (vk_group_id, the VK id): only Django's view of it changes, from a
        # number to a key into gameplay_community.vk_id; the database gains the foreign key.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name="game",
                    name="vk_group_id",
                ),
                migrations.AddField(
                    model_name="game",
                    name="vk_group",
                    field=models.ForeignKey(
                        blank=True,
                        db_column="vk_group_id",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="games",
                        to="gameplay.community",
                        to_field="vk_id",
                        verbose_name="сообщество VK",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(game_column_to_key, game_key_to_column),
            ],
        ),
        migrations.AddField(
            model_name="outbox",
            name="group_id",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(events_of_the_environment, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="vkevent",
            name="group_id",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name="vkevent",
            name="event_id",
            field=models.CharField(max_length=80),
        ),
        migrations.AddConstraint(
            model_name="vkevent",
            constraint=models.UniqueConstraint(
                fields=("group_id", "event_id"),
                name="one_event_per_community",
            ),
        ),
        migrations.AddField(
            model_name="communitymember",
            name="community",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="members",
                to="gameplay.community",
            ),
        ),
        migrations.AddField(
            model_name="communitymember",
            name="user",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="community_memberships",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="communitymember",
            constraint=models.UniqueConstraint(
                fields=("community", "user"), name="one_membership_per_user"
            ),
        ),
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(gms_of_existing_games, migrations.RunPython.noop, elidable=True),
    ]
