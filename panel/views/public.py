"""The pages anyone may open without logging in: the players' page (docs/players.md) and the
community admin's (docs/community.md).

The end-of-game post links the first (``PUBLIC_URL/players/``): what the commands are, and how
to check the deal. The second (``/community/``) tells a community's admin how to connect it
and what the bot needs. Each page is the repository's own Markdown file, rendered once per
process, so the two never differ.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from markdown_it import MarkdownIt

PLAYERS_PAGE = Path(settings.BASE_DIR) / "docs" / "players.md"
COMMUNITY_PAGE = Path(settings.BASE_DIR) / "docs" / "community.md"


@lru_cache(maxsize=2)
def _page_html(page: Path) -> tuple[str, str]:
    text = page.read_text(encoding="utf-8")
    title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    # html=False: the page's own text is shown, never raw HTML from it.
    return title, MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


@require_safe
def players_page(request: HttpRequest) -> HttpResponse:
    title, body = _page_html(PLAYERS_PAGE)
    return render(request, "public/players.html", {"title": title, "body": body})


@require_safe
def community_page(request: HttpRequest) -> HttpResponse:
    title, body = _page_html(COMMUNITY_PAGE)
    return render(request, "public/players.html", {"title": title, "body": body})
