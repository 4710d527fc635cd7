"""The panel's own sentences — what a GM reads after an action (a flash message) and on a
confirmation page — each written once, as a template under ``templates/panel/``.

- ``templates/panel/flash/<name>.txt``: the message after an action. :func:`say` renders one
  into Django's messages (``success`` unless told), :func:`text` returns it.
- ``templates/panel/confirm/<name>.txt``: a confirmation page's question and what will happen.
  :func:`confirmation` renders one; its first paragraph is the question, every further
  paragraph (a blank line between) one item of the page's list.

One small file per text rather than one template with named blocks: Django renders a whole
template, not one block of it, and a file per name lets a test check that every name the views
use has its text (tests/panel/test_flash.py). The panel's template filters are at hand
(``{% load panel_tags %}``: ``g`` for the player's gender, ``count`` for numerals). The texts
are plain: no autoescaping here (the admin escapes a message where it shows it), and the lines
of a paragraph are joined by spaces, so a long sentence can be wrapped in its file.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.http import HttpRequest
from django.template import Context, engines
from django.template.backends.django import DjangoTemplates


def _render(path: str, context: dict[str, Any]) -> str:
    template = cast(DjangoTemplates, engines["django"]).engine.get_template(path)
    return template.render(Context(context, autoescape=False))


def _paragraphs(rendered: str) -> list[str]:
    blocks = [" ".join(block.split()) for block in rendered.split("\n\n")]
    return [b for b in blocks if b]


def render_line(path: str, context: dict[str, Any]) -> str:
    """Any plain panel text (``templates/<path>``) as one line, e.g. a log entry's."""
    return " ".join(_paragraphs(_render(path, context)))


def text(name: str, /, **context: Any) -> str:
    """The flash text ``name`` (``templates/panel/flash/<name>.txt``) in one paragraph."""
    return " ".join(_paragraphs(_render(f"panel/flash/{name}.txt", context)))


def say(
    request: HttpRequest, name: str, /, *, level: int = messages.SUCCESS, **context: Any
) -> None:
    """Show the flash text ``name`` on the GM's next page."""
    messages.add_message(request, level, text(name, **context))


def confirmation(name: str, /, **context: Any) -> dict[str, Any]:
    """``{"question": …, "details": [...]}`` from ``templates/panel/confirm/<name>.txt``."""
    question, *details = _paragraphs(_render(f"panel/confirm/{name}.txt", context))
    return {"question": question, "details": details}
