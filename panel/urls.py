"""GM panel URLs, mounted at /panel/."""

from django.urls import URLPattern, URLResolver

app_name = "panel"

urlpatterns: list[URLPattern | URLResolver] = []
