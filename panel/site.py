"""The panel's admin site: Django admin whose start page is the GM's «Мои игры».

A signed-in GM lands on the index after login, so the index is where they see each of their
games with its phase, the time left to its deadline and what needs them now. A superuser also
gets the admin's list of sections below it (accounts and the like).

The header's «Открыть сайт» leads to the players' page (``/players/``, docs/players.md), where
``/`` leads too: that page is what the site's public side is.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone


class PanelSite(admin.AdminSite):
    site_header = "Мафия «Машина времени» — панель ведущего"
    site_title = "Панель ведущего"
    index_title = "Мои игры"
    site_url = "/players/"

    def index(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        from gameplay.selectors.games import my_games

        active, ended = my_games(request.user)
        context = {
            **self.each_context(request),
            "title": self.index_title,
            "subtitle": None,
            "active": active,
            "ended": ended,
            "now": timezone.now(),
            "app_list": self.get_app_list(request) if request.user.is_superuser else [],
            "is_nav_sidebar_enabled": False,
            **(extra_context or {}),
        }
        request.current_app = self.name
        return TemplateResponse(request, "panel/my_games.html", context)


class PanelAdminConfig(AdminConfig):
    """``django.contrib.admin`` with :class:`PanelSite` as ``admin.site``."""

    default_site = "panel.site.PanelSite"
