"""The panel's admin site: Django admin whose start page is the GM's «Мои игры».

A signed-in GM lands on the index after login, so the index is where they see each of their
games with its phase, the time left to its deadline and what needs them now. A superuser also
gets the admin's list of sections below it (accounts and the like).

The admin's sidebar (its list of sections) is built only when a page shows it: the panel's own
pages are wide tables without it, and a list that refuses its parameters renders no page at all.

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
from django.utils.functional import SimpleLazyObject


class PanelSite(admin.AdminSite):
    site_header = "Мафия «Машина времени» — панель ведущего"
    site_title = "Панель ведущего"
    index_title = "Мои игры"
    site_url = "/players/"

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        """Django's context of every admin page (``AdminSite.each_context``), with the
        sidebar's sections (``available_apps``) built on first read: by the sidebar's
        template, on the pages that show it."""
        script_name = request.META["SCRIPT_NAME"]
        site_url = script_name if self.site_url == "/" and script_name else self.site_url
        return {
            "site_title": self.site_title,
            "site_header": self.site_header,
            "site_url": site_url,
            "has_permission": self.has_permission(request),
            "available_apps": SimpleLazyObject(lambda: self.get_app_list(request)),
            "is_popup": False,
            "is_nav_sidebar_enabled": self.enable_nav_sidebar,
            "log_entries": self.get_log_entries(request),
        }

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
