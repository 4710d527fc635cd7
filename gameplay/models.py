"""Tables and constraints of a game. No logic here: every write goes through gameplay.services.

Where a rule can be a database constraint it is one: one current vote per seat per day, one
role action per seat per night (and one team shot, one role strike, one use of each item), one
seat per VK user per game, one running game per discussion topic.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q

from gameplay.rules import Act, EarlyClose, Item, Role, Slot, Winner
from gameplay.themes import DEFAULT as DEFAULT_THEME
from gameplay.themes import THEMES


def _choices(enum: type) -> list[tuple[str, str]]:
    return [(m.value, getattr(m, "title", m.value)) for m in enum]  # type: ignore[attr-defined]


class GameStatus(models.TextChoices):
    RECRUITING = "recruiting", "Набор"
    DEALT = "dealt", "Роли розданы"
    RUNNING = "running", "Идёт"
    FINISHED = "finished", "Завершена"
    CANCELLED = "cancelled", "Отменена"


#: Statuses in which a game holds its discussion topic.
ACTIVE_STATUSES = (GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING)


class Game(models.Model):
    name = models.CharField("название", max_length=200)
    status = models.CharField(
        "статус", max_length=16, choices=GameStatus.choices, default=GameStatus.RECRUITING
    )
    gms = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="gm_games", blank=True, verbose_name="ведущие"
    )

    # Role counts (RULES.md §1; the 26-player table is the default).
    mafia_count = models.PositiveSmallIntegerField("мафия", default=6)
    commissar_count = models.PositiveSmallIntegerField("комиссар", default=1)
    doctor_count = models.PositiveSmallIntegerField("доктор", default=1)
    maniac_count = models.PositiveSmallIntegerField("маньяк", default=1)
    civilian_count = models.PositiveSmallIntegerField("мирные жители", default=17)

    # Settings.
    early_close = models.CharField(
        "досрочное закрытие дня",
        max_length=16,
        choices=[(EarlyClose.MAJORITY.value, "большинство"), (EarlyClose.ALL.value, "все")],
        default=EarlyClose.MAJORITY.value,
    )
    reveal_on_night_death = models.BooleanField("раскрывать роль убитых ночью", default=False)
    auto_publish = models.BooleanField("публиковать ночь без проверки", default=False)
    day_length = models.DurationField("длина дня", default=timedelta(hours=24))
    night_length = models.DurationField("длина ночи", default=timedelta(hours=12))
    #: Minutes before a deadline at which players who have not acted are reminded.
    reminders = models.JSONField("напоминания (минуты до срока)", default=list, blank=True)
    language = models.CharField("язык", max_length=8, default="ru")
    time_zone = models.CharField("часовой пояс", max_length=64, default="Europe/Moscow")
    theme = models.CharField(
        "тема оформления", max_length=32, choices=list(THEMES.items()), default=DEFAULT_THEME
    )
    #: The game's own versions of its theme's texts (slot -> template), see gameplay.themes.
    theme_texts = models.JSONField("тексты темы", default=dict, blank=True)

    # VK ids it uses.
    vk_group_id = models.BigIntegerField("сообщество VK", null=True, blank=True)
    recruit_topic_id = models.BigIntegerField("тема набора", null=True, blank=True)
    topic_id = models.BigIntegerField("тема игры", null=True, blank=True)
    spectator_chat_id = models.BigIntegerField("беседа ЗЗ (peer_id)", null=True, blank=True)
    spectator_chat_open = models.BooleanField("беседа ЗЗ открыта", default=False)
    #: VK ids of the GMs' own accounts: they may sit in the spectator chat.
    gm_vk_ids = models.JSONField("VK id ведущих", default=list, blank=True)

    # The verifiable deal (RULES.md §1): the seed (the current round's, ``DealRound``) stays
    # secret until the end; ``commitment`` is the hash of the deal in play.
    seed = models.CharField("зерно раздачи", max_length=128, blank=True)
    commitment = models.CharField("хеш раздачи", max_length=64, blank=True)
    deal_from_seed = models.BooleanField("раздача из зерна", default=True)
    role_strike_used = models.BooleanField("ролевой удар мафии использован", default=False)

    winner = models.CharField(
        "победитель", max_length=16, choices=_choices(Winner), blank=True
    )
    created_at = models.DateTimeField("создана", auto_now_add=True)
    started_at = models.DateTimeField("началась", null=True, blank=True)
    finished_at = models.DateTimeField("закончилась", null=True, blank=True)

    class Meta:
        verbose_name = "игра"
        verbose_name_plural = "игры"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic_id"],
                condition=Q(status__in=[s.value for s in ACTIVE_STATUSES])
                & Q(topic_id__isnull=False),
                name="one_active_game_per_topic",
            ),
            # A sign-up topic and a spectator chat belong to one unfinished game at a time
            # (a topic used as one game's sign-up topic and another's game topic is refused
            # by gameplay.services.setup.check_vk_tenancy).
            models.UniqueConstraint(
                fields=["recruit_topic_id"],
                condition=Q(status__in=[s.value for s in ACTIVE_STATUSES])
                & Q(recruit_topic_id__isnull=False),
                name="one_active_game_per_recruit_topic",
            ),
            models.UniqueConstraint(
                fields=["spectator_chat_id"],
                condition=Q(status__in=[s.value for s in ACTIVE_STATUSES])
                & Q(spectator_chat_id__isnull=False),
                name="one_active_game_per_spectator_chat",
            ),
            models.CheckConstraint(
                condition=Q(early_close__in=[e.value for e in EarlyClose]),
                name="game_early_close_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SeatStatus(models.TextChoices):
    PLAYER = "player", "Игрок"
    RESERVE = "reserve", "Запас"
    WITHDRAWN = "withdrawn", "Снялся"


class DeathCause(models.TextChoices):
    EXECUTED = "executed", "Казнён"
    NIGHT = "night", "Убит ночью"
    MODKILL = "modkill", "Модкилл"


SEX_CHOICES = [(0, "не указан"), (1, "женский"), (2, "мужской")]


class Seat(models.Model):
    """A player's place at the table; also a sign-up (before the deal) and a reserve entry."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    vk_user_id = models.BigIntegerField("VK id")
    name = models.CharField("имя", max_length=200)
    #: VK's users.get ``sex`` at sign-up (1 female, 2 male, 0 unknown): the texts' grammar.
    sex = models.PositiveSmallIntegerField("пол", choices=SEX_CHOICES, default=0)
    status = models.CharField(max_length=16, choices=SeatStatus.choices, default=SeatStatus.PLAYER)
    number = models.PositiveSmallIntegerField("номер", null=True, blank=True)
    role = models.CharField("роль", max_length=16, choices=_choices(Role), blank=True)
    item = models.CharField("предмет", max_length=16, choices=_choices(Item), blank=True)
    item_used = models.BooleanField(default=False)
    alive = models.BooleanField(default=True)
    death_cause = models.CharField(max_length=16, choices=DeathCause.choices, blank=True)
    died_in = models.ForeignKey(
        "Phase", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    strikes = models.PositiveSmallIntegerField(default=0)
    #: Whether the community may write to this player (messages.isMessagesFromGroupAllowed).
    pm_allowed = models.BooleanField(null=True, blank=True)
    #: The doctor's heal target that stood at the last night's close (RULES.md §4).
    last_heal_target = models.PositiveSmallIntegerField(null=True, blank=True)
    signed_up_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "место"
        verbose_name_plural = "места"
        ordering = ["game", "number", "signed_up_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["game", "vk_user_id"],
                condition=Q(status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE]),
                name="one_seat_per_vk_user_per_game",
            ),
            models.UniqueConstraint(
                fields=["game", "number"],
                condition=Q(number__isnull=False),
                name="unique_seat_number",
            ),
        ]
        indexes = [models.Index(fields=["vk_user_id"])]

    def __str__(self) -> str:
        return f"№{self.number} {self.name}" if self.number else self.name


class Replacement(models.Model):
    """A seat handed to another VK account (RULES.md P6)."""

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="replacements")
    phase = models.ForeignKey("Phase", null=True, on_delete=models.SET_NULL, related_name="+")
    old_vk_user_id = models.BigIntegerField()
    old_name = models.CharField(max_length=200)
    new_vk_user_id = models.BigIntegerField()
    new_name = models.CharField(max_length=200)
    old_strikes = models.PositiveSmallIntegerField(default=0)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


class PhaseKind(models.TextChoices):
    DAY = "day", "День"
    NIGHT = "night", "Ночь"


class PhaseStatus(models.TextChoices):
    OPEN = "open", "Идёт"
    #: A night closed with a draft resolution the GM reviews.
    REVIEW = "review", "На проверке"
    DONE = "done", "Завершена"


class Phase(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="phases")
    kind = models.CharField(max_length=8, choices=PhaseKind.choices)
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=8, choices=PhaseStatus.choices, default=PhaseStatus.OPEN)
    opened_at = models.DateTimeField()
    deadline = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    closed_early = models.BooleanField(default=False)
    #: A night re-opened by the GM for the mafia's shot alone (RULES.md G2).
    reopened_for = models.CharField(max_length=16, blank=True)
    #: Reminder offsets (minutes) already sent for this phase.
    reminded = models.JSONField(default=list, blank=True)
    #: Day: the tally (rules DayResult). Night: the draft, then final, resolution.
    result = models.JSONField(null=True, blank=True)
    #: The GM's story paragraph for the phase's public result post (empty: the theme's text).
    story = models.TextField("рассказ ведущего", blank=True, max_length=2000)

    class Meta:
        ordering = ["game", "opened_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "kind", "number"], name="one_phase_per_number"),
            models.UniqueConstraint(
                fields=["game"],
                condition=Q(status__in=["open", "review"]),
                name="one_current_phase_per_game",
            ),
        ]
        indexes = [models.Index(fields=["status", "deadline"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.number}"

    @property
    def is_day(self) -> bool:
        return self.kind == PhaseKind.DAY


class Source(models.TextChoices):
    BOARD = "board", "Обсуждение"
    PM = "pm", "Личные сообщения"
    PANEL = "panel", "Панель"
    REPLAY = "replay", "Сценарий"


class Vote(models.Model):
    """Every vote ever cast; ``current`` marks the one that counts (RULES.md V2)."""

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="votes")
    voter = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="votes_cast")
    target = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="votes_received")
    early = models.BooleanField(default=False)
    current = models.BooleanField(default=True)
    #: Voided by a modkill of the voter or the target (RULES.md V7).
    void = models.BooleanField(default=False)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.PM)
    vk_post_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["phase", "voter"], condition=Q(current=True), name="one_current_vote"
            ),
        ]


class NightAction(models.Model):
    """Every night submission (role actions, the mafia's shot and role strike, item uses).

    ``slot`` says what a submission replaces (gameplay.rules.Slot); ``current`` marks the one
    that stands.
    """

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="actions")
    actor = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="actions")
    act = models.CharField(max_length=16, choices=[(a.value, a.value) for a in Act])
    slot = models.CharField(max_length=16, choices=[(s.value, s.value) for s in Slot])
    target = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="targeted_by")
    guess = models.CharField(max_length=16, choices=_choices(Role), blank=True)
    current = models.BooleanField(default=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.PM)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["phase", "actor"],
                condition=Q(current=True, slot="role"),
                name="one_role_action_per_seat_per_night",
            ),
            models.UniqueConstraint(
                fields=["phase", "slot"],
                condition=Q(current=True, slot__in=["mafia_shot", "role_strike"]),
                name="one_team_action_per_night",
            ),
            models.UniqueConstraint(
                fields=["phase", "act"],
                condition=Q(current=True, slot="item"),
                name="one_use_per_item_per_night",
            ),
        ]


class ItemUse(models.Model):
    """An item spent at a night's resolution (RULES.md §1: spent even when blocked)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="item_uses")
    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="item_uses")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="item_uses")
    item = models.CharField(max_length=16, choices=_choices(Item))
    target = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="+")
    blocked = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "item"], name="each_item_used_once"),
        ]


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
        ordering = ["deal_round", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["game", "deal_round", "attempt"], name="unique_draw_attempt"
            ),
        ]


class DealRound(models.Model):
    """A seed of the deal and its public commitment (gameplay/rules/deal.py): round 1 opens
    with the sign-up, a later one only by the GM's decision (an override). The seed is drawn by
    the server and revealed only at the end; the deal is this seed's for the final roster."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="deal_rounds")
    number = models.PositiveSmallIntegerField()
    seed = models.CharField(max_length=128)
    commitment = models.CharField(max_length=64)
    #: The topic its commitment was posted in (None: not posted yet, the game had no topic).
    topic_id = models.BigIntegerField(null=True, blank=True)
    #: How many deals were made from this seed (the GM saw each of them).
    deals = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="unique_deal_round"),
        ]


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
        ordering = ["created_at", "id"]


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
        ordering = ["game", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seq"], name="unique_event_seq"),
        ]
        indexes = [models.Index(fields=["game", "kind"])]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.seq} {self.kind}"


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
    the deployment's offset (``gameplay.services.deployment``) so that a re-send after a crash
    is a no-op at VK.
    """

    game = models.ForeignKey(
        Game, null=True, blank=True, on_delete=models.CASCADE, related_name="outbox"
    )
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

    event_id = models.CharField(max_length=80, unique=True)
    type = models.CharField(max_length=48)
    group_id = models.BigIntegerField(null=True, blank=True)
    source = models.CharField(max_length=16, default="longpoll")
    game = models.ForeignKey(Game, null=True, blank=True, on_delete=models.SET_NULL)
    received_at = models.DateTimeField(auto_now_add=True)
    #: "<ExceptionClass>: <message>" when a handler crashed on the event (its effects were
    #: rolled back; the event is not retried). A database default, because the ingestion
    #: records events with a raw multi-row INSERT.
    error = models.TextField(blank=True, db_default="")

    class Meta:
        indexes = [models.Index(fields=["received_at"])]


class PollState(models.Model):
    """Where the Bots Long Poll stopped, so a restarted bot continues from there."""

    group_id = models.BigIntegerField(unique=True)
    ts = models.CharField(max_length=64, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class FlagKind(models.TextChoices):
    DEAD_POST = "dead_post", "Пост выбывшего игрока"
    PROFANITY = "profanity", "Мат или оскорбление"
    REVEAL = "reveal", "Раскрытие ночного действия"
    EDITED_VOTE = "edited_vote", "Изменён или удалён пост с голосом"
    INTRUDER = "intruder", "Посторонний в беседе ЗЗ"
    NO_MAFIA_SHOT = "no_mafia_shot", "Мафия не стреляла"
    DELIVERY = "delivery", "Сообщение не доставлено"


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
        constraints = [
            models.UniqueConstraint(fields=["game", "vk_user_id"], name="one_spectator_row"),
        ]


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
