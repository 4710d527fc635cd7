"""GM panel URLs, mounted at /panel/. The GM's views live inside Django admin (see
``panel.admin.GameAdmin.get_urls``); /panel/ itself leads to the GM's «Мои игры» (the admin's
start page)."""

from django.urls import URLPattern, URLResolver, path
from django.views.generic import RedirectView

app_name = "panel"

urlpatterns: list[URLPattern | URLResolver] = [
    path("", RedirectView.as_view(pattern_name="admin:index"), name="index"),
]
