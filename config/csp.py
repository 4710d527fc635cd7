"""The Content-Security-Policy header of every page (Django 5.2 has none of its own).

The panel (Django admin and the GM's pages), the public pages and the error pages load their
scripts and style sheets from the site itself and carry no inline ``<script>``, ``<style>``,
``style=""`` or ``on…=""`` (templates/, panel/static/; ``tests/test_csp.py`` checks the
templates, the browser tests report any violation). So the policy allows nothing but the site:
an injected script or style would not run, and no page can be framed, post its forms elsewhere
or take its base URL from the page.
"""

from __future__ import annotations

from collections.abc import Callable

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
    """The header's value."""
    return "; ".join(f"{directive} {sources}" for directive, sources in POLICY.items())


class ContentSecurityPolicyMiddleware:
    """Adds :func:`policy` to every response that has none. With DEBUG on, Django's own error
    pages (the yellow traceback, the technical 404) keep their inline styles and scripts: an
    error response gets no header then."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.value = policy()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code >= 400:
            return response
        if HEADER not in response:
            response[HEADER] = self.value
        return response
