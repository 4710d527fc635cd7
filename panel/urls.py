"""GM panel URLs, mounted at /panel/. The GM's game views live inside Django admin (see
``panel.admin.GameAdmin.get_urls``); /panel/ itself leads to the GM's «Мои игры» (the admin's
start page). «Сообщества» (``panel.views.communities``) lives here, behind the admin's login
like every other panel page."""

from django.contrib import admin
from django.urls import URLPattern, URLResolver, path
from django.views.generic import RedirectView

from panel.views import communities as c

app_name = "panel"

_wrap = admin.site.admin_view

urlpatterns: list[URLPattern | URLResolver] = [
    path("", RedirectView.as_view(pattern_name="admin:index"), name="index"),
    path("communities/", _wrap(c.communities_list), name="communities"),
    path("communities/connect/", _wrap(c.community_connect), name="community_connect"),
    path("communities/vkid/", _wrap(c.community_vkid), name="community_vkid"),
    path("communities/<int:vk_id>/", _wrap(c.community_page), name="community"),
    path(
        "communities/<int:vk_id>/reconnect/",
        _wrap(c.community_reconnect),
        name="community_reconnect",
    ),
    path(
        "communities/<int:vk_id>/disconnect/",
        _wrap(c.community_disconnect_view),
        name="community_disconnect",
    ),
    path(
        "communities/<int:vk_id>/gms/add/", _wrap(c.community_gm_add_view), name="community_gm_add"
    ),
    path(
        "communities/<int:vk_id>/gms/<int:user_id>/remove/",
        _wrap(c.community_gm_remove_view),
        name="community_gm_remove",
    ),
    path(
        "communities/<int:vk_id>/history/",
        _wrap(c.community_history_view),
        name="community_history",
    ),
]
