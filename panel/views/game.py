"""The game page, creating a game, its settings, and ending it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from gameplay.models import GameStatus, PhaseKind, PhaseStatus
from gameplay.rules import Winner, decide_winner
from gameplay.selectors.game_page import game_page
from gameplay.selectors.table import players, table_of
from gameplay.services.phases import game_end
from gameplay.services.settings import game_open, game_settings_update
from gameplay.services.story import post_preview
from panel.access import actor, attempt, game_url, gm_view, render_panel
from panel.flash import say
from panel.forms import (
    EndGameForm,
    ExtendForm,
    GameSettingsForm,
    NightEditForm,
    PlayerAddForm,
    PlayerBulkForm,
    ReasonForm,
    RequiredReasonForm,
)

#: Deadline extensions offered as buttons (minutes).
EXTENSIONS = [(30, "+30 мин"), (60, "+1 ч"), (180, "+3 ч"), (720, "+12 ч"), (1440, "+24 ч")]


def game_create(request: HttpRequest) -> HttpResponse:
    """The new-game form (replaces the admin's add view)."""
    if request.method == "POST":
        form = GameSettingsForm(request.POST, user=request.user)
        if form.is_valid():
            values = form.settings()
            ok, game = attempt(
                request,
                game_open,
                name=values.pop("name"),
                counts=form.counts(),
                gm=request.user,
                co_gms=list(form.cleaned_data["co_gms"]),
                **values,
            )
            if ok:
                say(request, "game_created", game=game)
                return HttpResponseRedirect(game_url(game))
    else:
        form = GameSettingsForm(initial={"co_gms": [request.user.pk]}, user=request.user)
    return render_panel(request, None, "panel/game_form.html", {"form": form}, title="Новая игра")


@gm_view("GET", "POST")
def game_settings(request: HttpRequest, game) -> HttpResponse:
    locked = game.status != GameStatus.RECRUITING
    if request.method == "POST":
        form = GameSettingsForm(
            request.POST,
            counts_locked=locked,
            user=request.user,
            game=game,
            initial=GameSettingsForm.initial_for(game),
        )
        if form.is_valid():
            users = list(form.cleaned_data["co_gms"])
            ok, _ = attempt(
                request,
                game_settings_update,
                game_id=game.pk,
                by=actor(request),
                editor=request.user,
                counts=None if locked else form.counts(),
                gms=users,
                **form.settings(),
            )
            if ok:
                say(request, "settings_saved")
                if not request.user.is_superuser and request.user not in users:
                    # The GM took themselves off the game: it is no longer theirs to see.
                    return HttpResponseRedirect(reverse("admin:gameplay_game_changelist"))
                return HttpResponseRedirect(game_url(game, "panel_settings"))
    else:
        form = GameSettingsForm(
            initial=GameSettingsForm.initial_for(game),
            counts_locked=locked,
            user=request.user,
            game=game,
        )
    return render_panel(
        request,
        game,
        "panel/game_form.html",
        {"form": form},
        title=f"Настройки: {game.name}",
        tab="settings",
    )


@gm_view()
def game_view(request: HttpRequest, game) -> HttpResponse:
    return game_page_response(request, game)


def game_page_response(
    request: HttpRequest, game, *, edit_form: NightEditForm | None = None
) -> HttpResponse:
    """The «Сейчас» tab; ``edit_form``: the night draft's edit as the GM sent it (refused),
    shown again with what they ticked and typed."""
    page = game_page(game)
    phase = page.phase
    context = {
        "page": page,
        "phase": phase,
        "counts": {"open_flags": page.open_flags, "failed_outbox": page.failed_outbox},
        "now": timezone.now(),
        "extensions": EXTENSIONS,
        "extend_form": ExtendForm(),
        "add_form": PlayerAddForm(),
        "bulk_form": PlayerBulkForm(),
        "reason_form": ReasonForm(),
        "roles_total": sum(getattr(game, f) for f in GameSettingsForm.COUNT_FIELDS),
        "post_preview": post_preview(game=game, phase=phase)
        if game.status == GameStatus.RUNNING
        else None,
    }
    if phase is not None and phase.kind == PhaseKind.NIGHT and phase.status == PhaseStatus.REVIEW:
        draft = page.draft or {}
        context["edit_form"] = edit_form or NightEditForm(
            initial={"deaths": draft.get("deaths", [])},
            living=[(s.number, s.name) for s in page.living],
        )
        context["reopen_form"] = RequiredReasonForm()
    return render_panel(request, game, "panel/game.html", context, title=game.name, tab="game")


@gm_view("GET", "POST")
def game_end_view(request: HttpRequest, game) -> HttpResponse:
    """End (or, before the start, cancel) the game — after a confirmation page."""
    running = game.status == GameStatus.RUNNING
    suggested = None
    if running:
        suggested = decide_winner(table_of(players(game)))
    if request.method == "POST":
        form = EndGameForm(request.POST)
        if form.is_valid():
            winner = form.cleaned_data["winner"]
            ok, _ = attempt(
                request,
                game_end,
                game_id=game.pk,
                by=actor(request),
                winner=Winner(winner) if winner and running else None,
                reason=form.cleaned_data["reason"].strip(),
            )
            if ok:
                say(request, "game_ended", running=running)
                return HttpResponseRedirect(game_url(game))
    else:
        form = EndGameForm(initial={"winner": suggested.value if suggested else ""})
    return render_panel(
        request,
        game,
        "panel/confirm_end.html",
        {"form": form, "running": running, "suggested": suggested},
        title="Завершить игру" if running else "Отменить игру",
        tab="game",
    )
