"""The record: spectator chat, the event log, deliveries, export, a player's history."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils.text import slugify

from gameplay.export import Export, export_game, replay_check
from gameplay.models import OutboxStatus
from gameplay.selectors.history import player_history
from gameplay.selectors.record import (
    PeopleNames,
    actors_matching,
    event_kinds,
    event_log,
    outbox_rows,
    outbox_totals,
    people_names,
    phases_of,
)
from gameplay.selectors.spectators import spectator_page
from gameplay.services.retries import outbox_retry, outbox_retry_all
from gameplay.services.spectators import spectator_chat_create, spectator_chat_link
from gameplay.services.spectators import spectator_chat_set_open as chat_set_open
from panel.access import actor, back, gm_view, render_panel
from panel.flash import say
from panel.forms import ChatLinkForm, HistoryLookupForm, LogFilterForm
from panel.labels import actor_label, describe_event, event_label

LOG_PAGE = 100


@gm_view()
def spectators_view(request: HttpRequest, game) -> HttpResponse:
    chat = game.spectator_chat_id
    initial = {"chat": str(chat - 2_000_000_000) if chat else ""}
    return render_panel(
        request,
        game,
        "panel/spectators.html",
        {
            "page": spectator_page(game),
            "form": ChatLinkForm(initial=initial),
        },
        title=f"Беседа зрителей: {game.name}",
        tab="spectators",
    )


@gm_view("POST", refused="panel_spectators")
def chat_link_view(request: HttpRequest, game) -> HttpResponse:
    form = ChatLinkForm(request.POST)
    if not form.is_valid():
        for error in form.errors.get("chat", []):
            messages.error(request, cast(str, error))  # an error list yields its messages
        return back(request, game, "panel_spectators")
    spectator_chat_link(game_id=game.pk, by=actor(request), chat=form.cleaned_data["chat"])
    say(request, "chat_linked")
    return back(request, game, "panel_spectators")


@gm_view("POST", refused="panel_spectators")
def chat_create_view(request: HttpRequest, game) -> HttpResponse:
    row = spectator_chat_create(game_id=game.pk, by=actor(request))
    say(request, "chat_creating", title=row.text)
    return back(request, game, "panel_spectators")


@gm_view("POST", refused="panel_spectators")
def chat_open_view(request: HttpRequest, game) -> HttpResponse:
    chat_set_open(game_id=game.pk, by=actor(request), open=True)
    say(request, "chat_opened")
    return back(request, game, "panel_spectators")


@gm_view("POST", refused="panel_spectators")
def chat_close_view(request: HttpRequest, game) -> HttpResponse:
    chat_set_open(game_id=game.pk, by=actor(request), open=False)
    say(request, "chat_closed")
    return back(request, game, "panel_spectators")


def _shown(actor: str, names: PeopleNames) -> str:
    """An actor as the log shows it, for «Кто»."""
    return actor_label(actor, names.seats, names.vk, names.gms)


@gm_view()
def log_view(request: HttpRequest, game) -> HttpResponse:
    kinds = [(k, event_label(k)) for k in event_kinds(game)]
    phases = [(p.pk, str(p)) for p in phases_of(game)]
    form = LogFilterForm(request.GET or None, kinds=kinds, phases=phases)
    filters = form.cleaned_data if form.is_valid() else {}
    who = filters.get("actor") or ""
    qs = event_log(
        game,
        kind=filters.get("kind") or "",
        phase_id=filters.get("phase"),
        actors=actors_matching(game, who, _shown) if who else None,
        overrides=bool(filters.get("overrides")),
        seat=filters.get("seat"),
    )
    page = Paginator(qs, LOG_PAGE).get_page(request.GET.get("page"))
    events = list(page.object_list)
    names = people_names(game, {e.actor for e in events})
    rows = [
        (
            e,
            actor_label(e.actor, names.seats, names.vk, names.gms),
            event_label(e.kind),
            describe_event(e, names.vk),
        )
        for e in events
    ]
    query = request.GET.copy()
    query.pop("page", None)
    return render_panel(
        request,
        game,
        "panel/log.html",
        {
            "form": form,
            "page_obj": page,
            "rows": rows,
            "query": query.urlencode(),
        },
        title=f"Журнал: {game.name}",
        tab="log",
    )


@gm_view()
def outbox_view(request: HttpRequest, game) -> HttpResponse:
    status = request.GET.get("status", OutboxStatus.FAILED)
    if status not in {s.value for s in OutboxStatus} | {"all"}:
        status = OutboxStatus.FAILED
    page = Paginator(outbox_rows(game, "" if status == "all" else status), 50).get_page(
        request.GET.get("page")
    )
    totals = outbox_totals(game)
    return render_panel(
        request,
        game,
        "panel/outbox.html",
        {
            "page_obj": page,
            "status": status,
            "totals": totals,
            "statuses": [(s.value, s.label) for s in OutboxStatus] + [("all", "все")],
        },
        title=f"Доставка: {game.name}",
        tab="outbox",
    )


@gm_view("POST", refused="panel_outbox")
def outbox_retry_view(request: HttpRequest, game, outbox_id: int) -> HttpResponse:
    outbox_retry(game_id=game.pk, outbox_id=outbox_id, by=actor(request))
    say(request, "outbox_retried")
    return back(request, game, "panel_outbox")


@gm_view("POST", refused="panel_outbox")
def outbox_retry_all_view(request: HttpRequest, game) -> HttpResponse:
    count = outbox_retry_all(game_id=game.pk, by=actor(request))
    say(request, "outbox_retried_all", count=count)
    return back(request, game, "panel_outbox")


def _export_page(
    request: HttpRequest, game, export: Export | None = None, differences: list[str] | None = None
) -> HttpResponse:
    """The export page: the scenario (none when the export is refused) and the differences
    its replay found."""
    return render_panel(
        request,
        game,
        "panel/export.html",
        {
            "export": export,
            "differences": differences,
            "preview": export.to_json() if export else "",
        },
        title=f"Экспорт: {game.name}",
        tab="export",
    )


@gm_view("GET", "POST", refused=_export_page)
def export_view(request: HttpRequest, game) -> HttpResponse:
    """The export page; POST plays the export (rolled back) and shows the differences."""
    export = export_game(game)
    differences = replay_check(game) if request.method == "POST" else None
    return _export_page(request, game, export, differences)


@gm_view(refused="panel_export")
def export_download_view(request: HttpRequest, game) -> HttpResponse:
    export = export_game(game)
    name = slugify(game.name, allow_unicode=False) or "game"
    response = HttpResponse(export.to_json(), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}-{game.pk}.json"'
    return response


@gm_view()
def history_view(request: HttpRequest, game, vk_user_id: int | None = None) -> HttpResponse:
    """A player's games, roles and wins across games (looked up from this game's page)."""
    form = HistoryLookupForm(request.GET if "vk" in request.GET else None)
    if form.is_bound and form.is_valid():
        vk_user_id = form.cleaned_data["vk"]
    history = player_history(vk_user_id, request.user) if vk_user_id else None
    return render_panel(
        request,
        game,
        "panel/history.html",
        {
            "history": history,
            "form": form if form.is_bound else HistoryLookupForm(initial={"vk": vk_user_id or ""}),
        },
        title="История игрока",
        tab="players",
    )
