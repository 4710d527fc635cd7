"""The forms of «Сообщества»: connecting a community (its tokens: never shown back, a stored
one is said to be «сохранён»; the admin's signs in with VK ID, or is pasted), adding a GM, the
history setting."""

from __future__ import annotations

from typing import Any

from django import forms

STORED = "Ключ сохранён. Оставьте поле пустым, чтобы оставить его, или вставьте новый."
REQUIRED = "Обязательное поле."
#: How the admin's token comes: signed in with VK ID (the form's first button), or pasted.
SIGN_IN, PASTE = "vkid", "paste"


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
        "с правами groups и offline (ссылка выше). Такой ключ не продлевается.",
    )
    #: The pressed button's value: «Войти через VK ID» (:data:`SIGN_IN`) or «Подключить с
    #: этим ключом» (:data:`PASTE`, also without a button: a form sent by Enter in the field).
    how = forms.ChoiceField(
        choices=[(SIGN_IN, "VK ID"), (PASTE, "ключ")], required=False, widget=forms.HiddenInput
    )

    def __init__(
        self, *args: Any, stored: bool = False, stored_group: bool | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.stored = stored
        self.stored_group = stored if stored_group is None else stored_group
        if self.stored_group:
            self.fields["group_token"].help_text = STORED
        else:
            self.fields["group_token"].required = True
        if stored:
            self.fields["user_token"].help_text = STORED

    @property
    def signs_in(self) -> bool:
        """Whether the admin signs in with VK ID (else the pasted key, or the stored one)."""
        return self.cleaned_data.get("how") == SIGN_IN

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("how") != SIGN_IN and not self.stored and not data.get("user_token"):
            self.add_error("user_token", REQUIRED)
        return data


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
