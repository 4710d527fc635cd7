"""The append-only event log of a game."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models

from .game import Game, Phase


class EventKind(models.TextChoices):
    """What a ``GameEvent`` records; the label is the event log's name for it (the panel's
    «Журнал»)."""

    GAME_CREATED = "game_created", "Игра создана"
    SETTINGS_CHANGED = "settings_changed", "Настройки изменены"
    GMS_CHANGED = "gms_changed", "Состав ведущих"
    SIGNUP = "signup", "Запись"
    WITHDRAW = "withdraw", "Снятие"
    DEAL = "deal", "Раздача ролей"
    DEAL_FIXED = "deal_fixed", "Раздача задана вручную"
    DEAL_DISCARDED = "deal_discarded", "Раздача отброшена"
    DEAL_ROUND_OPENED = "deal_round_opened", "Раунд раздачи открыт"
    GAME_STARTED = "game_started", "Старт игры"
    PHASE_OPENED = "phase_opened", "Фаза открыта"
    VOTE = "vote", "Голос"
    DAY_CLOSED = "day_closed", "День закрыт"
    NIGHT_ACTION = "night_action", "Ночное действие"
    NIGHT_CLOSED = "night_closed", "Ночь закрыта"
    NIGHT_REDRAFTED = "night_redrafted", "Ночь пересчитана"
    NIGHT_EDITED = "night_edited", "Правка ночи"
    MAFIA_SHOT_REOPENED = "mafia_shot_reopened", "Выстрел мафии открыт заново"
    NIGHT_PUBLISHED = "night_published", "Итоги ночи"
    STORY_SET = "story_set", "Абзац ведущего"
    THEME_TEXT_SET = "theme_text_set", "Текст темы"
    ALERT_NO_MAFIA_SHOT = "alert_no_mafia_shot", "Мафия не стреляла"
    MODKILL = "modkill", "Модкилл"
    REPLACE = "replace", "Замена"
    STRIKE_MANUAL = "strike_manual", "Штраф ведущего"
    STRIKE_FORGIVEN = "strike_forgiven", "Штраф прощён"
    DEADLINE_EXTENDED = "deadline_extended", "Срок продлён"
    REMINDER_SENT = "reminder_sent", "Напоминание"
    DEADLINE_FAILED = "deadline_failed", "Сбой закрытия по сроку"
    SPECTATOR_CHAT_LINKED = "spectator_chat_linked", "Беседа ЗЗ привязана"
    SPECTATOR_CHAT_CREATE_REQUESTED = (
        "spectator_chat_create_requested",
        "Запрошено создание беседы ЗЗ",
    )
    SPECTATOR_CHAT_CREATED = "spectator_chat_created", "Беседа ЗЗ создана сообществом"
    SPECTATOR_CHAT_OPENED = "spectator_chat_opened", "Беседа ЗЗ открыта"
    SPECTATOR_CHAT_CLOSED = "spectator_chat_closed", "Беседа ЗЗ закрыта"
    FLAG_RESOLVED = "flag_resolved", "Отметка рассмотрена"
    OUTBOX_RETRIED = "outbox_retried", "Повтор доставки"
    MAFIA_RELAY = "mafia_relay", "Переписка мафии"
    SPECTATOR_INVITED = "spectator_invited", "Ссылка в беседу ЗЗ"
    SPECTATOR_JOINED = "spectator_joined", "Вступил в беседу ЗЗ"
    SPECTATOR_REMOVED = "spectator_removed", "Удалён из беседы ЗЗ"
    GAME_FINISHED = "game_finished", "Игра завершена"
    GAME_CANCELLED = "game_cancelled", "Игра отменена"
    # Kinds no service writes, kept so the rows that hold them still read with their names.
    REDEAL = "redeal", "Перераздача"
    OUTBOX_RETRY = "outbox_retry", "Повтор доставки"


class Actor(str):
    """Who did what a ``GameEvent`` records, as its ``actor`` column stores it: ``system``
    (the bot), ``deadline`` (the deadline tick), ``gm:<username>``, ``seat:<n>``,
    ``vk:<id>`` (a VK user without a seat), ``replay`` (a scenario). A string, so it is
    stored, compared and exported as that text: one of the constants, or built by
    ``gm``, ``seat``, ``player``."""

    __slots__ = ()

    SEPARATOR: ClassVar[str] = ":"
    #: The bot itself (a close on an early majority, a service's default).
    BOT: ClassVar[Actor]
    #: The deadline tick.
    DEADLINE: ClassVar[Actor]
    #: A scenario played by ``manage.py replay`` or the export's check.
    REPLAY: ClassVar[Actor]

    @classmethod
    def gm(cls, user: Any) -> Actor:
        """A GM, by their panel user (or its username)."""
        name = user if isinstance(user, str) else user.get_username()
        return cls(f"gm:{name}")

    @classmethod
    def seat(cls, number: int | str) -> Actor:
        return cls(f"seat:{number}")

    @classmethod
    def player(cls, vk_user_id: int) -> Actor:
        """A VK user acting outside a seat (a sign-up, a withdrawal, «в ЗЗ»)."""
        return cls(f"vk:{vk_user_id}")

    @property
    def kind(self) -> str:
        """``system``, ``deadline``, ``replay``, ``gm``, ``seat`` or ``vk``."""
        return self.partition(self.SEPARATOR)[0]

    @property
    def ref(self) -> str:
        """The GM's username, the seat's number, the VK id ("" for the others)."""
        return self.partition(self.SEPARATOR)[2]


Actor.BOT = Actor("system")
Actor.DEADLINE = Actor("deadline")
Actor.REPLAY = Actor("replay")


class GameEvent(models.Model):
    """The append-only log of everything that happens in a game, GM overrides included."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    phase = models.ForeignKey(
        Phase, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    kind = models.CharField(max_length=48, choices=EventKind.choices)
    #: An ``Actor``.
    actor = models.CharField(max_length=120, default="system")
    data = models.JSONField(default=dict, blank=True)
    #: A GM override (RULES.md G1): published at the end.
    override = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "запись журнала"
        verbose_name_plural = "записи журнала"
        ordering = ["game", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seq"], name="unique_event_seq"),
        ]
        indexes = [models.Index(fields=["game", "kind"])]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.seq} {self.kind}"
