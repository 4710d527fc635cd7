"""A topic id and a chat's peer id are a community's own (every community's first chat is
2000000001): one active game per topic, sign-up topic and spectator chat within a community,
not across the deployment."""

from django.db import migrations, models

ACTIVE = models.Q(("status__in", ["recruiting", "dealt", "running"]))


def _per_community(column: str, name: str) -> list[models.UniqueConstraint]:
    """Two partial indexes (SQLite has no NULLS NOT DISTINCT): within each community, and
    among the games of no community."""
    active = ACTIVE & models.Q((f"{column}__isnull", False))
    return [
        models.UniqueConstraint(
            condition=active & models.Q(("vk_group__isnull", False)),
            fields=(column, "vk_group"),
            name=name,
        ),
        models.UniqueConstraint(
            condition=active & models.Q(("vk_group__isnull", True)),
            fields=(column,),
            name=f"{name}_of_no_community",
        ),
    ]


COLUMNS = [
    ("topic_id", "one_active_game_per_topic"),
    ("recruit_topic_id", "one_active_game_per_recruit_topic"),
    ("spectator_chat_id", "one_active_game_per_spectator_chat"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0012_communities"),
    ]

    operations = [
        *(migrations.RemoveConstraint(model_name="game", name=name) for _, name in COLUMNS),
        *(
            migrations.AddConstraint(model_name="game", constraint=constraint)
            for column, name in COLUMNS
            for constraint in _per_community(column, name)
        ),
    ]
