"""The GM's moderation: strikes (RULES.md §6), the flags the GM should look at (G2–G4) and who
is in the spectator chat (G6)."""

from __future__ import annotations

from django.db import models

from .game import Game, Phase, Seat


class Strike(models.Model):
    """A strike (RULES.md §6): a first one adds penalty votes to a day's tally."""

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="strike_log")
    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="strikes")
    reason = models.CharField(max_length=16)
    count = models.PositiveSmallIntegerField()
    penalty_votes = models.PositiveSmallIntegerField(default=0)
    #: The day whose tally the penalty votes count in.
    penalty_day = models.PositiveSmallIntegerField(null=True, blank=True)
    modkill = models.BooleanField(default=False)
    forgiven = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "штраф"
        verbose_name_plural = "штрафы"
        ordering = ["created_at", "id"]


class FlagKind(models.TextChoices):
    DEAD_POST = "dead_post", "Пост выбывшего игрока"
    PROFANITY = "profanity", "Мат или оскорбление"
    REVEAL = "reveal", "Раскрытие ночного действия"
    EDITED_VOTE = "edited_vote", "Изменён или удалён пост с голосом"
    INTRUDER = "intruder", "Посторонний в беседе ЗЗ"
    NO_MAFIA_SHOT = "no_mafia_shot", "Мафия не стреляла"
    DELIVERY = "delivery", "Сообщение не доставлено"
    THEME_TEXT = "theme_text", "Текст темы не отрисовался"
    ADMIN_KEY = "admin_key", "Посты ждут входа администратора"


class FlagStatus(models.TextChoices):
    OPEN = "open", "Новый"
    DISMISSED = "dismissed", "Отклонён"
    ACTED = "acted", "Принято решение"


class ModerationFlag(models.Model):
    """Something the GM should look at; never punished automatically (RULES.md G2–G4)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="flags")
    seat = models.ForeignKey(Seat, null=True, blank=True, on_delete=models.SET_NULL)
    vk_user_id = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=16, choices=FlagKind.choices)
    text = models.TextField(blank=True)
    topic_id = models.BigIntegerField(null=True, blank=True)
    vk_post_id = models.BigIntegerField(null=True, blank=True)
    phase = models.ForeignKey(Phase, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=FlagStatus.choices, default=FlagStatus.OPEN)
    note = models.TextField(blank=True)
    resolved_by = models.CharField(max_length=120, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "отметка модерации"
        verbose_name_plural = "отметки модерации"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["game", "status"])]


class SpectatorStatus(models.TextChoices):
    INVITED = "invited", "Получил ссылку"
    JOINED = "joined", "В беседе"
    LEFT = "left", "Вышел"
    REMOVED = "removed", "Удалён ботом"


class SpectatorMember(models.Model):
    """Who asked for, joined, left or was removed from the spectator chat (RULES.md G6)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="spectators")
    vk_user_id = models.BigIntegerField()
    seat = models.ForeignKey(Seat, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=SpectatorStatus.choices)
    reason = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "зритель"
        verbose_name_plural = "зрители"
        constraints = [
            models.UniqueConstraint(fields=["game", "vk_user_id"], name="one_spectator_row"),
        ]
