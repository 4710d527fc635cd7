"""The URL configuration: admin, django-rq behind a superuser login, the panel namespace."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse


def test_admin_login_page_renders(client: Client) -> None:
    response = client.get("/admin/login/")

    assert response.status_code == 200


@pytest.mark.django_db
def test_django_rq_dashboard_needs_staff(client: Client) -> None:
    response = client.get("/django-rq/")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_django_rq_dashboard_shows_the_project_queues_to_a_superuser(
    client: Client, rq_queues: dict
) -> None:
    staff = get_user_model().objects.create_superuser("gm", password="gm")
    client.force_login(staff)

    response = client.get("/django-rq/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "default" in content
    assert "vk" in content


def test_panel_namespace_is_mounted() -> None:
    from config import urls

    panel = next(p for p in urls.urlpatterns if getattr(p, "namespace", None) == "panel")
    assert str(panel.pattern) == "panel/"
    assert reverse("admin:index") == "/admin/"
