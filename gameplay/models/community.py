"""The VK communities this deployment hosts, and the people who run games in them.

A community is data: its VK id, its tokens (encrypted at rest, ``gameplay.models.secrets``),
its Callback API secret and confirmation code when the deployment runs in callback mode, and
its members (an owner, who manages the GMs, and GMs, who create and run its games). The
environment's community (``VK_GROUP_ID`` with ``VK_GROUP_TOKEN``/``VK_USER_TOKEN``) is one
row too, written on start by ``gameplay.services.communities.community_sync_env``.

Every game belongs to one community (``Game.vk_group``, keyed by the VK id). Disconnecting a
community stops its traffic (runbot stops its long poll, the Callback endpoint refuses its
events, delivery holds its rows) and keeps its games.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .secrets import SecretField

#: The columns of :class:`Community` stored encrypted (``manage.py rotate_token_keys``).
SECRET_FIELDS = (
    "group_token",
    "user_token",
    "user_refresh_token",
    "user_device_id",
    "callback_secret",
)

#: The VK id of the row for games that reach no VK community: the replays of scenarios
#: (``gameplay.replay``), and the games of no community a deployment without an environment's
#: community had when every game came to need one (migration 0016). No VK community has it, so
#: it is never connected and nothing of its games goes out; no one is its member, so only
#: operators see them.
NO_COMMUNITY_VK_ID = 0
#: Its name, as operators see it.
NO_COMMUNITY_NAME = "Без сообщества VK"


class AdminTokenSource(models.TextChoices):
    """How a community admin's user token came to the deployment."""

    VK_ID = "vkid", "вход через VK ID"
    PASTED = "pasted", "вставлен вручную"


class Community(models.Model):
    vk_id = models.BigIntegerField("id сообщества VK", unique=True)
    name = models.CharField("название", max_length=200, blank=True)
    screen_name = models.CharField("короткий адрес", max_length=100, blank=True)
    #: The community token (messages, long poll, chats).
    group_token = SecretField("ключ доступа сообщества", blank=True)
    #: A community admin's user token (board posts as the community).
    user_token = SecretField("ключ администратора", blank=True)
    #: How the admin gave it: signed in with VK ID (it renews itself) or pasted (it does not).
    user_token_source = models.CharField(
        "откуда ключ администратора", max_length=8, choices=AdminTokenSource.choices, blank=True
    )
    #: VK ID's refresh token (single-use: each renewal spends it and brings the next one) and
    #: the device id the pair is bound to.
    user_refresh_token = SecretField("ключ продления", blank=True)
    user_device_id = SecretField("устройство VK ID", blank=True)
    #: When the admin's token expires (None: unknown, or never) and when it was issued.
    user_token_expires_at = models.DateTimeField("ключ администратора до", null=True, blank=True)
    user_token_issued_at = models.DateTimeField("ключ администратора выдан", null=True, blank=True)
    user_token_renewals = models.PositiveIntegerField("продлений ключа администратора", default=0)
    #: When VK refused the admin's token for good (a renewal refused, a revoked or expired key
    #: that cannot renew itself): board posts wait until the admin signs in again. Why, for the
    #: operator (English; VK ID's error code, never a token).
    user_token_refused_at = models.DateTimeField(
        "ключ администратора отклонён", null=True, blank=True
    )
    user_token_problem = models.CharField("почему ключ отклонён", max_length=200, blank=True)
    #: A fingerprint of the environment's refresh token (VK_USER_REFRESH_TOKEN) the stored pair
    #: descends from: the same one is never sent to VK ID twice, a new one replaces the pair.
    user_token_seed = models.CharField("ключ продления из окружения", max_length=64, blank=True)
    #: The Callback API's secret for this community's server, and the code VK's first
    #: request must be answered with.
    callback_secret = SecretField("секретный ключ Callback API", blank=True)
    confirmation_code = models.CharField(
        "код подтверждения Callback API", max_length=64, blank=True
    )
    callback_server_id = models.BigIntegerField("сервер Callback API в VK", null=True, blank=True)
    connected = models.BooleanField("подключено", default=False)
    #: The row mirrors the environment (VK_GROUP_ID …); the panel does not edit its tokens.
    from_env = models.BooleanField("из настроек сервера", default=False)
    #: Whether a GM of another community may see this community's games in a player's history.
    history_public = models.BooleanField("история игр открыта другим сообществам", default=False)
    #: What the last connection check found: the token's rights, what was set up through the
    #: API and what is left for the admin to do in VK (``gameplay.services.communities``).
    setup = models.JSONField("проверка подключения", default=dict, blank=True)
    created_at = models.DateTimeField("добавлено", auto_now_add=True)
    connected_at = models.DateTimeField("подключено", null=True, blank=True)
    disconnected_at = models.DateTimeField("отключено", null=True, blank=True)

    class Meta:
        verbose_name = "сообщество"
        verbose_name_plural = "сообщества"
        ordering = ["name", "vk_id"]

    def __str__(self) -> str:
        return self.name or f"club{self.vk_id}"


class CommunityRole(models.TextChoices):
    OWNER = "owner", "Владелец"
    GM = "gm", "Ведущий"


class CommunityMember(models.Model):
    """A panel user who may run games in a community (an owner also manages its GMs)."""

    community = models.ForeignKey(Community, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="community_memberships"
    )
    role = models.CharField(
        "роль", max_length=8, choices=CommunityRole.choices, default=CommunityRole.GM
    )
    added_at = models.DateTimeField("добавлен", auto_now_add=True)

    class Meta:
        verbose_name = "участник сообщества"
        verbose_name_plural = "участники сообщества"
        constraints = [
            models.UniqueConstraint(fields=["community", "user"], name="one_membership_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} — {self.get_role_display()} ({self.community})"
