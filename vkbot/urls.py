"""VK-facing URLs, mounted at /vk/: the Callback API endpoint."""

from django.urls import path

from vkbot import views

app_name = "vkbot"

urlpatterns = [
    path("callback/", views.callback, name="callback"),
]
