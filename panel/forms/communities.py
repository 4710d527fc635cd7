"""The forms of «Сообщества»: connecting a community (its tokens: never shown back, a stored
one is said to be «сохранён»), adding a GM, the history setting."""

from __future__ import annotations

from typing import Any

from django import forms

STORED = "Ключ сохранён. Оставьте поле пустым, чтобы оставить его, или вставьте новый."


def _secret(label: str, help_text: str) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        max_length=1000,
        strip=True,
        help_text=help_text,
        widget=forms.PasswordInput(
            render_value=False,
            attrs={"class": "vTextField", "autocomplete": "off", "spellcheck": "false"},
        ),
    )


class ConnectForm(forms.Form):
    group_token = _secret(
        "Ключ доступа сообщества",
        "Управление → Работа с API → Ключи доступа → Создать ключ: отметьте доступ к "
        "сообщениям сообщества и доступ к управлению сообществом.",
    )
    user_token = _secret(
        "Ключ администратора",
        "Для постов в обсуждениях от имени сообщества: ключ администратора этого сообщества "
        "с правами groups и offline (ссылка выше).",
    )

    def __init__(self, *args: Any, stored: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stored = stored
        if stored:
            for name in ("group_token", "user_token"):
                self.fields[name].help_text = STORED
        else:
            for name in ("group_token", "user_token"):
                self.fields[name].required = True


class GmAddForm(forms.Form):
    username = forms.CharField(
        label="Учётная запись панели",
        max_length=150,
        widget=forms.TextInput(attrs={"class": "vTextField", "autocomplete": "off"}),
    )


class HistoryForm(forms.Form):
    history_public = forms.BooleanField(
        label="Открыть историю игр другим сообществам",
        required=False,
        help_text="Ведущие других сообществ увидят завершённые игры этого сообщества в истории "
        "игрока. Иначе история игрока у каждого сообщества своя.",
    )
