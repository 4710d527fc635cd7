"""The URL configuration: admin, django-rq behind a superuser login, the panel namespace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLResolver, reverse

ROOT = Path(__file__).resolve().parents[1]


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
    assert str(cast(URLResolver, panel).pattern) == "panel/"
    assert reverse("admin:index") == "/admin/"


def test_the_site_root_leads_to_the_players_page(client: Client) -> None:
    response = client.get("/", follow=True)

    assert response.redirect_chain == [("/players/", 302)]
    assert response.status_code == 200
    assert '<html lang="ru">' in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/admin/", ""])
def test_a_login_with_a_next_of_another_site_lands_on_my_games(
    client: Client, next_url: str
) -> None:
    get_user_model().objects.create_user("ведущий", password="right-password", is_staff=True)

    response = client.post(
        "/admin/login/",
        {"username": "ведущий", "password": "right-password", "next": next_url},
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("admin:index") == "/admin/"


def test_the_web_loads_no_vk_client() -> None:
    """A web process (every URL and view) imports neither vkbottle nor aiohttp: they cost a
    web process, and every manage.py command that checks the URLs, about two seconds of CPU
    to start. VK is called through them only where a request needs it."""
    code = (
        "import sys, django; django.setup()\n"
        "from django.urls import get_resolver\n"
        "def walk(patterns):\n"
        "    for p in patterns:\n"
        "        walk(p.url_patterns) if hasattr(p, 'url_patterns') else None\n"
        "walk(get_resolver().url_patterns)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in {'vkbottle', 'aiohttp'})\n"
        "assert not loaded, loaded[:5]\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=60)
