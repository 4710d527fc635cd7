"""With DEBUG off, a person who hits an error sees a Russian page (templates/4xx.html,
500.html), never Django's English one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import include, path, reverse

from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


def forbidden(request: HttpRequest) -> HttpResponse:
    raise PermissionDenied


urlpatterns = [
    path("broken/", broken),
    path("forbidden/", forbidden),
    path("", include("config.urls")),
]

ENGLISH = ("Not Found", "Server Error", "Forbidden", "The requested resource", "CSRF")


def russian(response: Any, *phrases: str) -> None:
    html = response.content.decode()
    assert '<html lang="ru">' in html
    assert not [w for w in ENGLISH if w in html], html
    # Nothing of the template's own (a comment printed raw, a tag) reaches the page.
    assert not [m for m in ("{#", "#}", "{%", "%}", "{{") if m in html], html
    for phrase in phrases:
        assert phrase in html


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_404_403_and_500_are_russian(gm_client: Client, other_gm: Any) -> None:
    response = gm_client.get("/admin/no-such-page/")
    assert response.status_code == 404
    russian(response, "Страница не найдена")
    theirs = make_game(other_gm, players=7, start=False)
    response = gm_client.get(reverse("admin:panel_game", kwargs={"game_id": theirs.pk}))
    assert response.status_code == 404  # another GM's game does not exist for them
    russian(response, "Страница не найдена")
    response = gm_client.get("/forbidden/")
    assert response.status_code == 403
    russian(response, "Доступ запрещён")
    client = Client(raise_request_exception=False)
    response = client.get("/broken/")
    assert response.status_code == 500
    russian(response, "Сбой на сервере", "действие не выполнено")


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_stale_form_is_a_russian_403(gm: Any) -> None:
    game = make_game(gm, players=7)
    client = Client(enforce_csrf_checks=True)
    client.force_login(gm)
    response = client.post(
        reverse("admin:panel_extend", kwargs={"game_id": game.pk}), {"minutes": "30"}
    )
    assert response.status_code == 403
    russian(response, "Форма устарела", "ничего не изменилось")


def test_no_template_has_a_comment_django_would_print() -> None:
    """``{# … #}`` is one line only: one that spans lines is printed as text."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    folders = [root / "templates", *root.glob("*/templates")]
    multi_line = [
        f"{path.relative_to(root)}:{text[: m.start()].count(chr(10)) + 1}"
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.suffix in {".html", ".txt"}
        for text in [path.read_text(encoding="utf-8")]
        for m in re.finditer(r"\{#(.*?)#\}", text, re.DOTALL)
        if "\n" in m.group(1)
    ]
    assert multi_line == []
