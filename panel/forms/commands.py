"""The forms of the GM's commands (players, phases, discipline, the chat, the log): they parse and
validate; the views hand the result to one service."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from django import forms

from gameplay.rules import Winner
from gameplay.rules.errors import InvalidCommand
from gameplay.services.signup import parse_player_lines
from gameplay.services.vkrefs import chat_peer_id, parse_vk_user


def _service_error(field: forms.Field, value: str, parse: Any) -> Any:
    try:
        return parse(text=value)
    except InvalidCommand as e:
        raise forms.ValidationError(e.reason) from None


class VkUserField(forms.CharField):
    """A VK user by id or link (see ``gameplay.services.vkrefs.parse_vk_user``)."""

    def clean(self, value: Any) -> int:
        raw = super().clean(value)
        return _service_error(self, raw, parse_vk_user)


class PlayerAddForm(forms.Form):
    vk = VkUserField(
        label="VK id или ссылка",
        max_length=200,
        widget=forms.TextInput(attrs={"placeholder": "https://vk.com/id123"}),
    )
    name = forms.CharField(
        label="Имя",
        max_length=200,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "как его звать в игре"}),
    )
    reserve = forms.BooleanField(label="в запас", required=False)


class PlayerBulkForm(forms.Form):
    lines = forms.CharField(
        label="Список",
        widget=forms.Textarea(
            attrs={"rows": 6, "placeholder": "vk.com/id123 Аня\nid456 Борис\n789"}
        ),
        help_text="По одному на строку: ссылка или id, затем имя.",
    )
    reserve = forms.BooleanField(label="в запас", required=False)

    def clean_lines(self) -> str:
        text = self.cleaned_data["lines"]
        _service_error(self.fields["lines"], text, parse_player_lines)
        return text


class ExtendForm(forms.Form):
    minutes = forms.IntegerField(label="на минут", min_value=1, max_value=30 * 24 * 60)


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Причина", max_length=1000, required=False, widget=forms.TextInput(attrs={"size": 60})
    )


class RequiredReasonForm(forms.Form):
    reason = forms.CharField(
        label="Причина", max_length=1000, widget=forms.TextInput(attrs={"size": 60})
    )


class PunishForm(forms.Form):
    """A modkill or a manual strike: the player is told the reason privately, so it is
    required (spaces alone are no reason)."""

    reason = forms.CharField(
        label="Причина",
        max_length=1000,
        widget=forms.TextInput(attrs={"size": 60}),
        error_messages={"required": "Укажите причину: игрок получит её в личном сообщении."},
        help_text="Её получит игрок в личном сообщении; в теме её не будет.",
    )


class NightEditForm(forms.Form):
    deaths = forms.TypedMultipleChoiceField(
        label="Погибают этой ночью", coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    reason = forms.CharField(
        label="Причина правки",
        max_length=1000,
        widget=forms.TextInput(attrs={"size": 60}),
        error_messages={"required": "Укажите причину правки: она попадёт в журнал и в итоги игры."},
    )

    def __init__(
        self, *args: Any, living: Sequence[tuple[int | None, str]] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        deaths = cast(forms.ChoiceField, self.fields["deaths"])
        deaths.choices = [(n, f"№{n} {name}") for n, name in living]


class ReplaceForm(forms.Form):
    reserve = forms.TypedChoiceField(
        label="Игрок из запаса", coerce=int, required=False, empty_value=None
    )
    vk = forms.CharField(label="или VK id / ссылка", max_length=200, required=False)
    name = forms.CharField(label="Имя", max_length=200, required=False)
    reason = forms.CharField(label="Причина", max_length=1000, required=False)

    def __init__(self, *args: Any, reserves: Sequence[Any] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reserves = {s.pk: s for s in reserves}
        cast(forms.ChoiceField, self.fields["reserve"]).choices = [("", "—")] + [
            (s.pk, f"{s.name} (id{s.vk_user_id})") for s in reserves
        ]

    def clean(self) -> dict[str, Any]:
        data = cast("dict[str, Any]", super().clean())  # a form's cleaned_data
        reserve, vk = data.get("reserve"), (data.get("vk") or "").strip()
        if bool(reserve) == bool(vk):
            raise forms.ValidationError(
                "Выберите игрока из запаса или укажите VK id — одно из двух."
            )
        if reserve:
            seat = self.reserves[reserve]
            data["vk_user_id"], data["new_name"] = seat.vk_user_id, seat.name
        else:
            try:
                data["vk_user_id"] = parse_vk_user(text=vk)
            except InvalidCommand as e:
                self.add_error("vk", e.reason)
                return data
            data["new_name"] = (data.get("name") or "").strip() or f"id{data['vk_user_id']}"
        return data


class EndGameForm(forms.Form):
    winner = forms.ChoiceField(
        label="Победитель",
        choices=[("", "без победителя")] + [(w.value, w.title) for w in Winner],
        required=False,
    )
    reason = forms.CharField(
        label="Причина", max_length=1000, required=False, widget=forms.TextInput(attrs={"size": 60})
    )


class ChatLinkForm(forms.Form):
    chat = forms.CharField(
        label="Беседа",
        max_length=200,
        help_text="Номер беседы у сообщества, например 5: бот пишет его в самой беседе.",
    )

    def clean_chat(self) -> int:
        raw = self.cleaned_data["chat"].strip()
        match = re.match(r"^(?:.*[?&]sel=c)?(\d{1,12})$", raw)
        if not match:
            raise forms.ValidationError(
                "Укажите номер беседы у сообщества, например 5. Ссылку-приглашение "
                "vk.me/join/… без запроса к VK не распознать."
            )
        try:
            return chat_peer_id(value=int(match.group(1)))
        except InvalidCommand as e:
            raise forms.ValidationError(e.reason) from None


class FlagForm(forms.Form):
    decision = forms.ChoiceField(choices=[("dismiss", "отклонить"), ("acted", "принято решение")])
    note = forms.CharField(label="Заметка", max_length=1000, required=False)


class LogFilterForm(forms.Form):
    kind = forms.ChoiceField(label="Событие", required=False)
    phase = forms.TypedChoiceField(label="Фаза", required=False, coerce=int, empty_value=None)
    seat = forms.IntegerField(label="Место №", required=False, min_value=1)
    actor = forms.CharField(label="Кто", required=False, max_length=120)
    overrides = forms.BooleanField(label="только решения ведущего", required=False)

    def __init__(
        self,
        *args: Any,
        kinds: Sequence[tuple[str, str]] = (),
        phases: Sequence[tuple[int, str]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["kind"]).choices = [("", "все")] + list(kinds)
        cast(forms.ChoiceField, self.fields["phase"]).choices = [("", "все")] + list(phases)


class HistoryLookupForm(forms.Form):
    vk = VkUserField(label="VK id или ссылка", max_length=200)
