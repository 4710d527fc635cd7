"""The Content-Security-Policy header of every page (Django 5.2 has none of its own).

The panel (Django admin and the GM's pages), the public pages and the error pages load their
scripts and style sheets from the site itself and carry no inline ``<script>``, ``<style>``,
``style=""`` or ``on…=""`` (templates/, panel/static/; ``tests/test_csp.py`` checks the
templates, the browser tests report any violation). So the policy allows nothing but the site:
an injected script or style would not run, and no page can be framed, post its forms elsewhere
or take its base URL from the page. The one other place a form leads to is VK ID
(``VK_ID_URL``'s origin): «Войти через VK ID» posts to the panel, which answers with a
redirect there, and browsers hold a form's redirects to ``form-action`` too.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse

#: Directive -> sources; ``data:`` images for what the admin's style sheets embed.
POLICY: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
HEADER = "Content-Security-Policy"


def policy() -> str:
    """The header's value (read from the settings each time: ``VK_ID_URL`` may change)."""
    sources = dict(POLICY)
    vkid = _origin(getattr(settings, "VK_ID_URL", "") or "")
    if vkid:
        sources["form-action"] = f"'self' {vkid}"
    return "; ".join(f"{directive} {value}" for directive, value in sources.items())


def _origin(url: str) -> str:
    """``https://id.vk.com`` of ``https://id.vk.com/``; '' for anything but an http(s) URL."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


class ContentSecurityPolicyMiddleware:
    """Adds :func:`policy` to every response that has none. With DEBUG on, Django's own error
    pages (the yellow traceback, the technical 404) keep their inline styles and scripts: an
    error response gets no header then."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code >= 400:
            return response
        if HEADER not in response:
            response[HEADER] = policy()
        return response
