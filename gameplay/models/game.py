"""The game's own tables: the game and its settings, the seats at its table, replacements, its
phases, and what players submit in them (votes, night actions, items spent).

Where a rule can be a database constraint it is one: one current vote per seat per day, one
role action per seat per night (and one team shot, one role strike, one use of each item), one
seat per VK user per game, one running game per discussion topic. No logic here: every write
goes through gameplay.services.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q

from gameplay.rules import Act, EarlyClose, Item, Role, Slot, Winner
from gameplay.themes import DEFAULT as DEFAULT_THEME
from gameplay.themes import THEMES

from .secrets import SecretField


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


def _active_unique(column: str, name: str) -> models.UniqueConstraint:
    """``column`` unique among the active games of each community."""
    active = Q(status__in=[s.value for s in ACTIVE_STATUSES]) & Q(**{f"{column}__isnull": False})
    return models.UniqueConstraint(fields=[column, "vk_group"], condition=active, name=name)


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
    #: The community the game belongs to, keyed by its VK id (so ``vk_group_id`` is the VK id).
    #: Every game has one: its messages go out as that community, with its tokens.
    vk_group = models.ForeignKey(
        "gameplay.Community",
        to_field="vk_id",
        db_column="vk_group_id",
        verbose_name="сообщество VK",
        on_delete=models.PROTECT,
        related_name="games",
    )
    recruit_topic_id = models.BigIntegerField("тема набора", null=True, blank=True)
    topic_id = models.BigIntegerField("тема игры", null=True, blank=True)
    spectator_chat_id = models.BigIntegerField("беседа ЗЗ (peer_id)", null=True, blank=True)
    spectator_chat_open = models.BooleanField("беседа ЗЗ открыта", default=False)
    #: VK ids of the GMs' own accounts: they may sit in the spectator chat.
    gm_vk_ids = models.JSONField("VK id ведущих", default=list, blank=True)

    # The verifiable deal (RULES.md §1): the seed (the current round's, ``DealRound``) stays
    # secret until the end, stored encrypted so that no query can compare it with a guess;
    # ``commitment`` is the hash of the deal in play.
    seed = SecretField("зерно раздачи", blank=True)
    commitment = models.CharField("хеш раздачи", max_length=64, blank=True)
    deal_from_seed = models.BooleanField("раздача из зерна", default=True)
    role_strike_used = models.BooleanField("ролевой удар мафии использован", default=False)

    winner = models.CharField("победитель", max_length=16, choices=_choices(Winner), blank=True)
    created_at = models.DateTimeField("создана", auto_now_add=True)
    started_at = models.DateTimeField("началась", null=True, blank=True)
    finished_at = models.DateTimeField("закончилась", null=True, blank=True)

    class Meta:
        verbose_name = "игра"
        verbose_name_plural = "игры"
        ordering = ["-created_at"]
        # Topic ids and chat peer ids are a community's own (community B's first chat is
        # 2000000001 as well as A's): each is unique among the active games of one community.
        # A sign-up topic and a spectator chat belong to one unfinished game at a time too (a
        # topic used as one game's sign-up topic and another's game topic is refused by
        # gameplay.services.setup.check_vk_tenancy).
        constraints = [
            _active_unique("topic_id", "one_active_game_per_topic"),
            _active_unique("recruit_topic_id", "one_active_game_per_recruit_topic"),
            _active_unique("spectator_chat_id", "one_active_game_per_spectator_chat"),
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
    # Nouns, so that a label needs no gender; the panel says «казнён»/«казнена» by the
    # player's (panel.labels.seat_state).
    EXECUTED = "executed", "Казнь"
    NIGHT = "night", "Убийство ночью"
    MODKILL = "modkill", "Модкилл"


SEX_CHOICES = [(0, "не указан"), (1, "женский"), (2, "мужской")]


class Seat(models.Model):
    """A player's place at the table; also a sign-up (before the deal) and a reserve entry."""

    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, related_name="seats", verbose_name="игра"
    )
    vk_user_id = models.BigIntegerField("VK id")
    name = models.CharField("имя", max_length=200)
    #: VK's users.get ``sex`` at sign-up (1 female, 2 male, 0 unknown): the texts' grammar.
    sex = models.PositiveSmallIntegerField("пол", choices=SEX_CHOICES, default=0)
    status = models.CharField(
        "состояние", max_length=16, choices=SeatStatus.choices, default=SeatStatus.PLAYER
    )
    number = models.PositiveSmallIntegerField("номер", null=True, blank=True)
    role = models.CharField("роль", max_length=16, choices=_choices(Role), blank=True)
    item = models.CharField("предмет", max_length=16, choices=_choices(Item), blank=True)
    item_used = models.BooleanField("предмет использован", default=False)
    alive = models.BooleanField("жив", default=True)
    death_cause = models.CharField(
        "как выбыл", max_length=16, choices=DeathCause.choices, blank=True
    )
    died_in = models.ForeignKey(
        "Phase",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name="выбыл в фазе",
    )
    strikes = models.PositiveSmallIntegerField("штрафы", default=0)
    #: Whether the community may write to this player (messages.isMessagesFromGroupAllowed).
    pm_allowed = models.BooleanField("сообщения разрешены", null=True, blank=True)
    #: The doctor's heal target that stood at the last night's close (RULES.md §4).
    last_heal_target = models.PositiveSmallIntegerField(
        "кого доктор лечил прошлой ночью", null=True, blank=True
    )
    signed_up_at = models.DateTimeField("записан", auto_now_add=True)

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
        verbose_name = "замена"
        verbose_name_plural = "замены"
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
        verbose_name = "фаза"
        verbose_name_plural = "фазы"
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
        verbose_name = "голос"
        verbose_name_plural = "голоса"
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
        verbose_name = "ночное действие"
        verbose_name_plural = "ночные действия"
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
        verbose_name = "использование предмета"
        verbose_name_plural = "использования предметов"
        constraints = [
            models.UniqueConstraint(fields=["game", "item"], name="each_item_used_once"),
        ]
