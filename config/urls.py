"""URL configuration: the admin, the GM panel, the players' and the community admin's pages
(public, no login; ``/`` leads to the players' page), the VK callback and django-rq's dashboard
(superusers only: the queues show every game's messages, so a GM does not see them)."""

from collections.abc import Callable

import django_rq.urls
from django.contrib import admin
from django.contrib.auth.decorators import user_passes_test
from django.urls import URLPattern, include, path
from django.views.generic import RedirectView

from panel.views.public import community_page, players_page


def _superuser(user: object) -> bool:
    return bool(getattr(user, "is_active", False) and getattr(user, "is_superuser", False))


def superusers_only(view: Callable) -> Callable:
    """Anyone else is sent to the admin login (which says they are not allowed)."""
    return user_passes_test(_superuser, login_url="admin:login")(view)


def _rq_patterns() -> list[URLPattern]:
    patterns = []
    for pattern in django_rq.urls.urlpatterns:
        wrapped = URLPattern(
            pattern.pattern,
            superusers_only(pattern.callback),
            pattern.default_args,
            pattern.name,
        )
        patterns.append(wrapped)
    return patterns


urlpatterns = [
    path("", RedirectView.as_view(pattern_name="players"), name="root"),
    path("admin/", admin.site.urls),
    path("panel/", include("panel.urls")),
    path("players/", players_page, name="players"),
    path("community/", community_page, name="community_guide"),
    path("vk/", include("vkbot.urls")),
    path("django-rq/", include((_rq_patterns(), django_rq.urls.app_name))),
]
