"""The Content-Security-Policy header (config/csp.py): on the panel, the public pages and the
error pages, and nothing in the templates it would refuse. The browser tests
(tests/panel/test_browser.py) report any violation a real page raises."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from config.csp import HEADER, policy

ROOT = Path(__file__).resolve().parent.parent

#: What a policy without 'unsafe-inline' refuses in a page: inline scripts and styles, style
#: attributes, event handler attributes, javascript: links.
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>"
    r"|<style\b|\sstyle=\"|\son[a-z]+=\"|javascript:",
    re.IGNORECASE,
)


def test_the_policy_allows_the_site_alone() -> None:
    value = policy()

    assert "script-src 'self';" in value and "style-src 'self';" in value
    assert "default-src 'self'" in value and "object-src 'none'" in value
    assert "frame-ancestors 'none'" in value and "base-uri 'none'" in value
    assert "unsafe" not in value


def test_forms_may_lead_to_vk_id_alone(settings: Any) -> None:
    """«Войти через VK ID» answers its form with a redirect to VK ID, which browsers hold to
    form-action too: VK ID's origin is allowed there, and only there."""
    settings.VK_ID_URL = "https://id.vk.com/"
    value = policy()
    assert "form-action 'self' https://id.vk.com;" in value
    assert value.count("id.vk.com") == 1
    settings.VK_ID_URL = "http://127.0.0.1:8081/vkid/"
    assert "form-action 'self' http://127.0.0.1:8081;" in policy()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/admin/login/", "/players/", "/community/"])
def test_public_pages_carry_the_policy(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response[HEADER] == policy()
    assert not INLINE.findall(response.content.decode())


@pytest.mark.django_db
def test_the_panel_carries_the_policy(client: Client) -> None:
    gm = get_user_model().objects.create_user("ведущий", password="x", is_staff=True)
    client.force_login(gm)

    for path in ("/admin/", "/admin/gameplay/game/add/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response[HEADER] == policy()
        assert not INLINE.findall(response.content.decode()), path


@pytest.mark.django_db
@override_settings(DEBUG=False)
def test_the_error_pages_carry_the_policy(client: Client) -> None:
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response[HEADER] == policy()
    assert not INLINE.findall(response.content.decode())


@pytest.mark.django_db
def test_with_debug_on_djangos_own_error_pages_keep_their_inline_code(
    client: Client, settings: Any
) -> None:
    settings.DEBUG = True

    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert HEADER not in response


def test_no_template_has_inline_code_the_policy_refuses() -> None:
    paths = [
        p
        for folder in (ROOT / "templates", *ROOT.glob("*/templates"))
        for p in folder.rglob("*.html")
    ]
    offending = {
        str(p.relative_to(ROOT)): found
        for p in paths
        if (found := INLINE.findall(p.read_text(encoding="utf-8")))
    }

    assert paths and offending == {}
