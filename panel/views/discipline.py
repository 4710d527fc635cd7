"""Discipline: modkill, replacement, manual penalty, strike forgiveness, moderation flags."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect

from gameplay.models import Seat
from gameplay.refusals import FlagDecisionMissing
from gameplay.selectors.record import flags_of, strikes_of
from gameplay.selectors.seats import reserves, seat_at
from gameplay.selectors.table import players
from gameplay.services.discipline import seat_modkill, seat_replace, strike_forgive, strike_give
from gameplay.services.moderation import flag_resolve
from panel.access import actor, back, game_url, gm_view, render_panel
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


def _modkill_page(request: HttpRequest, game, number: int) -> HttpResponse:
    """The modkill's confirmation, with the reason as the GM typed it."""
    seat = _seat(game, number)
    flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
    form = PunishForm(request.POST if request.method == "POST" else None)
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, "panel_modkill", number=number),
            **confirmation("modkill", seat=seat),
            "form": form,
            "button": "Модкилл",
            "danger": True,
            "hidden": {"flag": flag_id},
            "next": request.GET.get("next", ""),
        },
        title="Модкилл",
        tab="discipline",
    )


@gm_view("GET", "POST", refused=_modkill_page)
def modkill_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A modkill, confirmed on its own page first, with the reason the player is told."""
    seat = _seat(game, number)
    flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
    form = PunishForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and request.POST.get("confirm") == "yes" and form.is_valid():
        reason = form.cleaned_data["reason"].strip()
        if flag_id.isdigit():
            flag_resolve(
                game_id=game.pk,
                flag_id=int(flag_id),
                by=actor(request),
                acted=True,
                note=reason,
                punish="modkill",
                seat=number,
            )
        else:
            seat_modkill(game_id=game.pk, seat=number, by=actor(request), reason=reason)
        say(request, "modkilled", seat=seat)
        return back(request, game)
    return _modkill_page(request, game, number)


def _penalty_page(request: HttpRequest, game, number: int) -> HttpResponse:
    """The strike's confirmation, with the reason as the GM typed it."""
    seat = _seat(game, number)
    flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
    form = PunishForm(request.POST if request.method == "POST" else None)
    modkill = seat.strikes >= 1
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, "panel_penalty", number=number),
            **confirmation("penalty", seat=seat),
            "form": form,
            "button": "Модкилл штрафом" if modkill else "Оштрафовать",
            "danger": modkill,
            "hidden": {"flag": flag_id},
            "next": request.GET.get("next", ""),
        },
        title="Штраф",
        tab="discipline",
    )


@gm_view("GET", "POST", refused=_penalty_page)
def penalty_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A manual strike: a first one costs +2 votes, a second one is a modkill. The player is
    told the reason."""
    seat = _seat(game, number)
    flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
    form = PunishForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and request.POST.get("confirm") == "yes" and form.is_valid():
        reason = form.cleaned_data["reason"].strip()
        if flag_id.isdigit():
            flag_resolve(
                game_id=game.pk,
                flag_id=int(flag_id),
                by=actor(request),
                acted=True,
                note=reason,
                punish="penalty",
                seat=number,
            )
        else:
            strike_give(game_id=game.pk, seat=number, by=actor(request), reason=reason)
        seat.refresh_from_db()
        say(request, "struck", seat=seat)
        return back(request, game, "panel_discipline")
    return _penalty_page(request, game, number)


def _replace_form(request: HttpRequest, game) -> ReplaceForm:
    return ReplaceForm(request.POST if request.method == "POST" else None, reserves=reserves(game))


def _replace_page(request: HttpRequest, game, number: int) -> HttpResponse:
    """The replacement's form, as the GM filled it in."""
    return render_panel(
        request,
        game,
        "panel/replace.html",
        {
            "seat": _seat(game, number),
            "form": _replace_form(request, game),
        },
        title=f"Замена №{number}",
        tab="discipline",
    )


@gm_view("GET", "POST", refused=_replace_page)
def replace_view(request: HttpRequest, game, number: int) -> HttpResponse:
    _seat(game, number)
    form = _replace_form(request, game)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        seat_replace(
            game_id=game.pk,
            seat=number,
            vk_user_id=d["vk_user_id"],
            name=d["new_name"],
            by=actor(request),
            reason=d["reason"].strip(),
        )
        say(request, "replaced", number=number, name=d["new_name"])
        return HttpResponseRedirect(game_url(game))
    return _replace_page(request, game, number)


@gm_view("POST", refused="panel_discipline")
def forgive_view(request: HttpRequest, game, strike_id: int) -> HttpResponse:
    form = ReasonForm(request.POST)
    reason = form.cleaned_data["reason"].strip() if form.is_valid() else ""
    strike = strike_forgive(game_id=game.pk, strike_id=strike_id, by=actor(request), reason=reason)
    say(request, "strike_forgiven", number=strike.seat.number)
    return back(request, game, "panel_discipline")


@gm_view("POST", refused="panel_discipline")
def flag_view(request: HttpRequest, game, flag_id: int) -> HttpResponse:
    form = FlagForm(request.POST)
    if not form.is_valid():
        raise FlagDecisionMissing()
    acted = form.cleaned_data["decision"] == "acted"
    flag_resolve(
        game_id=game.pk,
        flag_id=flag_id,
        by=actor(request),
        acted=acted,
        note=form.cleaned_data["note"],
    )
    say(request, "flag_closed", acted=acted)
    return back(request, game, "panel_discipline")
