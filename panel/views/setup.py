"""Before the start: sign-ups and reserves, the deal (randomise) and the start."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone

from gameplay.models import GameStatus, SeatStatus
from gameplay.refusals import DiscardNotConfirmed, NoSuchSignup, NotDealtYet, StartTooLate
from gameplay.selectors.game_page import item_states
from gameplay.selectors.record import deal_rounds, draw_rounds, roster
from gameplay.selectors.seats import all_seats, listed_seat
from gameplay.selectors.table import players
from gameplay.services.deal import deal_round_new, game_deal, round_was_dealt
from gameplay.services.setup import game_start
from gameplay.services.signup import player_add, player_remove, players_add_bulk
from panel.access import actor, back, game_url, gm_view, render_panel
from panel.flash import confirmation, say
from panel.forms import PlayerAddForm, PlayerBulkForm


@gm_view()
def players_view(request: HttpRequest, game) -> HttpResponse:
    seats = all_seats(game)
    return render_panel(
        request,
        game,
        "panel/players.html",
        {
            "players": [s for s in seats if s.status == SeatStatus.PLAYER],
            "reserves": [s for s in seats if s.status == SeatStatus.RESERVE],
            "withdrawn": [s for s in seats if s.status == SeatStatus.WITHDRAWN],
            "roster": roster(game)
            if game.status in (GameStatus.RUNNING, GameStatus.FINISHED)
            else None,
            "add_form": PlayerAddForm(),
            "bulk_form": PlayerBulkForm(),
            "roles_total": game.mafia_count
            + game.commissar_count
            + game.doctor_count
            + game.maniac_count
            + game.civilian_count,
        },
        title=f"Игроки: {game.name}",
        tab="players",
    )


def _form_errors(request: HttpRequest, form) -> None:
    for errors in form.errors.values():
        for error in errors:
            messages.error(request, error)


@gm_view("POST", refused="panel_players")
def player_add_view(request: HttpRequest, game) -> HttpResponse:
    form = PlayerAddForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(request, game, "panel_players")
    d = form.cleaned_data
    seat = player_add(
        game_id=game.pk, by=actor(request), vk=d["vk"], name=d["name"], reserve=d["reserve"]
    )
    say(request, "player_added", seat=seat, reserve=d["reserve"])
    return back(request, game, "panel_players")


@gm_view("POST", refused="panel_players")
def players_bulk_view(request: HttpRequest, game) -> HttpResponse:
    form = PlayerBulkForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return back(request, game, "panel_players")
    seats = players_add_bulk(
        game_id=game.pk,
        by=actor(request),
        text=form.cleaned_data["lines"],
        reserve=form.cleaned_data["reserve"],
    )
    say(request, "players_added", count=len(seats))
    return back(request, game, "panel_players")


@gm_view("GET", "POST", refused="panel_players")
def player_remove_view(request: HttpRequest, game, seat_id: int) -> HttpResponse:
    """Take a sign-up or a reserve entry off the game. Removing a player of a dealt game
    discards the deal, so it is confirmed on its own page first (as is any GET)."""
    seat = listed_seat(game, seat_id)
    if seat is None:
        raise NoSuchSignup()
    discards = game.status == GameStatus.DEALT and seat.status == SeatStatus.PLAYER
    confirmed = request.POST.get("confirm") == "yes"
    if request.method == "POST" and (confirmed or not discards):
        # A discard only when the GM confirmed the page that warned of it («discard»).
        try:
            seat = player_remove(
                game_id=game.pk,
                by=actor(request),
                seat_id=seat_id,
                discard=confirmed and request.POST.get("discard") == "yes",
            )
        except DiscardNotConfirmed:  # dealt since the page was shown: warn first
            game.refresh_from_db()
            discards = True
        else:
            say(request, "player_removed", seat=seat, discarded=discards)
            return back(request, game, "panel_players")
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, "panel_player_remove", seat_id=seat.pk),
            **confirmation("player_remove", seat=seat, discards=discards),
            "button": "Снять и сбросить раздачу" if discards else "Снять",
            "danger": discards,
            "hidden": {"discard": "yes" if discards else ""},
            "next": request.POST.get("next") or request.GET.get("next", ""),
        },
        title="Снять игрока",
        tab="players",
    )


@gm_view()
def deal_view(request: HttpRequest, game) -> HttpResponse:
    rounds = draw_rounds(game)
    seats = players(game)
    # The seeds stay hidden until the end (gameplay/rules/deal.py): only the commitments show.
    finished = game.status in (GameStatus.FINISHED, GameStatus.CANCELLED)
    seed_rounds = [
        {"number": r.number, "commitment": r.commitment, "seed": r.seed if finished else ""}
        for r in deal_rounds(game)
    ]
    return render_panel(
        request,
        game,
        "panel/deal.html",
        {
            "rounds": rounds,
            "seats": seats,
            "seed_rounds": seed_rounds,
            "item_states": item_states(game, seats),
            "mafia": {s.number for s in seats if s.role == "mafia"},
            "can_new_round": game.status in (GameStatus.RECRUITING, GameStatus.DEALT)
            and round_was_dealt(game=game),
        },
        title=f"Раздача: {game.name}",
        tab="deal",
    )


@gm_view("GET", "POST", refused="panel_game")
def deal_run_view(request: HttpRequest, game) -> HttpResponse:
    """Deal roles and draw items from the current round's seed (one click). A dealt game gets
    a new deal only from a new round (``deal_round_view``)."""
    if game.status == GameStatus.DEALT:
        return HttpResponseRedirect(game_url(game, "panel_deal_round"))
    if request.method == "POST":
        summary = game_deal(game_id=game.pk, by=actor(request))
        items = summary.draws[-1]["mafia_items"]
        say(request, "dealt", draws=len(summary.draws), mafia_items=items)
        return HttpResponseRedirect(game_url(game, "panel_deal"))
    return HttpResponseRedirect(game_url(game))


@gm_view("GET", "POST", refused="panel_deal")
def deal_round_view(request: HttpRequest, game) -> HttpResponse:
    """A new round of the deal (a new seed; an override), confirmed first."""
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        rnd = deal_round_new(game_id=game.pk, by=actor(request))
        say(
            request,
            "deal_round_started",
            number=rnd.number,
            dealt=game.status == GameStatus.DEALT,
        )
        return HttpResponseRedirect(game_url(game, "panel_deal"))
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, "panel_deal_round"),
            **confirmation("deal_round"),
            "button": "Начать новый раунд",
        },
        title="Новый раунд раздачи",
        tab="deal",
    )


@gm_view("GET", "POST", refused="panel_game")
def start_view(request: HttpRequest, game) -> HttpResponse:
    """Start the game — after a page that says what the start will publish and send."""
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        game_start(game_id=game.pk, by=actor(request))
        say(request, "game_started")
        return HttpResponseRedirect(game_url(game))
    if game.status != GameStatus.DEALT:
        raise NotDealtYet() if game.status == GameStatus.RECRUITING else StartTooLate()
    seats = players(game)
    return render_panel(
        request,
        game,
        "panel/confirm.html",
        {
            "action": game_url(game, "panel_start"),
            **confirmation(
                "start",
                game=game,
                players=len(seats),
                deadline=timezone.now() + game.day_length,
                closed=[s for s in seats if s.pm_allowed is False],
            ),
            "button": "Начать игру",
        },
        title="Начать игру",
        tab="game",
    )
