"""A sign-up topic and a spectator chat belong to one unfinished game at a time.

Until now several unfinished games could share a sign-up topic (the newest recruiting one took
every «+») or a spectator chat (the newest one's roster decided who may sit in it). Before the
constraints go on, each shared link stays with the newest of its unfinished games, the one the
bot already routed it to; the older games lose it, each with a ``settings_changed`` event in its
log (the GM sees why, and can link another topic or chat).
"""

from django.db import migrations, models

ACTIVE = ["recruiting", "dealt", "running"]
REASON = {
    "recruit_topic_id": "тема набора занята более новой незавершённой игрой",
    "spectator_chat_id": "беседа ЗЗ занята более новой незавершённой игрой",
}


def unshare(apps, schema_editor):  # noqa: ANN001, ANN201
    Game = apps.get_model("gameplay", "Game")
    GameEvent = apps.get_model("gameplay", "GameEvent")
    for field in ("recruit_topic_id", "spectator_chat_id"):
        games = Game.objects.filter(status__in=ACTIVE, **{f"{field}__isnull": False}).order_by(
            "-created_at", "-id"
        )
        seen = set()
        for game in games:
            value = getattr(game, field)
            if value not in seen:
                seen.add(value)
                continue
            Game.objects.filter(pk=game.pk).update(**{field: None})
            last = GameEvent.objects.filter(game=game).order_by("-seq").first()
            GameEvent.objects.create(
                game=game,
                seq=(last.seq if last else 0) + 1,
                kind="settings_changed",
                actor="system",
                override=False,
                data={"changed": {field: None}, "before": value, "reason": REASON[field]},
            )


class Migration(migrations.Migration):
    dependencies = [
        ("gameplay", "0008_h12a_deal_rounds"),
    ]

    operations = [
        # Elidable: it rewrites existing rows only (a new database has none to rewrite).
        migrations.RunPython(unshare, migrations.RunPython.noop, elidable=True),
        migrations.AddConstraint(
            model_name="game",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ACTIVE), ("recruit_topic_id__isnull", False)),
                fields=("recruit_topic_id",),
                name="one_active_game_per_recruit_topic",
            ),
        ),
        migrations.AddConstraint(
            model_name="game",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ACTIVE), ("spectator_chat_id__isnull", False)),
                fields=("spectator_chat_id",),
                name="one_active_game_per_spectator_chat",
            ),
        ),
    ]
