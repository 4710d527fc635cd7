"""The GM panel on Django admin: the games list, and the GM's views added through
``GameAdmin.get_urls`` behind ``admin_site.admin_view`` and per-game access checks.

A GM is any active staff account; they see and change only the games they run (``Game.gms``),
a superuser sees all. Games are never deleted here: a game is ended or cancelled.

Every list accepts only the lookups its filters use (``panel.lookups``): no URL a GM shapes
filters, sorts or searches by a secret (a seed of the deal, a token, a password hash).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from gameplay.models import Game, PhaseStatus, SeatStatus
from gameplay.selectors.games import games_for
from panel.lookups import AllowListedLookups
from panel.russian_admin import RussianTitles
from panel.templatetags.panel_tags import local_time
from panel.views import discipline, game, record, running, setup, texts


def _is_gm(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_staff)


@admin.register(Game)
class GameAdmin(AllowListedLookups, RussianTitles, admin.ModelAdmin):
    accusative = "игру"
    list_display = ("title", "status", "players", "current_phase", "created")
    list_filter = ("status",)
    allowed_lookups = ("status__exact",)
    search_fields = ("name",)
    list_per_page = 50

    # --- access: every staff user is a GM of their own games --------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Game]:
        return (
            games_for(request.user)
            .annotate(
                n_players=Count("seats", filter=Q(seats__status=SeatStatus.PLAYER), distinct=True),
            )
            .prefetch_related("phases")
        )

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_gm(request)

    def has_view_permission(self, request: HttpRequest, obj: Game | None = None) -> bool:
        return _is_gm(request) and (
            obj is None or games_for(request.user).filter(pk=obj.pk).exists()
        )

    def has_change_permission(self, request: HttpRequest, obj: Game | None = None) -> bool:
        return self.has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return _is_gm(request)

    def has_delete_permission(self, request: HttpRequest, obj: Game | None = None) -> bool:
        return False

    # --- the list ---------------------------------------------------------------------------

    @admin.display(description="игра", ordering="name")
    def title(self, obj: Game) -> str:
        url = reverse("admin:panel_game", kwargs={"game_id": obj.pk})
        return format_html('<a href="{}"><strong>{}</strong></a>', url, obj.name)

    @admin.display(description="игроков", ordering="n_players")
    def players(self, obj: Game) -> int:
        return getattr(obj, "n_players", 0)

    @admin.display(description="фаза")
    def current_phase(self, obj: Game) -> str:
        live = [p for p in obj.phases.all() if p.status in (PhaseStatus.OPEN, PhaseStatus.REVIEW)]
        if not live:
            return "—"
        phase = live[-1]
        review = " (проверка)" if phase.status == PhaseStatus.REVIEW else ""
        return f"{phase}{review}"

    @admin.display(description="создана", ordering="created_at")
    def created(self, obj: Game) -> str:
        return local_time(obj.created_at, obj.time_zone)

    # --- the admin's own object views lead to the panel --------------------------------------

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        return game.game_create(request)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        obj = self._visible(request, object_id)
        return HttpResponseRedirect(reverse("admin:panel_game", kwargs={"game_id": obj.pk}))

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        self._visible(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        self._visible(request, object_id)  # another community's game: a 404, not a 403
        return super().delete_view(request, object_id, extra_context)

    def _visible(self, request: HttpRequest, object_id: str) -> Game:
        """The game, if it is one of the user's; another GM's game does not exist for them."""
        obj = self.get_object(request, object_id)
        if obj is None:
            raise Http404("Нет такой игры.")
        return obj

    # --- the GM's views ---------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        views = [
            ("", game.game_view, "panel_game"),
            ("settings/", game.game_settings, "panel_settings"),
            ("texts/", texts.texts_view, "panel_texts"),
            ("texts/preview/", texts.texts_preview_view, "panel_texts_preview"),
            ("phase/story/", texts.story_view, "panel_story"),
            ("end/", game.game_end_view, "panel_end"),
            ("players/", setup.players_view, "panel_players"),
            ("players/add/", setup.player_add_view, "panel_player_add"),
            ("players/bulk/", setup.players_bulk_view, "panel_players_bulk"),
            ("players/<int:seat_id>/remove/", setup.player_remove_view, "panel_player_remove"),
            ("players/history/", record.history_view, "panel_history_lookup"),
            ("players/history/<int:vk_user_id>/", record.history_view, "panel_history"),
            ("deal/", setup.deal_view, "panel_deal"),
            ("deal/run/", setup.deal_run_view, "panel_deal_run"),
            ("deal/round/", setup.deal_round_view, "panel_deal_round"),
            ("start/", setup.start_view, "panel_start"),
            ("phase/extend/", running.extend_view, "panel_extend"),
            ("phase/close/", running.close_view, "panel_close"),
            ("phase/remind/", running.remind_view, "panel_remind"),
            ("phase/count/", running.vote_count_view, "panel_vote_count"),
            ("night/edit/", running.night_edit_view, "panel_night_edit"),
            ("night/publish/", running.night_publish_view, "panel_night_publish"),
            ("night/reopen/", running.night_reopen_view, "panel_night_reopen"),
            ("discipline/", discipline.discipline_view, "panel_discipline"),
            ("seats/<int:number>/modkill/", discipline.modkill_view, "panel_modkill"),
            ("seats/<int:number>/replace/", discipline.replace_view, "panel_replace"),
            ("seats/<int:number>/penalty/", discipline.penalty_view, "panel_penalty"),
            ("strikes/<int:strike_id>/forgive/", discipline.forgive_view, "panel_forgive"),
            ("flags/<int:flag_id>/resolve/", discipline.flag_view, "panel_flag"),
            ("spectators/", record.spectators_view, "panel_spectators"),
            ("spectators/link/", record.chat_link_view, "panel_chat_link"),
            ("spectators/create/", record.chat_create_view, "panel_chat_create"),
            ("spectators/open/", record.chat_open_view, "panel_chat_open"),
            ("spectators/close/", record.chat_close_view, "panel_chat_close"),
            ("log/", record.log_view, "panel_log"),
            ("outbox/", record.outbox_view, "panel_outbox"),
            ("outbox/retry/", record.outbox_retry_all_view, "panel_outbox_retry_all"),
            ("outbox/<int:outbox_id>/retry/", record.outbox_retry_view, "panel_outbox_retry"),
            ("export/", record.export_view, "panel_export"),
            ("export/download/", record.export_download_view, "panel_export_download"),
        ]
        mine = [
            path(f"<int:game_id>/{route}", wrap(view), name=name) for route, view, name in views
        ]
        return mine + super().get_urls()


# The accounts (a superuser's pages), with the admin's phrases in the right case.
admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class PanelUserAdmin(AllowListedLookups, RussianTitles, UserAdmin):
    accusative = "пользователя"
    accusative_plural = "пользователей"
    allowed_lookups = (
        "is_staff__exact",
        "is_superuser__exact",
        "is_active__exact",
        "groups__id__exact",
        "groups__isnull",
    )


@admin.register(Group)
class PanelGroupAdmin(AllowListedLookups, RussianTitles, GroupAdmin):
    accusative = "группу"
    accusative_plural = "группы"
