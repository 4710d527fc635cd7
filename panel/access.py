"""Access to a game's panel pages, and the glue every GM view shares.

Every GM view is wrapped twice: ``admin_site.admin_view`` (staff login, CSRF, no caching) in
``GameAdmin.get_urls`` and ``gm_view`` here, which finds the game among the user's own games
(another GM's game is a 404, before anything else happens) and then checks the HTTP method.

Refusals are answered in one place, ``shows_refusals``: a view that acts declares what the GM
sees when it is refused (``refused``: the page to go back to, or a function that shows the form
again as sent), raises or lets through the service's ``RuleViolation``, and the wrapper puts
its Russian text in an error message above that page. A view catches a refusal itself only to
do something else than answer it (show a warning page first, show a changed outcome again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from config.proxies import client_address
from gameplay.models import Actor, FlagStatus, Game, ModerationFlag
from gameplay.rules import RuleViolation
from gameplay.selectors.games import games_for
from gameplay.selectors.record import retryable_outbox
from gameplay.selectors.table import current_phase
from panel.flash import text

View = Callable[..., HttpResponse]
logger = logging.getLogger(__name__)


#: What a refused view answers, called with the view's own arguments: a redirect, or the page
#: with the form as the GM sent it.
Refused = Callable[..., HttpResponse]


def shows_refusals(refused: Refused) -> Callable[[View], View]:
    """The panel's one answer to a refusal: a ``RuleViolation`` out of the view becomes its
    text as an error message, and ``refused(request, *args, **kwargs)`` the response. Nothing
    was changed: a service refuses before it writes, in its own transaction."""

    def decorate(func: View) -> View:
        @wraps(func)
        def inner(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return func(request, *args, **kwargs)
            except RuleViolation as refusal:
                messages.error(request, refusal.reason)
                return refused(request, *args, **kwargs)

        return inner

    return decorate


def gm_view(*methods: str, refused: str | Refused | None = None) -> Callable[[View], View]:
    """The wrapped view gets the game instead of its id. Methods default to GET. ``refused``:
    what a refusal answers (``shows_refusals``): a page of the game by name (``back`` to it,
    or to the posted ``next``), or a function of the view's arguments; None for a view that
    refuses nothing."""
    allowed = list(methods or ("GET",))
    if "GET" in allowed and "HEAD" not in allowed:
        allowed.append("HEAD")
    answer = back_to(refused) if isinstance(refused, str) else refused

    def decorate(func: View) -> View:
        view = func if answer is None else shows_refusals(answer)(func)

        @wraps(func)
        def inner(request: HttpRequest, game_id: int, **kwargs: Any) -> HttpResponse:
            game = get_object_or_404(games_for(request.user), pk=game_id)
            if request.method not in allowed:
                return HttpResponseNotAllowed(allowed)
            return view(request, game, **kwargs)

        return inner

    return decorate


def actor(request: HttpRequest) -> Actor:
    """The GameEvent actor of the signed-in GM."""
    return Actor.gm(request.user)


def back_to(page: str) -> Refused:
    """A refused GM view's answer: ``back`` to the game's page ``page`` (or the posted
    ``next``)."""

    def answer(request: HttpRequest, game: Game, **_kwargs: Any) -> HttpResponse:
        return back(request, game, page)

    return answer


def game_url(game: Game, name: str = "panel_game", **kwargs: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kwargs})


def back(request: HttpRequest, game: Game, default: str = "panel_game") -> HttpResponseRedirect:
    """Redirect to ``next`` (a page of this game only) or to the named page."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    base = game_url(game)
    if target.startswith(base) and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}
    ):
        return HttpResponseRedirect(target)
    return HttpResponseRedirect(game_url(game, default))


def tab_counts(game: Game) -> dict[str, int]:
    return {
        "open_flags": ModerationFlag.objects.filter(game=game, status=FlagStatus.OPEN).count(),
        "failed_outbox": retryable_outbox(game).count(),
    }


def render_panel(
    request: HttpRequest,
    game: Game | None,
    template: str,
    context: dict[str, Any],
    *,
    title: str,
    tab: str = "",
    status: int = 200,
) -> HttpResponse:
    """Render a panel page inside the admin's frame (header, sidebar, messages)."""
    ctx: dict[str, Any] = {
        **admin.site.each_context(request),
        "title": title,
        "game": game,
        "tab": tab,
        "opts": Game._meta,
        "now": timezone.now(),
        # The panel's pages are wide tables: no admin sidebar beside them.
        "is_nav_sidebar_enabled": False,
        **context,
    }
    if game is not None and "counts" not in ctx:
        ctx["counts"] = tab_counts(game)
    if game is not None and "phase" not in ctx:
        ctx["phase"] = current_phase(game)
    return render(request, template, ctx, status=status)


def login_locked_out(
    request: HttpRequest, credentials: Any = None, *args: Any, **kwargs: Any
) -> HttpResponse:
    """django-axes' answer (``AXES_LOCKOUT_CALLABLE``) to a login while its user name and
    address are locked out: the reason in Russian, status 429."""
    logger.warning(
        "admin login locked out: %d failures for one user name from %s",
        settings.AXES_FAILURE_LIMIT,
        client_address(request) or "?",
    )
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(
        request,
        "panel/login_locked.html",
        {"message": text("login_locked", minutes=minutes), "title": "Вход закрыт"},
        status=429,
    )
