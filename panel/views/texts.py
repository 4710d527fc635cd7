"""The game's theme texts (edited with a live preview rendered from the game) and the GM's
story paragraph of the current phase's post."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse

from gameplay import gmtext, themes
from gameplay.messages import MessageError
from gameplay.services.story import (
    phase_story_set,
    seat_count,
    slot_sources,
    theme_preview,
    theme_text_set,
)
from panel.access import actor, back, game_url, gm_view, render_panel
from panel.flash import say


def _texts_page(request: HttpRequest, game) -> HttpResponse:
    """The texts; after a refused save, the slot with what the GM typed (nothing was saved)."""
    posted: dict[str, str] = {}
    if request.method == "POST":
        posted[request.POST.get("slot", "")] = request.POST.get("text", "")
        game.refresh_from_db()
    slots = slot_sources(game=game)
    for s in slots:
        if s["slot"] in posted:
            s["text"], s["refused"] = posted[s["slot"]], True
    return render_panel(
        request,
        game,
        "panel/texts.html",
        {
            "slots": slots,
            "theme_title": themes.of(game).title,
            "seats": seat_count(game=game),
            "loop_depth": gmtext.MAX_LOOP_DEPTH,
        },
        title=f"Тексты темы: {game.name}",
        tab="texts",
    )


@gm_view("GET", "POST", refused=_texts_page)
def texts_view(request: HttpRequest, game) -> HttpResponse:
    if request.method == "POST":
        slot = request.POST.get("slot", "")
        theme_text_set(
            game_id=game.pk, by=actor(request), slot=slot, text=request.POST.get("text", "")
        )
        say(request, "theme_text_saved", slot=themes.SLOTS.get(slot, slot))
        return HttpResponseRedirect(game_url(game, "panel_texts") + f"#slot-{slot}")
    return _texts_page(request, game)


@gm_view("POST")
def texts_preview_view(request: HttpRequest, game) -> HttpResponse:
    """The live preview: the post with the typed text in it, or why it does not render."""
    try:
        text = theme_preview(
            game=game, slot=request.POST.get("slot", ""), text=request.POST.get("text", "")
        )
    except MessageError as e:
        where = f"Строка {e.line}: " if e.line else ""
        return JsonResponse({"ok": False, "error": f"{where}{e.reason}."})
    return JsonResponse({"ok": True, "text": text})


@gm_view("POST", refused="panel_game")
def story_view(request: HttpRequest, game) -> HttpResponse:
    phase_id = request.POST.get("phase", "")
    phase_story_set(
        game_id=game.pk,
        by=actor(request),
        story=request.POST.get("story", ""),
        phase_id=int(phase_id) if phase_id.isdigit() else None,
    )
    say(request, "story_saved")
    return back(request, game)
