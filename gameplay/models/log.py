"""The append-only event log of a game."""

from __future__ import annotations

from django.db import models

from .game import Game, Phase


class GameEvent(models.Model):
    """The append-only log of everything that happens in a game, GM overrides included."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    phase = models.ForeignKey(
        Phase, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    kind = models.CharField(max_length=48)
    #: "system" (the bot), "deadline" (the deadline job), "gm:<username>", "seat:<n>",
    #: "vk:<id>", "replay".
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
