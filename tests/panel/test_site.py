"""The panel's admin site builds the admin's sidebar (its list of sections) only on the pages
that show it (``panel.site.PanelSite.each_context``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.test import Client, RequestFactory
from django.urls import reverse

from panel.site import PanelSite
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def app_lists(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the requests whose sections the site built."""
    built: list[str] = []
    original = PanelSite.get_app_list

    def spied(self: PanelSite, request: Any, app_label: Any = None) -> Any:
        built.append(request.path)
        return original(self, request, app_label)

    monkeypatch.setattr(PanelSite, "get_app_list", spied)
    return built


def test_the_panels_pages_build_no_sidebar(gm: Any, gm_client: Client, app_lists: list) -> None:
    """«Мои игры» and a game's pages show no sidebar: its sections are never built."""
    game = make_game(gm, start=False)
    for url in (
        reverse("admin:index"),
        reverse("admin:panel_game", kwargs={"game_id": game.pk}),
        reverse("admin:panel_players", kwargs={"game_id": game.pk}),
    ):
        response = gm_client.get(url)
        assert response.status_code == 200, url
        assert b'id="nav-sidebar"' not in response.content
    assert app_lists == []


def test_an_admin_list_shows_its_sidebar(django_user_model: Any, app_lists: list) -> None:
    """The admin's own lists still show the sidebar, its sections built once."""
    boss = django_user_model.objects.create_superuser("админ", password="x")
    client = Client()
    client.force_login(boss)
    url = reverse("admin:auth_user_changelist")
    response = client.get(url)
    assert response.status_code == 200
    assert b'id="nav-sidebar"' in response.content
    assert f'href="{reverse("admin:gameplay_game_changelist")}"'.encode() in response.content
    assert app_lists == [url]
    # The superuser's «Мои игры» lists the sections below the games, built for that list.
    assert client.get(reverse("admin:index")).context["app_list"]
    assert app_lists == [url, reverse("admin:index")]


def test_the_context_is_djangos(django_user_model: Any) -> None:
    """The same keys as Django's ``each_context``, the same sections once read."""
    boss = django_user_model.objects.create_superuser("админ", password="x")
    request = RequestFactory().get(reverse("admin:index"))
    request.user = boss
    ours = admin.site.each_context(request)
    djangos = admin.AdminSite.each_context(admin.site, request)
    assert ours.keys() == djangos.keys()
    assert list(ours["available_apps"]) == djangos["available_apps"]
    for name in ours.keys() - {"available_apps", "log_entries"}:
        assert ours[name] == djangos[name], name
    assert list(ours["log_entries"]) == list(djangos["log_entries"])
