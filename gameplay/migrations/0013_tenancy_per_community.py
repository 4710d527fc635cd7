"""A topic id and a chat's peer id are a community's own (every community's first chat is
2000000001): one active game per topic, sign-up topic and spectator chat within a community,
not across the deployment."""

from django.db import migrations, models

ACTIVE = models.Q(("status__in", ["recruiting", "dealt", "running"]))


def _per_community(column: str, name: str) -> models.UniqueConstraint:
    return models.UniqueConstraint(
        condition=ACTIVE & models.Q((f"{column}__isnull", False)),
        fields=(column, "vk_group"),
        name=name,
        nulls_distinct=False,
    )


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
            migrations.AddConstraint(model_name="game", constraint=_per_community(column, name))
            for column, name in COLUMNS
        ),
    ]
