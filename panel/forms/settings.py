"""The game settings form and its fields (topic links, durations, reminders, time zones)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, cast

from django import forms
from django.contrib.auth import get_user_model

from gameplay.messages import known_zone
from gameplay.models import Community, Game
from gameplay.refusals import (
    CommunityRequired,
    PhaseLengthOutOfRange,
    TopicOfAnotherCommunity,
    UnknownTimeZone,
)
from gameplay.rules import EarlyClose, RoleCounts, RuleViolation
from gameplay.rules.errors import InvalidCommand
from gameplay.selectors.communities import communities_for, gm_choices
from gameplay.services.vkrefs import parse_vk_user
from gameplay.themes import DEFAULT as DEFAULT_THEME
from gameplay.themes import THEMES

_TOPIC = re.compile(
    r"^(?:(?:https?://)?(?:m\.|www\.)?vk\.(?:com|ru)/)?topic-(\d{1,15})_(\d{1,15})(?:\?.*)?$",
    re.IGNORECASE,
)
_DURATION = re.compile(r"^(\d{1,3})(?::([0-5]\d))?$")


#: Time zones a GM picks from, as Russians name them (any other valid zone is kept as is).
TIME_ZONES = [
    ("Europe/Kaliningrad", "Калининград (МСК−1)"),
    ("Europe/Moscow", "Москва (МСК)"),
    ("Europe/Samara", "Самара (МСК+1)"),
    ("Asia/Yekaterinburg", "Екатеринбург (МСК+2)"),
    ("Asia/Omsk", "Омск (МСК+3)"),
    ("Asia/Novosibirsk", "Новосибирск (МСК+4)"),
    ("Asia/Krasnoyarsk", "Красноярск (МСК+4)"),
    ("Asia/Irkutsk", "Иркутск (МСК+5)"),
    ("Asia/Yakutsk", "Якутск (МСК+6)"),
    ("Asia/Vladivostok", "Владивосток (МСК+7)"),
    ("Asia/Magadan", "Магадан (МСК+8)"),
    ("Asia/Kamchatka", "Камчатка (МСК+9)"),
    ("Europe/Minsk", "Минск (МСК)"),
    ("Europe/Kyiv", "Киев (МСК−1, летом МСК)"),
    ("Asia/Almaty", "Алматы (МСК+2)"),
]


class TopicField(forms.CharField):
    """A discussion topic: its id (``789``) or link (``vk.com/topic-123_789``). Cleans to
    ``(group_id or None, topic_id)`` or None when empty."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 200)
        kwargs.setdefault(
            "widget",
            forms.TextInput(
                attrs={"class": "vTextField", "placeholder": "https://vk.com/topic-123456_789"}
            ),
        )
        super().__init__(**kwargs)

    def clean(self, value: Any) -> tuple[int | None, int] | None:
        raw = (super().clean(value) or "").strip()
        if not raw:
            return None
        if raw.isascii() and raw.isdigit():  # «²» is a digit to str.isdigit, not to int()
            return None, int(raw)
        match = _TOPIC.match(raw)
        if not match:
            raise forms.ValidationError(
                "Укажите номер темы или ссылку вида vk.com/topic-123456_789."
            )
        return int(match.group(1)), int(match.group(2))


class DurationField(forms.CharField):
    """A phase length as «ЧЧ» or «ЧЧ:ММ» (hours and minutes)."""

    def clean(self, value: Any) -> timedelta:
        raw = (super().clean(value) or "").strip()
        match = _DURATION.match(raw)
        if not match:
            raise forms.ValidationError("Укажите длину как ЧЧ или ЧЧ:ММ, например 24 или 1:30.")
        length = timedelta(hours=int(match.group(1)), minutes=int(match.group(2) or 0))
        if length < timedelta(minutes=5) or length > timedelta(days=30):
            raise forms.ValidationError(PhaseLengthOutOfRange().reason)
        return length


class RemindersField(forms.CharField):
    """Reminder offsets in minutes before a deadline: «180, 60»."""

    def clean(self, value: Any) -> list[int]:
        raw = (super().clean(value) or "").strip()
        if not raw:
            return []
        out = set()
        for part in re.split(r"[,;\s]+", raw):
            if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= 10080:
                raise forms.ValidationError(
                    f"«{part}» — не число минут от 1 до 10080. Пример: 180, 60."
                )
            out.add(int(part))
        return sorted(out, reverse=True)


def duration_text(value: timedelta | None) -> str:
    if not value:
        return ""
    minutes = int(value.total_seconds() // 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


class GameSettingsForm(forms.Form):
    """A new game, or the settings of an existing one (role counts only before the deal)."""

    name = forms.CharField(
        label="Название", max_length=200, widget=forms.TextInput(attrs={"class": "vTextField"})
    )
    topic = TopicField(
        label="Тема игры",
        help_text="Где идёт игра и голосование: номер темы или ссылка vk.com/topic-…; после "
        "раздачи ролей тему можно заменить другой, но не убрать.",
    )
    recruit_topic = TopicField(label="Тема набора", help_text="Где идёт запись «+».")
    vk_group_id = forms.TypedChoiceField(
        label="Сообщество",
        coerce=int,
        empty_value=None,
        required=False,
        help_text="Где идёт игра: одно из ваших сообществ («Сообщества» на главной). После "
        "раздачи ролей не меняется.",
    )
    mafia_count = forms.IntegerField(label="Мафия", min_value=0, max_value=50, initial=6)
    commissar_count = forms.IntegerField(label="Комиссар", min_value=0, max_value=1, initial=1)
    doctor_count = forms.IntegerField(label="Доктор", min_value=0, max_value=1, initial=1)
    maniac_count = forms.IntegerField(label="Маньяк", min_value=0, max_value=1, initial=1)
    civilian_count = forms.IntegerField(
        label="Мирные жители", min_value=0, max_value=200, initial=17
    )
    day_length = DurationField(
        label="Длина дня",
        initial="24:00",
        help_text="ЧЧ:ММ. Меняет сроки следующих дней; текущий срок — кнопками «Срок».",
    )
    night_length = DurationField(label="Длина ночи", initial="12:00", help_text="ЧЧ:ММ")
    reminders = RemindersField(
        label="Напоминания",
        required=False,
        initial="180, 60",
        help_text="За сколько минут до срока напомнить тем, кто не проголосовал или не сходил.",
    )
    early_close = forms.ChoiceField(
        label="Досрочное закрытие дня",
        choices=[
            (EarlyClose.MAJORITY.value, "больше половины живых голосуют досрочно"),
            (EarlyClose.ALL.value, "все живые голосуют досрочно"),
        ],
        initial=EarlyClose.MAJORITY.value,
    )
    reveal_on_night_death = forms.BooleanField(label="Раскрывать роль убитых ночью", required=False)
    auto_publish = forms.BooleanField(
        label="Публиковать итоги ночи без проверки ведущим", required=False
    )
    time_zone = forms.CharField(
        label="Часовой пояс",
        max_length=64,
        initial="Europe/Moscow",
        widget=forms.Select(choices=[]),
        help_text="Сроки в панели и в теме — по этому времени.",
    )
    theme = forms.ChoiceField(
        label="Тема оформления",
        choices=list(THEMES.items()),
        initial=DEFAULT_THEME,
        required=False,
        help_text="Карточки ролей и рассказ вокруг итогов; тексты темы можно поправить на "
        "вкладке «Тексты».",
    )
    gm_vk_ids = forms.CharField(
        label="VK-страницы ведущих",
        required=False,
        max_length=2000,
        widget=forms.TextInput(
            attrs={"class": "vTextField", "placeholder": "vk.com/id123, vk.com/id456"}
        ),
        help_text="Ваши страницы VK: бот не удаляет их из беседы зрителей. Через запятую.",
    )
    co_gms = forms.ModelMultipleChoiceField(
        label="Ведущие",
        queryset=get_user_model().objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Кто ещё ведёт эту игру (учётные записи с доступом к панели).",
    )

    COUNT_FIELDS = (
        "mafia_count",
        "commissar_count",
        "doctor_count",
        "maniac_count",
        "civilian_count",
    )

    def __init__(
        self,
        *args: Any,
        counts_locked: bool = False,
        user: Any = None,
        game: Game | None = None,
        **kwargs: Any,
    ) -> None:
        """``user``: who fills the form (whose communities and people it offers); ``game``:
        the game whose settings these are (None: a new game)."""
        super().__init__(*args, **kwargs)
        zone = str(
            (self.data.get("time_zone") if self.is_bound else None)
            or self.initial.get("time_zone")
            or "Europe/Moscow"
        )
        choices = list(TIME_ZONES)
        if zone not in dict(choices):
            choices.append((zone, zone))
        self.fields["time_zone"].widget.choices = choices
        # Only the people of the game's community (of a new game: of the user's communities).
        co_gms = cast("forms.ModelMultipleChoiceField[Any]", self.fields["co_gms"])
        co_gms.queryset = gm_choices(user=user, game=game) if user is not None else co_gms.queryset
        co_gms.label_from_instance = lambda u: u.get_username()  # type: ignore[method-assign,assignment]  # Django's documented override
        self._communities(user)
        self.counts_locked = counts_locked
        if counts_locked:
            for name in self.COUNT_FIELDS:
                self.fields[name].disabled = True
                self.fields[name].help_text = "Состав меняется только до раздачи ролей."

    def _communities(self, user: Any) -> None:
        """The community is one of the user's (the game's own stays listed when editing)."""
        rows = list(communities_for(user)) if user is not None else []
        current = self.initial.get("vk_group_id")
        if current is not None and current not in {c.vk_id for c in rows}:
            rows += list(Community.objects.filter(vk_id=current))
        self.communities = {c.vk_id: c for c in rows}
        field = cast(forms.ChoiceField, self.fields["vk_group_id"])
        field.choices = [("", "—")] + [(c.vk_id, f"{c} (club{c.vk_id})") for c in rows]
        field.required = True  # every game belongs to a community
        field.error_messages["required"] = CommunityRequired().reason
        if len(rows) == 1 and current is None:
            self.initial["vk_group_id"] = rows[0].vk_id
        if not rows:
            field.help_text = (
                "Вы пока не ведущий ни одного сообщества: подключите своё "
                "(«Сообщества» → «Подключить сообщество») или попросите "
                "владельца сообщества добавить вас."
            )

    @classmethod
    def initial_for(cls, game: Game) -> dict[str, Any]:
        def topic(topic_id: int | None) -> str:
            if topic_id is None:
                return ""
            if game.vk_group_id:
                return f"https://vk.com/topic-{game.vk_group_id}_{topic_id}"
            return str(topic_id)

        return {
            "name": game.name,
            "topic": topic(game.topic_id),
            "recruit_topic": topic(game.recruit_topic_id),
            "vk_group_id": game.vk_group_id,
            **{name: getattr(game, name) for name in cls.COUNT_FIELDS},
            "day_length": duration_text(game.day_length),
            "night_length": duration_text(game.night_length),
            "reminders": ", ".join(str(m) for m in game.reminders or []),
            "early_close": game.early_close,
            "reveal_on_night_death": game.reveal_on_night_death,
            "auto_publish": game.auto_publish,
            "time_zone": game.time_zone,
            "theme": game.theme,
            "gm_vk_ids": ", ".join(f"vk.com/id{i}" for i in game.gm_vk_ids or []),
            "co_gms": list(game.gms.all()),
        }

    def clean_gm_vk_ids(self) -> list[int]:
        ids: list[int] = []
        for part in re.split(r"[,;\s]+", self.cleaned_data["gm_vk_ids"].strip()):
            if part:
                try:
                    vk_id = parse_vk_user(text=part)
                except InvalidCommand as e:
                    raise forms.ValidationError(e.reason) from None
                if vk_id not in ids:
                    ids.append(vk_id)
        return ids

    def clean_theme(self) -> str:
        """The chosen theme; a form sent without one keeps the game's (the default for a new
        game)."""
        return self.cleaned_data.get("theme") or self.initial.get("theme") or DEFAULT_THEME

    def clean_time_zone(self) -> str:
        tz = self.cleaned_data["time_zone"].strip()
        if known_zone(tz) is None:
            raise forms.ValidationError(UnknownTimeZone(zone=tz).reason)
        return tz

    def clean(self) -> dict[str, Any]:
        data = cast("dict[str, Any]", super().clean())  # a form's cleaned_data
        if all(data.get(n) is not None for n in self.COUNT_FIELDS):
            counts = self.counts()
            try:
                counts.validate()
            except RuleViolation as e:
                raise forms.ValidationError(e.reason) from None
        groups = {t[0] for t in (data.get("topic"), data.get("recruit_topic")) if t and t[0]}
        if len(groups) > 1:
            raise forms.ValidationError("Темы набора и игры должны быть в одном сообществе.")
        chosen = data.get("vk_group_id")
        if groups and chosen and chosen not in groups:
            raise forms.ValidationError(
                TopicOfAnotherCommunity(community=str(self.communities[chosen])).reason
            )
        return data

    def counts(self) -> RoleCounts:
        d = self.cleaned_data
        return RoleCounts(
            mafia=d["mafia_count"],
            commissar=d["commissar_count"],
            doctor=d["doctor_count"],
            maniac=d["maniac_count"],
            civilian=d["civilian_count"],
        )

    def settings(self) -> dict[str, Any]:
        """The Game fields to save (``gameplay.services.settings.SETTINGS_FIELDS``)."""
        d = self.cleaned_data
        return {
            "name": d["name"].strip(),
            "vk_group_id": d.get("vk_group_id"),
            "topic_id": d["topic"][1] if d.get("topic") else None,
            "recruit_topic_id": d["recruit_topic"][1] if d.get("recruit_topic") else None,
            "day_length": d["day_length"],
            "night_length": d["night_length"],
            "reminders": d["reminders"],
            "early_close": d["early_close"],
            "reveal_on_night_death": d["reveal_on_night_death"],
            "auto_publish": d["auto_publish"],
            "time_zone": d["time_zone"],
            "gm_vk_ids": d["gm_vk_ids"],
            "theme": d["theme"],
        }
