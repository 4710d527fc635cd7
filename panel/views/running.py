"""Running the current phase: deadline, close now, reminders, the vote count, the night
draft."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from gameplay.models import PhaseKind, PhaseStatus
from gameplay.refusals import (
    NightNotUnderReview,
    OutcomeChanged,
    PhaseChanged,
    ReopenReasonMissing,
)
from gameplay.rules import DayResult
from gameplay.selectors.close import close_preview
from gameplay.selectors.seats import seat_at
from gameplay.selectors.table import current_phase, players
from gameplay.services.deadlines import phase_close_confirmed, phase_extend, phase_remind
from gameplay.services.night import (
    night_draft_edit,
    night_publish,
    night_reopen_mafia,
)
from gameplay.services.story import post_preview
from gameplay.services.votes import vote_count_post
from panel.access import actor, back, game_url, gm_view, render_panel
from panel.flash import say
from panel.forms import ExtendForm, NightEditForm, RequiredReasonForm
from panel.views.game import game_page_response


def _errors(request: HttpRequest, form) -> None:
    for errors in form.errors.values():
        for error in errors:
            messages.error(request, error)


@gm_view("POST", refused="panel_game")
def extend_view(request: HttpRequest, game) -> HttpResponse:
    form = ExtendForm(request.POST)
    if not form.is_valid():
        _errors(request, form)
        return back(request, game)
    phase_extend(game_id=game.pk, by=actor(request), minutes=form.cleaned_data["minutes"])
    say(request, "deadline_extended")
    return back(request, game)


@gm_view("GET", "POST", refused="panel_game")
def close_view(request: HttpRequest, game) -> HttpResponse:
    """Close the open phase now — after a page that says what the close will do (who is
    executed, struck, modkilled, who dies at night). A confirmed close is checked against the
    page's outcome by the service, under the game's lock: when the outcome has changed since
    (a vote, an action came in) the page is shown again with the new one. What the close would
    do is computed once per request: here for the page, or by the service for a confirmation."""
    expected = request.POST.get("phase", "")
    changed = False
    if request.method == "POST" and request.POST.get("confirm") == "yes" and expected.isdigit():
        try:
            return _close(request, game, int(expected), request.POST.get("expect", ""))
        except OutcomeChanged as outcome:  # a vote or an action came in since the page
            preview, changed = outcome.preview, True
    else:
        preview = close_preview(game)
    if preview is None or (expected and expected != str(preview.phase.pk)):
        raise PhaseChanged()
    phase = preview.phase
    what = "день" if phase.kind == PhaseKind.DAY else "ночь"
    return render_panel(
        request,
        game,
        "panel/confirm_close.html",
        {
            "preview": preview,
            "changed": changed,
            "phase": phase,
            # the day's post exactly as players will see it, with the GM's story in it
            "post_preview": post_preview(
                game=game, phase=phase, read=(list(preview.seats.values()), preview.day)
            )
            if phase.kind == PhaseKind.DAY
            else None,
        },
        title=f"Закрыть {what} сейчас",
        tab="game",
    )


def _close(request: HttpRequest, game, phase_id: int, fingerprint: str) -> HttpResponse:
    """Close as confirmed: ``phase_close_confirmed`` compares the outcome with the page's
    under the game's lock (its ``OutcomeChanged`` is left to the caller, which shows the page
    again)."""
    closed = phase_close_confirmed(
        game_id=game.pk, by=actor(request), phase_id=phase_id, fingerprint=fingerprint
    )
    phase, result = closed.phase, closed.result
    if isinstance(result, DayResult):
        executed = seat_at(game, result.executed) if result.executed else None
        say(request, "day_closed", number=phase.number, executed=executed)
    else:
        say(request, "night_closed", number=phase.number, published=game.auto_publish)
    return HttpResponseRedirect(game_url(game))


@gm_view("POST", refused="panel_game")
def remind_view(request: HttpRequest, game) -> HttpResponse:
    reminder = phase_remind(game_id=game.pk, by=actor(request))
    say(request, "reminded", seats=reminder.seats)
    return back(request, game)


@gm_view("POST", refused="panel_game")
def vote_count_view(request: HttpRequest, game) -> HttpResponse:
    """«Опубликовать подсчёт голосов»: the open day's vote count, posted in the topic now."""
    vote_count_post(game_id=game.pk)
    say(request, "vote_count_posted")
    return back(request, game)


@gm_view("POST", refused="panel_game")
def night_edit_view(request: HttpRequest, game) -> HttpResponse:
    living = [(s.number, s.name) for s in players(game) if s.alive]
    form = NightEditForm(request.POST, living=living)
    if not form.is_valid():
        _errors(request, form)
        return game_page_response(request, game, edit_form=form)
    res = night_draft_edit(
        game_id=game.pk,
        by=actor(request),
        deaths=form.cleaned_data["deaths"],
        reason=form.cleaned_data["reason"],
    )
    say(request, "draft_edited", deaths=res.deaths)
    return back(request, game)


@gm_view("POST", refused="panel_game")
def night_publish_view(request: HttpRequest, game) -> HttpResponse:
    phase = current_phase(game)
    res = night_publish(game_id=game.pk, by=actor(request))
    if phase is not None:
        say(request, "night_published", number=phase.number, deaths=res.deaths)
    return back(request, game)


@gm_view("POST", refused="panel_game")
def night_reopen_view(request: HttpRequest, game) -> HttpResponse:
    form = RequiredReasonForm(request.POST)
    if not form.is_valid():
        raise ReopenReasonMissing()
    phase = current_phase(game)
    if phase is None or phase.status != PhaseStatus.REVIEW:
        raise NightNotUnderReview()
    night_reopen_mafia(game_id=game.pk, by=actor(request), reason=form.cleaned_data["reason"])
    say(request, "mafia_reopened")
    return back(request, game)
