"""Before the start: sign-ups and reserves, the deal (randomise) and the start."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from gameplay.models import DealRound, GameStatus, Seat, SeatStatus
from gameplay.selectors.panel import draw_rounds
from gameplay.services.gm import player_add, player_remove, players_add_bulk
from gameplay.services.setup import deal_round_new, game_deal, game_start, round_was_dealt
from panel.access import actor, attempt, back, game_url, gm_view, render_panel
from panel.forms import PlayerAddForm, PlayerBulkForm


@gm_view()
def players_view(request: HttpRequest, game) -> HttpResponse:
    seats = list(Seat.objects.filter(game=game).order_by("number", "signed_up_at", "id"))
    return render_panel(request, game, "panel/players.html", {
        "players": [s for s in seats if s.status == SeatStatus.PLAYER],
        "reserves": [s for s in seats if s.status == SeatStatus.RESERVE],
        "withdrawn": [s for s in seats if s.status == SeatStatus.WITHDRAWN],
        "add_form": PlayerAddForm(),
        "bulk_form": PlayerBulkForm(),
        "roles_total": game.mafia_count + game.commissar_count + game.doctor_count
        + game.maniac_count + game.civilian_count,
    }, title=f"Игроки: {game.name}", tab="players")


def _form_errors(request: HttpRequest, form) -> None:
    for errors in form.errors.values():
        for error in errors:
            messages.error(request, error)


@gm_view("POST")
def player_add_view(request: HttpRequest, game) -> HttpResponse:
    form = PlayerAddForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(request, game, "panel_players")
    d = form.cleaned_data
    ok, seat = attempt(request, player_add, game_id=game.pk, by=actor(request), vk=d["vk"],
                       name=d["name"], reserve=d["reserve"])
    if ok:
        where = "в запас" if d["reserve"] else "в игру"
        messages.success(request, f"{seat.name} (id{seat.vk_user_id}) записан {where}.")
    return back(request, game, "panel_players")


@gm_view("POST")
def players_bulk_view(request: HttpRequest, game) -> HttpResponse:
    form = PlayerBulkForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(request, game, "panel_players")
    ok, seats = attempt(request, players_add_bulk, game_id=game.pk, by=actor(request),
                        text=form.cleaned_data["lines"], reserve=form.cleaned_data["reserve"])
    if ok:
        messages.success(request, f"Добавлено игроков: {len(seats)}.")
    return back(request, game, "panel_players")


@gm_view("POST")
def player_remove_view(request: HttpRequest, game, seat_id: int) -> HttpResponse:
    ok, seat = attempt(request, player_remove, game_id=game.pk, by=actor(request),
                       seat_id=seat_id)
    if ok:
        messages.success(request, f"{seat.name} снят с игры.")
    return back(request, game, "panel_players")


@gm_view()
def deal_view(request: HttpRequest, game) -> HttpResponse:
    rounds = draw_rounds(game)
    seats = list(Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False)
                 .order_by("number"))
    # The seeds stay hidden until the end (gameplay/rules/deal.py): only the commitments show.
    finished = game.status in (GameStatus.FINISHED, GameStatus.CANCELLED)
    seed_rounds = [
        {"number": r.number, "commitment": r.commitment, "seed": r.seed if finished else ""}
        for r in DealRound.objects.filter(game=game)
    ]
    return render_panel(request, game, "panel/deal.html", {
        "rounds": rounds, "seats": seats, "seed_rounds": seed_rounds,
        "mafia": {s.number for s in seats if s.role == "mafia"},
        "can_new_round": game.status in (GameStatus.RECRUITING, GameStatus.DEALT)
        and round_was_dealt(game),
    }, title=f"Раздача: {game.name}", tab="deal")


@gm_view("GET", "POST")
def deal_run_view(request: HttpRequest, game) -> HttpResponse:
    """Deal roles and draw items from the current round's seed (one click). A dealt game gets
    a new deal only from a new round (``deal_round_view``)."""
    if game.status == GameStatus.DEALT:
        return HttpResponseRedirect(game_url(game, "panel_deal_round"))
    if request.method == "POST":
        ok, summary = attempt(request, game_deal, game_id=game.pk, by=actor(request))
        if ok:
            messages.success(
                request,
                f"Роли розданы. Розыгрышей предметов: {len(summary.draws)}; в принятом у мафии "
                f"ровно {summary.draws[-1]['mafia_items']} предмет.",
            )
            return HttpResponseRedirect(game_url(game, "panel_deal"))
        return back(request, game)
    return HttpResponseRedirect(game_url(game))


@gm_view("GET", "POST")
def deal_round_view(request: HttpRequest, game) -> HttpResponse:
    """A new round of the deal (a new seed; an override), confirmed first."""
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        ok, rnd = attempt(request, deal_round_new, game_id=game.pk, by=actor(request))
        if ok:
            messages.success(
                request,
                f"Начат раунд {rnd.number} раздачи: хеш нового зерна опубликован в теме"
                + ("; роли розданы заново." if game.status == GameStatus.DEALT else "."),
            )
            return HttpResponseRedirect(game_url(game, "panel_deal"))
        return back(request, game, "panel_deal")
    return render_panel(request, game, "panel/confirm.html", {
        "action": game_url(game, "panel_deal_round"),
        "question": "Начать новый раунд раздачи?",
        "details": [
            "Тот же состав с тем же зерном всегда даёт ту же раздачу: другая раздача — только "
            "из нового зерна. Сервер выберет его, а хеш опубликует в теме («Раунд N»).",
            "Текущая раздача будет отброшена. Это решение ведущего: оно попадёт в журнал и в "
            "«Решения ведущего» в конце игры, а зёрна всех раундов будут опубликованы.",
        ],
        "button": "Начать новый раунд",
    }, title="Новый раунд раздачи", tab="deal")


@gm_view("POST")
def start_view(request: HttpRequest, game) -> HttpResponse:
    ok, _ = attempt(request, game_start, game_id=game.pk, by=actor(request))
    if ok:
        messages.success(request, "Игра началась: состав и хеш опубликованы, роли разосланы, "
                                  "идёт День 1.")
    return HttpResponseRedirect(game_url(game))
