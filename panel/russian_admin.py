"""Django admin's generated phrases in the right Russian case.

Django's translation puts a model's ``verbose_name`` (nominative) into phrases that need
another case: «Выберите игра для изменения», «Добавить пользователь». A model admin with
:class:`RussianTitles` says them with the accusative it declares instead.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse


class RussianTitles:
    #: The model's name in the accusative singular: «игру», «пользователя».
    accusative: str = ""
    #: «Удалить выбранных пользователей» (the accusative plural).
    accusative_plural: str = ""

    def _titled(self, extra_context: dict[str, Any] | None, title: str) -> dict[str, Any]:
        return {"title": title, "add_label": f"Добавить {self.accusative}", **(extra_context or {})}

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        verb = "изменения" if self.has_change_permission(request) else "просмотра"  # type: ignore[attr-defined]
        return super().changelist_view(  # type: ignore[misc]
            request, self._titled(extra_context, f"Выберите {self.accusative} для {verb}")
        )

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return super().add_view(  # type: ignore[misc]
            request, form_url, self._titled(extra_context, f"Добавить {self.accusative}")
        )

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        verb = "Изменить" if self.has_change_permission(request) else "Просмотреть"  # type: ignore[attr-defined]
        return super().change_view(  # type: ignore[misc]
            request, object_id, form_url, self._titled(extra_context, f"{verb} {self.accusative}")
        )

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)  # type: ignore[misc]
        if "delete_selected" in actions and self.accusative_plural:
            func, name, _ = actions["delete_selected"]
            actions["delete_selected"] = (func, name, f"Удалить выбранных {self.accusative_plural}")
        return actions
