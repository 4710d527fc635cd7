"""The schema of 0001–0022 in one step, for a database that has none of them.

Django applies this migration to an empty database, and the ones it replaces (kept beside it)
to a database that has some of them: a deployment at any of 0001–0022 migrates as before.
Each model is created as it stands after 0022, with its indexes and constraints; the data
migrations of 0009, 0012, 0015 and 0016 only transform existing rows (none in a new database),
so the one data step kept is 0007's: the deployment's row with its random offset (outbox.ids).
tests/gameplay/test_migrations.py checks that both paths give the same schema.
"""

import datetime
import secrets

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import gameplay.models.secrets


def draw_offset(apps, schema_editor):  # noqa: ANN001, ANN201
    """One row per database, with its random offset (outbox.ids); as 0007_deployment."""
    Deployment = apps.get_model("gameplay", "Deployment")
    Deployment.objects.get_or_create(
        pk=1, defaults={"vk_id_offset": secrets.randbelow(2_147_483_646) + 1}
    )


class Migration(migrations.Migration):
    replaces = [
        ("gameplay", "0001_initial"),
        ("gameplay", "0002_transport_moderation_spectators"),
        ("gameplay", "0003_outbox_channels"),
        ("gameplay", "0004_vkevent_error"),
        ("gameplay", "0005_game_gm_vk_ids"),
        ("gameplay", "0006_outbox_create_chat"),
        ("gameplay", "0007_deployment"),
        ("gameplay", "0008_h12a_deal_rounds"),
        ("gameplay", "0009_h12b_tenancy"),
        ("gameplay", "0010_h11b_verbose_names"),
        ("gameplay", "0011_h11a_seat_sex_game_theme_phase_story"),
        ("gameplay", "0012_communities"),
        ("gameplay", "0013_tenancy_per_community"),
        ("gameplay", "0014_russian_verbose_names"),
        ("gameplay", "0015_encrypted_seeds"),
        ("gameplay", "0016_games_of_no_community"),
        ("gameplay", "0017_every_game_has_a_community"),
        ("gameplay", "0018_theme_text_flag"),
        ("gameplay", "0019_admin_token_renewal"),
        ("gameplay", "0020_runbot_leases"),
        ("gameplay", "0021_gameevent_kind_choices"),
        ("gameplay", "0022_callback_inbox"),
    ]

    initial = True

    dependencies = [
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
                    "user_token_source",
                    models.CharField(
                        blank=True,
                        choices=[("vkid", "вход через VK ID"), ("pasted", "вставлен вручную")],
                        max_length=8,
                        verbose_name="откуда ключ администратора",
                    ),
                ),
                (
                    "user_refresh_token",
                    gameplay.models.secrets.SecretField(blank=True, verbose_name="ключ продления"),
                ),
                (
                    "user_device_id",
                    gameplay.models.secrets.SecretField(
                        blank=True, verbose_name="устройство VK ID"
                    ),
                ),
                (
                    "user_token_expires_at",
                    models.DateTimeField(
                        blank=True, null=True, verbose_name="ключ администратора до"
                    ),
                ),
                (
                    "user_token_issued_at",
                    models.DateTimeField(
                        blank=True, null=True, verbose_name="ключ администратора выдан"
                    ),
                ),
                (
                    "user_token_renewals",
                    models.PositiveIntegerField(
                        default=0, verbose_name="продлений ключа администратора"
                    ),
                ),
                (
                    "user_token_refused_at",
                    models.DateTimeField(
                        blank=True, null=True, verbose_name="ключ администратора отклонён"
                    ),
                ),
                (
                    "user_token_problem",
                    models.CharField(
                        blank=True, max_length=200, verbose_name="почему ключ отклонён"
                    ),
                ),
                (
                    "user_token_seed",
                    models.CharField(
                        blank=True, max_length=64, verbose_name="ключ продления из окружения"
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
            name="Deployment",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("vk_id_offset", models.BigIntegerField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("rotated_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "verbose_name": "установка",
                "verbose_name_plural": "установка",
            },
        ),
        migrations.RunPython(draw_offset, migrations.RunPython.noop),
        migrations.CreateModel(
            name="PollState",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("group_id", models.BigIntegerField(unique=True)),
                ("ts", models.CharField(blank=True, max_length=64)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name": "позиция Long Poll",
                "verbose_name_plural": "позиции Long Poll",
            },
        ),
        migrations.CreateModel(
            name="RunbotProcess",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("holder", models.CharField(max_length=120, unique=True)),
                ("started_at", models.DateTimeField()),
                ("expires_at", models.DateTimeField()),
            ],
            options={
                "verbose_name": "процесс runbot",
                "verbose_name_plural": "процессы runbot",
            },
        ),
        migrations.CreateModel(
            name="Game",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, verbose_name="название")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("recruiting", "Набор"),
                            ("dealt", "Роли розданы"),
                            ("running", "Идёт"),
                            ("finished", "Завершена"),
                            ("cancelled", "Отменена"),
                        ],
                        default="recruiting",
                        max_length=16,
                        verbose_name="статус",
                    ),
                ),
                ("mafia_count", models.PositiveSmallIntegerField(default=6, verbose_name="мафия")),
                (
                    "commissar_count",
                    models.PositiveSmallIntegerField(default=1, verbose_name="комиссар"),
                ),
                (
                    "doctor_count",
                    models.PositiveSmallIntegerField(default=1, verbose_name="доктор"),
                ),
                (
                    "maniac_count",
                    models.PositiveSmallIntegerField(default=1, verbose_name="маньяк"),
                ),
                (
                    "civilian_count",
                    models.PositiveSmallIntegerField(default=17, verbose_name="мирные жители"),
                ),
                (
                    "early_close",
                    models.CharField(
                        choices=[("majority", "большинство"), ("all", "все")],
                        default="majority",
                        max_length=16,
                        verbose_name="досрочное закрытие дня",
                    ),
                ),
                (
                    "reveal_on_night_death",
                    models.BooleanField(default=False, verbose_name="раскрывать роль убитых ночью"),
                ),
                (
                    "auto_publish",
                    models.BooleanField(
                        default=False, verbose_name="публиковать ночь без проверки"
                    ),
                ),
                (
                    "day_length",
                    models.DurationField(
                        default=datetime.timedelta(days=1), verbose_name="длина дня"
                    ),
                ),
                (
                    "night_length",
                    models.DurationField(
                        default=datetime.timedelta(seconds=43200), verbose_name="длина ночи"
                    ),
                ),
                (
                    "reminders",
                    models.JSONField(
                        blank=True, default=list, verbose_name="напоминания (минуты до срока)"
                    ),
                ),
                ("language", models.CharField(default="ru", max_length=8, verbose_name="язык")),
                (
                    "time_zone",
                    models.CharField(
                        default="Europe/Moscow", max_length=64, verbose_name="часовой пояс"
                    ),
                ),
                (
                    "theme",
                    models.CharField(
                        choices=[("time_machine", "Машина времени"), ("classic", "Классика")],
                        default="time_machine",
                        max_length=32,
                        verbose_name="тема оформления",
                    ),
                ),
                (
                    "theme_texts",
                    models.JSONField(blank=True, default=dict, verbose_name="тексты темы"),
                ),
                (
                    "recruit_topic_id",
                    models.BigIntegerField(blank=True, null=True, verbose_name="тема набора"),
                ),
                (
                    "topic_id",
                    models.BigIntegerField(blank=True, null=True, verbose_name="тема игры"),
                ),
                (
                    "spectator_chat_id",
                    models.BigIntegerField(
                        blank=True, null=True, verbose_name="беседа ЗЗ (peer_id)"
                    ),
                ),
                (
                    "spectator_chat_open",
                    models.BooleanField(default=False, verbose_name="беседа ЗЗ открыта"),
                ),
                (
                    "gm_vk_ids",
                    models.JSONField(blank=True, default=list, verbose_name="VK id ведущих"),
                ),
                (
                    "seed",
                    gameplay.models.secrets.SecretField(blank=True, verbose_name="зерно раздачи"),
                ),
                (
                    "commitment",
                    models.CharField(blank=True, max_length=64, verbose_name="хеш раздачи"),
                ),
                (
                    "deal_from_seed",
                    models.BooleanField(default=True, verbose_name="раздача из зерна"),
                ),
                (
                    "role_strike_used",
                    models.BooleanField(
                        default=False, verbose_name="ролевой удар мафии использован"
                    ),
                ),
                (
                    "winner",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("town", "Мирный город"),
                            ("mafia", "Мафия"),
                            ("maniac", "Маньяк"),
                            ("draw", "Ничья"),
                        ],
                        max_length=16,
                        verbose_name="победитель",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="создана")),
                (
                    "started_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="началась"),
                ),
                (
                    "finished_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="закончилась"),
                ),
                (
                    "gms",
                    models.ManyToManyField(
                        blank=True,
                        related_name="gm_games",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="ведущие",
                    ),
                ),
                (
                    "vk_group",
                    models.ForeignKey(
                        db_column="vk_group_id",
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="games",
                        to="gameplay.community",
                        to_field="vk_id",
                        verbose_name="сообщество VK",
                    ),
                ),
            ],
            options={
                "verbose_name": "игра",
                "verbose_name_plural": "игры",
                "ordering": ["-created_at"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("status__in", ["recruiting", "dealt", "running"]),
                            ("topic_id__isnull", False),
                        ),
                        fields=("topic_id", "vk_group"),
                        name="one_active_game_per_topic",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("status__in", ["recruiting", "dealt", "running"]),
                            ("recruit_topic_id__isnull", False),
                        ),
                        fields=("recruit_topic_id", "vk_group"),
                        name="one_active_game_per_recruit_topic",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("status__in", ["recruiting", "dealt", "running"]),
                            ("spectator_chat_id__isnull", False),
                        ),
                        fields=("spectator_chat_id", "vk_group"),
                        name="one_active_game_per_spectator_chat",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("early_close__in", ["majority", "all"])),
                        name="game_early_close_valid",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Draw",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("deal_round", models.PositiveSmallIntegerField()),
                ("attempt", models.PositiveIntegerField()),
                ("holders", models.JSONField()),
                ("mafia_items", models.PositiveSmallIntegerField()),
                ("accepted", models.BooleanField(default=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="draws",
                        to="gameplay.game",
                    ),
                ),
            ],
            options={
                "verbose_name": "розыгрыш предметов",
                "verbose_name_plural": "розыгрыши предметов",
                "ordering": ["deal_round", "attempt"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("game", "deal_round", "attempt"), name="unique_draw_attempt"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="DealRound",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveSmallIntegerField()),
                ("seed", gameplay.models.secrets.SecretField()),
                ("commitment", models.CharField(max_length=64)),
                ("topic_id", models.BigIntegerField(blank=True, null=True)),
                ("deals", models.PositiveSmallIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deal_rounds",
                        to="gameplay.game",
                    ),
                ),
            ],
            options={
                "verbose_name": "раунд раздачи",
                "verbose_name_plural": "раунды раздачи",
                "ordering": ["game", "number"],
                "constraints": [
                    models.UniqueConstraint(fields=("game", "number"), name="unique_deal_round")
                ],
            },
        ),
        migrations.CreateModel(
            name="InboundEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("group_id", models.BigIntegerField()),
                ("event_id", models.CharField(max_length=80)),
                ("body", models.JSONField()),
                ("received_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "событие Callback API в очереди",
                "verbose_name_plural": "события Callback API в очереди",
                "indexes": [models.Index(fields=["group_id", "id"], name="inbound_by_community")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("group_id", "event_id"), name="one_inbound_event_per_community"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="LongPollLease",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("group_id", models.BigIntegerField(unique=True)),
                ("holder", models.CharField(blank=True, default="", max_length=120)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "verbose_name": "аренда Long Poll",
                "verbose_name_plural": "аренды Long Poll",
                "indexes": [models.Index(fields=["holder"], name="gameplay_lo_holder_7cd132_idx")],
            },
        ),
        migrations.CreateModel(
            name="Outbox",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("group_id", models.BigIntegerField(blank=True, null=True)),
                (
                    "channel",
                    models.CharField(
                        choices=[
                            ("message", "Личное сообщение"),
                            ("board", "Обсуждение"),
                            ("chat", "Беседа"),
                            ("event_answer", "Ответ на кнопку"),
                            ("invite", "Приглашение в беседу"),
                            ("kick", "Удаление из беседы"),
                            ("create_chat", "Создание беседы"),
                        ],
                        max_length=16,
                    ),
                ),
                ("peer_ids", models.JSONField(blank=True, default=list)),
                ("topic_id", models.BigIntegerField(blank=True, null=True)),
                ("text", models.TextField()),
                ("keyboard", models.JSONField(blank=True, null=True)),
                ("payload", models.JSONField(blank=True, null=True)),
                ("kind", models.CharField(blank=True, max_length=48)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Ждёт отправки"),
                            ("sent", "Отправлено"),
                            ("failed", "Ошибка"),
                        ],
                        default="pending",
                        max_length=8,
                    ),
                ),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("locked_until", models.DateTimeField(blank=True, null=True)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True)),
                ("result", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                (
                    "game",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="outbox",
                        to="gameplay.game",
                    ),
                ),
            ],
            options={
                "verbose_name": "исходящее сообщение",
                "verbose_name_plural": "исходящие сообщения",
                "ordering": ["id"],
                "indexes": [
                    models.Index(
                        fields=["status", "next_attempt_at"], name="gameplay_ou_status_dcef26_idx"
                    )
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("channel", "board"), ("topic_id__isnull", False)),
                            models.Q(("channel", "board"), _negated=True),
                            _connector="OR",
                        ),
                        name="board_post_has_topic",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Phase",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(choices=[("day", "День"), ("night", "Ночь")], max_length=8),
                ),
                ("number", models.PositiveSmallIntegerField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("open", "Идёт"),
                            ("review", "На проверке"),
                            ("done", "Завершена"),
                        ],
                        default="open",
                        max_length=8,
                    ),
                ),
                ("opened_at", models.DateTimeField()),
                ("deadline", models.DateTimeField(blank=True, null=True)),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                ("published_at", models.DateTimeField(blank=True, null=True)),
                ("closed_early", models.BooleanField(default=False)),
                ("reopened_for", models.CharField(blank=True, max_length=16)),
                ("reminded", models.JSONField(blank=True, default=list)),
                ("result", models.JSONField(blank=True, null=True)),
                (
                    "story",
                    models.TextField(blank=True, max_length=2000, verbose_name="рассказ ведущего"),
                ),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="phases",
                        to="gameplay.game",
                    ),
                ),
            ],
            options={
                "verbose_name": "фаза",
                "verbose_name_plural": "фазы",
                "ordering": ["game", "opened_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["status", "deadline"], name="gameplay_ph_status_126588_idx"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("game", "kind", "number"), name="one_phase_per_number"
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["open", "review"])),
                        fields=("game",),
                        name="one_current_phase_per_game",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="GameEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveIntegerField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("game_created", "Игра создана"),
                            ("settings_changed", "Настройки изменены"),
                            ("gms_changed", "Состав ведущих"),
                            ("signup", "Запись"),
                            ("withdraw", "Снятие"),
                            ("deal", "Раздача ролей"),
                            ("deal_fixed", "Раздача задана вручную"),
                            ("deal_discarded", "Раздача отброшена"),
                            ("deal_round_opened", "Раунд раздачи открыт"),
                            ("game_started", "Старт игры"),
                            ("phase_opened", "Фаза открыта"),
                            ("vote", "Голос"),
                            ("day_closed", "День закрыт"),
                            ("night_action", "Ночное действие"),
                            ("night_closed", "Ночь закрыта"),
                            ("night_redrafted", "Ночь пересчитана"),
                            ("night_edited", "Правка ночи"),
                            ("mafia_shot_reopened", "Выстрел мафии открыт заново"),
                            ("night_published", "Итоги ночи"),
                            ("story_set", "Абзац ведущего"),
                            ("theme_text_set", "Текст темы"),
                            ("alert_no_mafia_shot", "Мафия не стреляла"),
                            ("modkill", "Модкилл"),
                            ("replace", "Замена"),
                            ("strike_manual", "Штраф ведущего"),
                            ("strike_forgiven", "Штраф прощён"),
                            ("deadline_extended", "Срок продлён"),
                            ("reminder_sent", "Напоминание"),
                            ("deadline_failed", "Сбой закрытия по сроку"),
                            ("spectator_chat_linked", "Беседа ЗЗ привязана"),
                            ("spectator_chat_create_requested", "Запрошено создание беседы ЗЗ"),
                            ("spectator_chat_created", "Беседа ЗЗ создана сообществом"),
                            ("spectator_chat_opened", "Беседа ЗЗ открыта"),
                            ("spectator_chat_closed", "Беседа ЗЗ закрыта"),
                            ("flag_resolved", "Отметка рассмотрена"),
                            ("outbox_retried", "Повтор доставки"),
                            ("mafia_relay", "Переписка мафии"),
                            ("spectator_invited", "Ссылка в беседу ЗЗ"),
                            ("spectator_joined", "Вступил в беседу ЗЗ"),
                            ("spectator_removed", "Удалён из беседы ЗЗ"),
                            ("game_finished", "Игра завершена"),
                            ("game_cancelled", "Игра отменена"),
                            ("redeal", "Перераздача"),
                            ("outbox_retry", "Повтор доставки"),
                        ],
                        max_length=48,
                    ),
                ),
                ("actor", models.CharField(default="system", max_length=120)),
                ("data", models.JSONField(blank=True, default=dict)),
                ("override", models.BooleanField(default=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="gameplay.game",
                    ),
                ),
                (
                    "phase",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="events",
                        to="gameplay.phase",
                    ),
                ),
            ],
            options={
                "verbose_name": "запись журнала",
                "verbose_name_plural": "записи журнала",
                "ordering": ["game", "seq"],
                "indexes": [
                    models.Index(fields=["game", "kind"], name="gameplay_ga_game_id_13df30_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("game", "seq"), name="unique_event_seq")
                ],
            },
        ),
        migrations.CreateModel(
            name="Seat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("vk_user_id", models.BigIntegerField(verbose_name="VK id")),
                ("name", models.CharField(max_length=200, verbose_name="имя")),
                (
                    "sex",
                    models.PositiveSmallIntegerField(
                        choices=[(0, "не указан"), (1, "женский"), (2, "мужской")],
                        default=0,
                        verbose_name="пол",
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("player", "Игрок"),
                            ("reserve", "Запас"),
                            ("withdrawn", "Снялся"),
                        ],
                        default="player",
                        max_length=16,
                        verbose_name="состояние",
                    ),
                ),
                (
                    "number",
                    models.PositiveSmallIntegerField(blank=True, null=True, verbose_name="номер"),
                ),
                (
                    "role",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("mafia", "Мафия"),
                            ("commissar", "Комиссар"),
                            ("doctor", "Доктор"),
                            ("civilian", "Мирный житель"),
                            ("maniac", "Маньяк"),
                        ],
                        max_length=16,
                        verbose_name="роль",
                    ),
                ),
                (
                    "item",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("clock", "Старинные часы"),
                            ("red_button", "Загадочная красная кнопка"),
                            ("book", "Книга из будущего"),
                        ],
                        max_length=16,
                        verbose_name="предмет",
                    ),
                ),
                (
                    "item_used",
                    models.BooleanField(default=False, verbose_name="предмет использован"),
                ),
                ("alive", models.BooleanField(default=True, verbose_name="жив")),
                (
                    "death_cause",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("executed", "Казнь"),
                            ("night", "Убийство ночью"),
                            ("modkill", "Модкилл"),
                        ],
                        max_length=16,
                        verbose_name="как выбыл",
                    ),
                ),
                ("strikes", models.PositiveSmallIntegerField(default=0, verbose_name="штрафы")),
                (
                    "pm_allowed",
                    models.BooleanField(blank=True, null=True, verbose_name="сообщения разрешены"),
                ),
                (
                    "last_heal_target",
                    models.PositiveSmallIntegerField(
                        blank=True, null=True, verbose_name="кого доктор лечил прошлой ночью"
                    ),
                ),
                ("signed_up_at", models.DateTimeField(auto_now_add=True, verbose_name="записан")),
                (
                    "died_in",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="gameplay.phase",
                        verbose_name="выбыл в фазе",
                    ),
                ),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="seats",
                        to="gameplay.game",
                        verbose_name="игра",
                    ),
                ),
            ],
            options={
                "verbose_name": "место",
                "verbose_name_plural": "места",
                "ordering": ["game", "number", "signed_up_at"],
                "indexes": [
                    models.Index(fields=["vk_user_id"], name="gameplay_se_vk_user_82978f_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["player", "reserve"])),
                        fields=("game", "vk_user_id"),
                        name="one_seat_per_vk_user_per_game",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("number__isnull", False)),
                        fields=("game", "number"),
                        name="unique_seat_number",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Replacement",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("old_vk_user_id", models.BigIntegerField()),
                ("old_name", models.CharField(max_length=200)),
                ("new_vk_user_id", models.BigIntegerField()),
                ("new_name", models.CharField(max_length=200)),
                ("old_strikes", models.PositiveSmallIntegerField(default=0)),
                ("reason", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "phase",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="gameplay.phase",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="replacements",
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "замена",
                "verbose_name_plural": "замены",
                "ordering": ["created_at"],
            },
        ),
        migrations.CreateModel(
            name="NightAction",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "act",
                    models.CharField(
                        choices=[
                            ("mafia_shot", "mafia_shot"),
                            ("role_strike", "role_strike"),
                            ("check", "check"),
                            ("commissar_shot", "commissar_shot"),
                            ("heal", "heal"),
                            ("maniac_shot", "maniac_shot"),
                            ("clock", "clock"),
                            ("red_button", "red_button"),
                            ("book", "book"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "slot",
                    models.CharField(
                        choices=[
                            ("role", "role"),
                            ("mafia_shot", "mafia_shot"),
                            ("role_strike", "role_strike"),
                            ("item", "item"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "guess",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("mafia", "Мафия"),
                            ("commissar", "Комиссар"),
                            ("doctor", "Доктор"),
                            ("civilian", "Мирный житель"),
                            ("maniac", "Маньяк"),
                        ],
                        max_length=16,
                    ),
                ),
                ("current", models.BooleanField(default=True)),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("board", "Обсуждение"),
                            ("pm", "Личные сообщения"),
                            ("panel", "Панель"),
                            ("replay", "Сценарий"),
                        ],
                        default="pm",
                        max_length=8,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "phase",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="actions",
                        to="gameplay.phase",
                    ),
                ),
                (
                    "actor",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="actions",
                        to="gameplay.seat",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="targeted_by",
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "ночное действие",
                "verbose_name_plural": "ночные действия",
                "ordering": ["created_at", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("current", True), ("slot", "role")),
                        fields=("phase", "actor"),
                        name="one_role_action_per_seat_per_night",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("current", True), ("slot__in", ["mafia_shot", "role_strike"])
                        ),
                        fields=("phase", "slot"),
                        name="one_team_action_per_night",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("current", True), ("slot", "item")),
                        fields=("phase", "act"),
                        name="one_use_per_item_per_night",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="ModerationFlag",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("vk_user_id", models.BigIntegerField(blank=True, null=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("dead_post", "Пост выбывшего игрока"),
                            ("profanity", "Мат или оскорбление"),
                            ("reveal", "Раскрытие ночного действия"),
                            ("edited_vote", "Изменён или удалён пост с голосом"),
                            ("intruder", "Посторонний в беседе ЗЗ"),
                            ("no_mafia_shot", "Мафия не стреляла"),
                            ("delivery", "Сообщение не доставлено"),
                            ("theme_text", "Текст темы не отрисовался"),
                            ("admin_key", "Посты ждут входа администратора"),
                        ],
                        max_length=16,
                    ),
                ),
                ("text", models.TextField(blank=True)),
                ("topic_id", models.BigIntegerField(blank=True, null=True)),
                ("vk_post_id", models.BigIntegerField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("open", "Новый"),
                            ("dismissed", "Отклонён"),
                            ("acted", "Принято решение"),
                        ],
                        default="open",
                        max_length=16,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                ("resolved_by", models.CharField(blank=True, max_length=120)),
                ("resolved_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="flags",
                        to="gameplay.game",
                    ),
                ),
                (
                    "phase",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="gameplay.phase",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "отметка модерации",
                "verbose_name_plural": "отметки модерации",
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(fields=["game", "status"], name="gameplay_mo_game_id_9e86ca_idx")
                ],
            },
        ),
        migrations.CreateModel(
            name="ItemUse",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "item",
                    models.CharField(
                        choices=[
                            ("clock", "Старинные часы"),
                            ("red_button", "Загадочная красная кнопка"),
                            ("book", "Книга из будущего"),
                        ],
                        max_length=16,
                    ),
                ),
                ("blocked", models.BooleanField(default=False)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="item_uses",
                        to="gameplay.game",
                    ),
                ),
                (
                    "phase",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="item_uses",
                        to="gameplay.phase",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="item_uses",
                        to="gameplay.seat",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "использование предмета",
                "verbose_name_plural": "использования предметов",
                "constraints": [
                    models.UniqueConstraint(fields=("game", "item"), name="each_item_used_once")
                ],
            },
        ),
        migrations.CreateModel(
            name="SpectatorMember",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("vk_user_id", models.BigIntegerField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("invited", "Получил ссылку"),
                            ("joined", "В беседе"),
                            ("left", "Вышел"),
                            ("removed", "Удалён ботом"),
                        ],
                        max_length=16,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "game",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="spectators",
                        to="gameplay.game",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "зритель",
                "verbose_name_plural": "зрители",
                "constraints": [
                    models.UniqueConstraint(fields=("game", "vk_user_id"), name="one_spectator_row")
                ],
            },
        ),
        migrations.CreateModel(
            name="Strike",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("reason", models.CharField(max_length=16)),
                ("count", models.PositiveSmallIntegerField()),
                ("penalty_votes", models.PositiveSmallIntegerField(default=0)),
                ("penalty_day", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("modkill", models.BooleanField(default=False)),
                ("forgiven", models.BooleanField(default=False)),
                ("note", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "phase",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="strikes",
                        to="gameplay.phase",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="strike_log",
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "штраф",
                "verbose_name_plural": "штрафы",
                "ordering": ["created_at", "id"],
            },
        ),
        migrations.CreateModel(
            name="VkEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("event_id", models.CharField(max_length=80)),
                ("type", models.CharField(max_length=48)),
                ("group_id", models.BigIntegerField(default=0)),
                ("source", models.CharField(default="longpoll", max_length=16)),
                ("received_at", models.DateTimeField(auto_now_add=True)),
                ("error", models.TextField(blank=True, db_default="")),
                (
                    "game",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to="gameplay.game",
                    ),
                ),
            ],
            options={
                "verbose_name": "событие VK",
                "verbose_name_plural": "события VK",
                "indexes": [
                    models.Index(fields=["received_at"], name="gameplay_vk_receive_fdb95a_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("group_id", "event_id"), name="one_event_per_community"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Vote",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("early", models.BooleanField(default=False)),
                ("current", models.BooleanField(default=True)),
                ("void", models.BooleanField(default=False)),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("board", "Обсуждение"),
                            ("pm", "Личные сообщения"),
                            ("panel", "Панель"),
                            ("replay", "Сценарий"),
                        ],
                        default="pm",
                        max_length=8,
                    ),
                ),
                ("vk_post_id", models.BigIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "phase",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="votes",
                        to="gameplay.phase",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="votes_received",
                        to="gameplay.seat",
                    ),
                ),
                (
                    "voter",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="votes_cast",
                        to="gameplay.seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "голос",
                "verbose_name_plural": "голоса",
                "ordering": ["created_at", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("current", True)),
                        fields=("phase", "voter"),
                        name="one_current_vote",
                    )
                ],
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
                (
                    "community",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="members",
                        to="gameplay.community",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="community_memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "участник сообщества",
                "verbose_name_plural": "участники сообщества",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("community", "user"), name="one_membership_per_user"
                    )
                ],
            },
        ),
    ]
