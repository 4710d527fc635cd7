"""The pages anyone may open without logging in: the players' page (docs/players.md).

The end-of-game post links it (``PUBLIC_URL/players/``): what the commands are, and how to
check the deal. The page is the repository's own docs/players.md, rendered once per process,
so the two never differ.
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


@lru_cache(maxsize=1)
def _players_html() -> tuple[str, str]:
    text = PLAYERS_PAGE.read_text(encoding="utf-8")
    title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    # html=False: the page's own text is shown, never raw HTML from it.
    return title, MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


@require_safe
def players_page(request: HttpRequest) -> HttpResponse:
    title, body = _players_html()
    return render(request, "public/players.html", {"title": title, "body": body})
