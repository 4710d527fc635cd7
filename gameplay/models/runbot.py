"""How several ``runbot`` processes share the communities' long polls: a lease per community
(which process polls it, until when) and the runbots alive now (to split the communities
fairly). Written only by ``gameplay.services.longpoll_leases``; the times are the database's
clock, so runbots on several hosts need not agree on theirs."""

from __future__ import annotations

from django.db import models

#: The longest holder id (``host:pid:random``).
HOLDER_MAX = 120


class LongPollLease(models.Model):
    """The right to poll and apply one community's Bots Long Poll: held by one runbot
    (``holder``) until ``expires_at`` unless renewed. Empty ``holder``: free."""

    group_id = models.BigIntegerField(unique=True)
    holder = models.CharField(max_length=HOLDER_MAX, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    #: When the current holder took it (None: free).
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "аренда Long Poll"
        verbose_name_plural = "аренды Long Poll"
        indexes = [models.Index(fields=["holder"])]

    def __str__(self) -> str:
        return f"{self.group_id}: {self.holder or '-'}"


class RunbotProcess(models.Model):
    """A runbot alive until ``expires_at`` (its heartbeat moves it on)."""

    holder = models.CharField(max_length=HOLDER_MAX, unique=True)
    started_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        verbose_name = "процесс runbot"
        verbose_name_plural = "процессы runbot"

    def __str__(self) -> str:
        return self.holder
