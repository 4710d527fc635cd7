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
from panel.access import actor, game_url, gm_view, render_panel, shows_refusals
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


def _create_form(request: HttpRequest) -> GameSettingsForm:
    if request.method == "POST":
        return GameSettingsForm(request.POST, user=request.user)
    return GameSettingsForm(initial={"co_gms": [request.user.pk]}, user=request.user)


def _create_page(request: HttpRequest, form: GameSettingsForm | None = None) -> HttpResponse:
    """The new-game form, as the GM filled it in."""
    form = form if form is not None else _create_form(request)
    return render_panel(request, None, "panel/game_form.html", {"form": form}, title="Новая игра")


@shows_refusals(_create_page)
def game_create(request: HttpRequest) -> HttpResponse:
    """The new-game form (replaces the admin's add view)."""
    form = _create_form(request)
    if request.method == "POST" and form.is_valid():
        values = form.settings()
        game = game_open(
            name=values.pop("name"),
            counts=form.counts(),
            gm=request.user,
            co_gms=list(form.cleaned_data["co_gms"]),
            **values,
        )
        say(request, "game_created", game=game)
        return HttpResponseRedirect(game_url(game))
    return _create_page(request, form)


def _settings_form(request: HttpRequest, game) -> GameSettingsForm:
    locked = game.status != GameStatus.RECRUITING
    if request.method == "POST":
        return GameSettingsForm(
            request.POST,
            counts_locked=locked,
            user=request.user,
            game=game,
            initial=GameSettingsForm.initial_for(game),
        )
    return GameSettingsForm(
        initial=GameSettingsForm.initial_for(game),
        counts_locked=locked,
        user=request.user,
        game=game,
    )


def _settings_page(
    request: HttpRequest, game, form: GameSettingsForm | None = None
) -> HttpResponse:
    """The game's settings, as the GM filled them in."""
    return render_panel(
        request,
        game,
        "panel/game_form.html",
        {"form": form if form is not None else _settings_form(request, game)},
        title=f"Настройки: {game.name}",
        tab="settings",
    )


@gm_view("GET", "POST", refused=_settings_page)
def game_settings(request: HttpRequest, game) -> HttpResponse:
    form = _settings_form(request, game)
    if request.method == "POST" and form.is_valid():
        users = list(form.cleaned_data["co_gms"])
        game_settings_update(
            game_id=game.pk,
            by=actor(request),
            editor=request.user,
            counts=None if form.counts_locked else form.counts(),
            gms=users,
            **form.settings(),
        )
        say(request, "settings_saved")
        if not request.user.is_superuser and request.user not in users:
            # The GM took themselves off the game: it is no longer theirs to see.
            return HttpResponseRedirect(reverse("admin:gameplay_game_changelist"))
        return HttpResponseRedirect(game_url(game, "panel_settings"))
    return _settings_page(request, game, form)


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
        # the players and the day's projection the page has read already
        "post_preview": post_preview(
            game=game, phase=phase, read=([r.seat for r in page.seats], page.projection)
        )
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


def _end_page(request: HttpRequest, game) -> HttpResponse:
    """The end's confirmation, with the winner and the reason as the GM chose them."""
    running = game.status == GameStatus.RUNNING
    suggested = decide_winner(table_of(players(game))) if running else None
    if request.method == "POST":
        form = EndGameForm(request.POST)
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


@gm_view("GET", "POST", refused=_end_page)
def game_end_view(request: HttpRequest, game) -> HttpResponse:
    """End (or, before the start, cancel) the game — after a confirmation page."""
    running = game.status == GameStatus.RUNNING
    form = EndGameForm(request.POST) if request.method == "POST" else None
    if form is not None and form.is_valid():
        winner = form.cleaned_data["winner"]
        game_end(
            game_id=game.pk,
            by=actor(request),
            winner=Winner(winner) if winner and running else None,
            reason=form.cleaned_data["reason"].strip(),
        )
        say(request, "game_ended", running=running)
        return HttpResponseRedirect(game_url(game))
    return _end_page(request, game)
