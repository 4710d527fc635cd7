"""The verifiable deal's tables: the seeds and their commitments, and every draw of the items
(RULES.md §1)."""

from __future__ import annotations

from django.db import models

from .game import Game
from .secrets import SecretField


class Draw(models.Model):
    """One draw of the items; every draw is kept (RULES.md §1)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="draws")
    deal_round = models.PositiveSmallIntegerField()
    attempt = models.PositiveIntegerField()
    holders = models.JSONField()
    mafia_items = models.PositiveSmallIntegerField()
    accepted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "розыгрыш предметов"
        verbose_name_plural = "розыгрыши предметов"
        ordering = ["deal_round", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["game", "deal_round", "attempt"], name="unique_draw_attempt"
            ),
        ]


class DealRound(models.Model):
    """A seed of the deal and its public commitment (gameplay/rules/deal.py): round 1 opens
    with the sign-up, a later one only by the GM's decision (an override). The seed is drawn by
    the server and revealed only at the end; the deal is this seed's for the final roster. The
    seed is stored encrypted (``SecretField``): no lookup can compare it with a guess."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="deal_rounds")
    number = models.PositiveSmallIntegerField()
    seed = SecretField()
    commitment = models.CharField(max_length=64)
    #: The topic its commitment was posted in (None: not posted yet, the game had no topic).
    topic_id = models.BigIntegerField(null=True, blank=True)
    #: How many deals were made from this seed (the GM saw each of them).
    deals = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "раунд раздачи"
        verbose_name_plural = "раунды раздачи"
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="unique_deal_round"),
        ]
