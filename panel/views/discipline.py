"""Discipline: modkill, replacement, manual penalty, strike forgiveness, moderation flags."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect

from gameplay.models import Seat
from gameplay.refusals import FlagDecisionMissing
from gameplay.selectors.record import flags_of, strikes_of
from gameplay.selectors.seats import reserves, seat_at
from gameplay.selectors.table import players
from gameplay.services.discipline import seat_modkill, seat_replace, strike_forgive, strike_give
from gameplay.services.moderation import flag_resolve
from panel.access import actor, attempt, back, game_url, gm_view, render_panel
from panel.flash import confirmation, say
from panel.forms import FlagForm, PunishForm, ReasonForm, ReplaceForm


def _seat(game, number: int) -> Seat:
    seat = seat_at(game, number)
    if seat is None:
        raise Http404("Нет такого места.")
    return seat


@gm_view()
def discipline_view(request: HttpRequest, game) -> HttpResponse:
    return render_panel(
        request,
        game,
        "panel/discipline.html",
        {
            "seats": players(game),
            "strikes": strikes_of(game),
            "flags": flags_of(game),
            "flag_form": FlagForm(),
        },
        title=f"Дисциплина: {game.name}",
        tab="discipline",
    )


@dataclass(frozen=True)
class _Punishment:
    """What a punishment's confirmation page differs by, beyond its texts."""

    #: The decision on a moderation flag, and the page's name.
    punish: str
    #: The service that punishes without a flag.
    service: Callable[..., object]
    #: Where the GM goes back to without a ``next``.
    back_to: str
    title: str


_MODKILL = _Punishment("modkill", seat_modkill, "panel_game", "Модкилл")
_PENALTY = _Punishment("penalty", strike_give, "panel_discipline", "Штраф")


@gm_view("GET", "POST")
def modkill_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A modkill, confirmed on its own page first, with the reason the player is told."""
    seat = _seat(game, number)
    page = {**confirmation("modkill", seat=seat), "button": "Модкилл", "danger": True}
    return _punish(
        request, game, seat, _MODKILL, page, lambda: say(request, "modkilled", seat=seat)
    )


@gm_view("GET", "POST")
def penalty_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A manual strike: a first one costs +2 votes, a second one is a modkill. The player is
    told the reason."""
    seat = _seat(game, number)
    modkill = seat.strikes >= 1
    page = {
        **confirmation("penalty", seat=seat),
        "button": "Модкилл штрафом" if modkill else "Оштрафовать",
        "danger": modkill,
    }
    return _punish(request, game, seat, _PENALTY, page, lambda: say(request, "struck", seat=seat))


def _punish(
    request: HttpRequest,
    game,
    seat: Seat,
    how: _Punishment,
    page: dict[str, object],
    done: Callable[[], None],
) -> HttpResponse:
    """A punishment confirmed on its own ``page`` (the question, the button), with the reason
    the player is told: the decision on the moderation flag the page was opened from, or
    without one the punishment's service; once done, ``done`` says so (the seat read again)."""
    number = seat.number
    flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
    form = PunishForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and request.POST.get("confirm") == "yes" and form.is_valid():
        reason = form.cleaned_data["reason"].strip()
        if flag_id.isdigit():
            ok, _ = attempt(
                request,
                flag_resolve,
                game_id=game.pk,
                flag_id=int(flag_id),
                by=actor(request),
                acted=True,
                note=reason,
                punish=how.punish,
                seat=number,
            )
        else:
            ok, _ = attempt(
                request,
                how.service,
                game_id=game.pk,
                seat=number,
                by=actor(request),
                reason=reason,
            )
        if ok:
            seat.refresh_from_db()
            done()
            return back(request, game, how.back_to)
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, f"panel_{how.punish}", number=number),
            **page,
            "form": form,
            "hidden": {"flag": flag_id},
            "next": request.GET.get("next", ""),
        },
        title=how.title,
        tab="discipline",
    )


@gm_view("GET", "POST")
def replace_view(request: HttpRequest, game, number: int) -> HttpResponse:
    seat = _seat(game, number)
    form = ReplaceForm(request.POST if request.method == "POST" else None, reserves=reserves(game))
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        ok, _ = attempt(
            request,
            seat_replace,
            game_id=game.pk,
            seat=number,
            vk_user_id=d["vk_user_id"],
            name=d["new_name"],
            by=actor(request),
            reason=d["reason"].strip(),
        )
        if ok:
            say(request, "replaced", number=number, name=d["new_name"])
            return HttpResponseRedirect(game_url(game))
    return render_panel(
        request,
        game,
        "panel/replace.html",
        {
            "seat": seat,
            "form": form,
        },
        title=f"Замена №{number}",
        tab="discipline",
    )


@gm_view("POST")
def forgive_view(request: HttpRequest, game, strike_id: int) -> HttpResponse:
    form = ReasonForm(request.POST)
    reason = form.cleaned_data["reason"].strip() if form.is_valid() else ""
    ok, strike = attempt(
        request,
        strike_forgive,
        game_id=game.pk,
        strike_id=strike_id,
        by=actor(request),
        reason=reason,
    )
    if ok:
        say(request, "strike_forgiven", number=strike.seat.number)
    return back(request, game, "panel_discipline")


@gm_view("POST")
def flag_view(request: HttpRequest, game, flag_id: int) -> HttpResponse:
    form = FlagForm(request.POST)
    if not form.is_valid():
        messages.error(request, FlagDecisionMissing().reason)
        return back(request, game, "panel_discipline")
    acted = form.cleaned_data["decision"] == "acted"
    ok, _ = attempt(
        request,
        flag_resolve,
        game_id=game.pk,
        flag_id=flag_id,
        by=actor(request),
        acted=acted,
        note=form.cleaned_data["note"],
    )
    if ok:
        say(request, "flag_closed", acted=acted)
    return back(request, game, "panel_discipline")
