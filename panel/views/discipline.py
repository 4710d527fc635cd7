"""Discipline: modkill, replacement, manual penalty, strike forgiveness, moderation flags."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class _Punishment:
    """What a punishment's confirmation page differs by."""

    #: The decision on a moderation flag, and the page's name.
    punish: str
    #: The service that punishes without a flag.
    service: Callable[..., object]
    #: Where the GM goes back to without a ``next``.
    back_to: str
    title: str
    #: The page's question and button for the seat.
    question: Callable[[Seat], dict[str, object]]
    #: What the GM is told once it is done (the seat read again).
    done: Callable[[HttpRequest, Seat], None]


def _modkill_question(seat: Seat) -> dict[str, object]:
    return {**confirmation("modkill", seat=seat), "button": "Модкилл", "danger": True}


def _penalty_question(seat: Seat) -> dict[str, object]:
    modkill = seat.strikes >= 1
    return {
        **confirmation("penalty", seat=seat),
        "button": "Модкилл штрафом" if modkill else "Оштрафовать",
        "danger": modkill,
    }


def _modkilled(request: HttpRequest, seat: Seat) -> None:
    say(request, "modkilled", seat=seat)


def _struck(request: HttpRequest, seat: Seat) -> None:
    say(request, "struck", seat=seat)


_MODKILL = _Punishment(
    "modkill", seat_modkill, "panel_game", "Модкилл", _modkill_question, _modkilled
)
_PENALTY = _Punishment(
    "penalty", strike_give, "panel_discipline", "Штраф", _penalty_question, _struck
)


def _confirmation_page(how: _Punishment) -> Callable[..., HttpResponse]:
    """The punishment's confirmation, with the reason as the GM typed it (also what a refusal
    shows again)."""

    def page(request: HttpRequest, game, number: int, seat: Seat | None = None) -> HttpResponse:
        seat = seat or _seat(game, number)
        flag_id = request.POST.get("flag") or request.GET.get("flag") or ""
        form = PunishForm(request.POST if request.method == "POST" else None)
        return render_panel(
            request,
            game,
            "panel/confirm.html",
            {
                "action": game_url(game, f"panel_{how.punish}", number=number),
                **how.question(seat),
                "form": form,
                "hidden": {"flag": flag_id},
                "next": request.GET.get("next", ""),
            },
            title=how.title,
            tab="discipline",
        )

    return page


@gm_view("GET", "POST", refused=_confirmation_page(_MODKILL))
def modkill_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A modkill, confirmed on its own page first, with the reason the player is told."""
    return _punish(request, game, number, _MODKILL)


@gm_view("GET", "POST", refused=_confirmation_page(_PENALTY))
def penalty_view(request: HttpRequest, game, number: int) -> HttpResponse:
    """A manual strike: a first one costs +2 votes, a second one is a modkill. The player is
    told the reason."""
    return _punish(request, game, number, _PENALTY)


def _punish(request: HttpRequest, game, number: int, how: _Punishment) -> HttpResponse:
    """A punishment confirmed on its own page, with the reason the player is told: the
    decision on the moderation flag the page was opened from, or without one the punishment's
    service (a refusal raised: ``gm_view`` shows the page again with its text)."""
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
                punish=how.punish,
                seat=number,
            )
        else:
            how.service(game_id=game.pk, seat=number, by=actor(request), reason=reason)
        seat.refresh_from_db()
        how.done(request, seat)
        return back(request, game, how.back_to)
    return _confirmation_page(how)(request, game, number, seat)  # nothing done: the seat as read


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
