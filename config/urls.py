"""URL configuration: the admin, the GM panel and django-rq's dashboard (staff only)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("panel/", include("panel.urls")),
    path("vk/", include("vkbot.urls")),
    # django-rq's views check staff_member_required themselves.
    path("django-rq/", include("django_rq.urls")),
]
