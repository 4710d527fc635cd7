"""The tables between the game and VK: the Outbox (messages to VK), the Callback API's events
received and not applied yet, the incoming events already applied and where the long poll
stopped, and this database's identity towards VK."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .game import Game


class OutboxChannel(models.TextChoices):
    #: messages.send to one or more users (``peer_ids``).
    MESSAGE = "message", "Личное сообщение"
    #: board.createComment in ``topic_id`` (user token).
    BOARD = "board", "Обсуждение"
    #: messages.send to a chat (``peer_ids`` holds the chat peer id).
    CHAT = "chat", "Беседа"
    #: messages.sendMessageEventAnswer for a callback button; ``payload`` holds
    #: ``{"event_id", "user_id", "peer_id", "event_data"}``.
    EVENT_ANSWER = "event_answer", "Ответ на кнопку"
    #: messages.getInviteLink for the chat in ``payload["chat_peer_id"]``, then messages.send of
    #: ``text`` with ``{link}`` replaced to ``peer_ids``.
    INVITE = "invite", "Приглашение в беседу"
    #: messages.removeChatUser: ``payload`` holds ``{"chat_id", "member_id"}``.
    KICK = "kick", "Удаление из беседы"
    #: messages.createChat (the community becomes the chat's owner): ``payload`` holds
    #: ``{"title", "user_ids", "by"}``, ``text`` the title. Sent at most once: the request is
    #: recorded in ``result`` before the call, and a row whose answer was lost is not sent
    #: again (see ``vkbot.delivery.plan``). The new chat's peer id is linked to ``game``.
    CREATE_CHAT = "create_chat", "Создание беседы"


class OutboxStatus(models.TextChoices):
    PENDING = "pending", "Ждёт отправки"
    SENT = "sent", "Отправлено"
    FAILED = "failed", "Ошибка"


class Outbox(models.Model):
    """A message to VK, written in the same transaction as the change that causes it.

    The delivery worker drains pending rows; the ``random_id`` is derived from the row id and
    the deployment's offset (``outbox.ids``) so that a re-send after a crash
    is a no-op at VK.
    """

    game = models.ForeignKey(
        Game, null=True, blank=True, on_delete=models.CASCADE, related_name="outbox"
    )
    #: The community the message goes out as (its tokens send it): the game's, or for a
    #: reply outside a game the community the player wrote to. None: the environment's.
    group_id = models.BigIntegerField(null=True, blank=True)
    channel = models.CharField(max_length=16, choices=OutboxChannel.choices)
    peer_ids = models.JSONField(default=list, blank=True)
    topic_id = models.BigIntegerField(null=True, blank=True)
    text = models.TextField()
    keyboard = models.JSONField(null=True, blank=True)
    #: Channel-specific parameters (see OutboxChannel).
    payload = models.JSONField(null=True, blank=True)
    #: What the message is about (e.g. "role_card", "night_prompt"), for the GM and the tests.
    kind = models.CharField(max_length=48, blank=True)
    status = models.CharField(
        max_length=8, choices=OutboxStatus.choices, default=OutboxStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    #: A worker's lease on the row while it sends it; an expired lease may be taken again
    #: (the same ``random_id``/``guid`` makes the re-send a no-op at VK).
    locked_until = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "исходящее сообщение"
        verbose_name_plural = "исходящие сообщения"
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(channel="board", topic_id__isnull=False) | ~Q(channel="board"),
                name="board_post_has_topic",
            ),
        ]


class VkEvent(models.Model):
    """An incoming VK event already applied (long poll or Callback API).

    Recorded in the same transaction as the event's effect, so a redelivered event is applied
    at most once.
    """

    #: VK's id of the event, unique within its community (``group_id``).
    event_id = models.CharField(max_length=80)
    type = models.CharField(max_length=48)
    #: The community the event came from (0: not known, events recorded before communities).
    group_id = models.BigIntegerField(default=0)
    source = models.CharField(max_length=16, default="longpoll")
    game = models.ForeignKey(Game, null=True, blank=True, on_delete=models.SET_NULL)
    received_at = models.DateTimeField(auto_now_add=True)
    #: "<ExceptionClass>: <message>" when a handler crashed on the event (its effects were
    #: rolled back; the event is not retried). A database default, because the ingestion
    #: records events with a raw multi-row INSERT.
    error = models.TextField(blank=True, db_default="")

    class Meta:
        verbose_name = "событие VK"
        verbose_name_plural = "события VK"
        indexes = [models.Index(fields=["received_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["group_id", "event_id"], name="one_event_per_community"
            ),
        ]


class InboundEvent(models.Model):
    """A Callback API event received and not applied yet: the Callback inbox.

    The endpoint (``vkbot/views.py``) inserts the event (its JSON without ``secret``) and
    answers VK at once; the applier (``vkbot/inbox.py``) applies the rows in slices and
    deletes each slice's rows in the transaction that applies them, so a row is applied
    once and an event VK posts again is recorded once while it waits (and skipped by
    :class:`VkEvent` once applied).
    """

    group_id = models.BigIntegerField()
    #: VK's id of the event (``vkbot.pipeline.event_id_of``), unique within its community.
    event_id = models.CharField(max_length=80)
    #: The event as VK posted it, without its ``secret``.
    body = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "событие Callback API в очереди"
        verbose_name_plural = "события Callback API в очереди"
        constraints = [
            models.UniqueConstraint(
                fields=["group_id", "event_id"], name="one_inbound_event_per_community"
            ),
        ]
        indexes = [models.Index(fields=["group_id", "id"], name="inbound_by_community")]


class PollState(models.Model):
    """Where the Bots Long Poll stopped, so a restarted bot continues from there."""

    group_id = models.BigIntegerField(unique=True)
    ts = models.CharField(max_length=64, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "позиция Long Poll"
        verbose_name_plural = "позиции Long Poll"


class Deployment(models.Model):
    """This database's identity towards VK: one row (``pk=1``), created by the migration.

    VK drops a ``messages.send`` whose ``random_id`` it has seen from the community for that
    peer, and a board comment whose ``guid`` it has seen. Both are derived from Outbox row ids
    plus ``vk_id_offset``, a random number drawn once per database: a second database using the
    same community (a reinstall, a staging copy) has its own offset, so its row ids do not
    replay ids VK already knows. ``manage.py rotate_vk_ids`` draws a new one (after restoring
    an older backup, whose row ids were used again after it was taken).
    """

    vk_id_offset = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "установка"
        verbose_name_plural = "установка"
