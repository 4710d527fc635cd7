"""Every game belongs to a community: ``Game.vk_group`` is required (0016 gave the games of
none one), and a topic or chat is unique within a community's active games only (the
indexes for games of no community go).

A migration of its own: on PostgreSQL the rows 0016 changed leave deferred foreign-key checks
pending, and a table with pending trigger events cannot be altered in that transaction.
"""

import django.db.models.deletion
from django.db import migrations, models

ACTIVE = models.Q(("status__in", ["recruiting", "dealt", "running"]))

COLUMNS = [
    ("topic_id", "one_active_game_per_topic"),
    ("recruit_topic_id", "one_active_game_per_recruit_topic"),
    ("spectator_chat_id", "one_active_game_per_spectator_chat"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0016_games_of_no_community"),
    ]

    operations = [
        *(
            migrations.RemoveConstraint(model_name="game", name=n)
            for _, name in COLUMNS
            for n in (name, f"{name}_of_no_community")
        ),
        migrations.AlterField(
            model_name="game",
            name="vk_group",
            field=models.ForeignKey(
                db_column="vk_group_id",
                on_delete=django.db.models.deletion.PROTECT,
                related_name="games",
                to="gameplay.community",
                to_field="vk_id",
                verbose_name="сообщество VK",
            ),
        ),
        *(
            migrations.AddConstraint(
                model_name="game",
                constraint=models.UniqueConstraint(
                    condition=ACTIVE & models.Q((f"{column}__isnull", False)),
                    fields=(column, "vk_group"),
                    name=name,
                ),
            )
            for column, name in COLUMNS
        ),
    ]
