"""Who may open which panel page: a game's GMs (and superusers) only; every change is a POST
with CSRF; another GM gets 403/404 and changes nothing; anonymous users go to the login page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, reverse

from gameplay.models import (
    FlagKind,
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Phase,
    Seat,
    Strike,
    Vote,
)
from tests.panel.support import make_game, module_gm, vote_round

pytestmark = pytest.mark.django_db


def game_patterns() -> list[URLPattern]:
    """Every URL of the games' admin that names one game: the panel's and the admin's own."""
    model_admin = admin.site._registry[Game]
    return [
        p
        for p in model_admin.get_urls()
        if p.name and ("game_id" in str(p.pattern) or "object_id" in str(p.pattern))
    ]


def fill(pattern: URLPattern, game: Game) -> str:
    """A URL of the pattern for this game, with real ids for the other parameters."""
    seat = Seat.objects.filter(game=game, number__isnull=False).first()
    assert seat is not None
    strike = Strike.objects.filter(seat__game=game).first()
    assert strike is not None
    flag = ModerationFlag.objects.filter(game=game).first()
    assert flag is not None
    outbox = Outbox.objects.filter(game=game).first()
    assert outbox is not None
    values = {
        "game_id": game.pk,
        "object_id": game.pk,
        "seat_id": seat.pk,
        "number": seat.number,
        "strike_id": strike.pk,
        "flag_id": flag.pk,
        "outbox_id": outbox.pk,
        "vk_user_id": seat.vk_user_id,
    }
    names = re.findall(r"<(?:\w+:)?(\w+)>", str(pattern.pattern))
    return reverse(f"admin:{pattern.name}", kwargs={n: values[n] for n in names})


def snapshot(game: Game) -> tuple:
    game.refresh_from_db()
    return (
        tuple((f.name, getattr(game, f.attname)) for f in Game._meta.concrete_fields),
        tuple(Seat.objects.filter(game=game).order_by("pk").values_list()),
        tuple(
            Phase.objects.filter(game=game)
            .order_by("pk")
            .values_list("status", "deadline", "result")
        ),
        tuple(
            Strike.objects.filter(seat__game=game).order_by("pk").values_list("forgiven", "count")
        ),
        tuple(Vote.objects.filter(phase__game=game).order_by("pk").values_list("current", "void")),
        GameEvent.objects.filter(game=game).count(),
        tuple(Outbox.objects.filter(game=game).order_by("pk").values_list("status", flat=True)),
        tuple(ModerationFlag.objects.filter(game=game).values_list("status", flat=True)),
    )


world, gm = module_gm(lambda gm: {"game": _victim(gm).pk})


def _victim(gm: Any) -> Game:
    """A running game of ``gm`` with a vote, a strike, a flag and a failed delivery, built once
    for the module in a topic of its own, so that a test's game in the default topic can run
    beside it."""
    game = make_game(gm, players=7, vk_base=780_000)
    vote_round(game, skip=1)
    from gameplay import services

    services.day_close(game_id=game.pk)
    seat = Seat.objects.filter(game=game, alive=True).first()
    ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.PROFANITY, text="…")
    Outbox.objects.filter(game=game).update(status=OutboxStatus.FAILED)
    assert Strike.objects.filter(seat__game=game).exists()
    return game


@pytest.fixture
def victim_game(world: dict[str, int]) -> Game:
    return Game.objects.get(pk=world["game"])


ALL_PAYLOAD = {
    "confirm": "yes",
    "minutes": "60",
    "reason": "x",
    "deaths": ["1"],
    "winner": "town",
    "vk": "123",
    "name": "n",
    "lines": "id1 a",
    "chat": "5",
    "decision": "dismiss",
    "phase": "",
    "reserve": "",
}


def test_the_walk_covers_every_panel_view() -> None:
    names = {p.name for p in game_patterns()}
    assert len([n for n in names if n and n.startswith("panel_")]) >= 30
    assert {"gameplay_game_change", "gameplay_game_history", "gameplay_game_delete"} <= names
    # The confirmation pages are GETs of the actions they confirm: walked like every page.
    assert {"panel_close", "panel_start", "panel_player_remove", "panel_modkill"} <= names


def test_my_games_is_for_gms_only(victim_game: Game, other_client: Client) -> None:
    assert Client().get(reverse("admin:index")).status_code == 302  # to the login page
    page = other_client.get(reverse("admin:index")).content.decode()
    assert victim_game.name not in page and "Активных игр нет" in page


def test_another_gm_gets_403_or_404_and_changes_nothing(
    victim_game: Game, other_client: Client
) -> None:
    make_game(None, players=7, vk_base=50_000)  # the other GM's URLs exist for other games
    before = snapshot(victim_game)
    for pattern in game_patterns():
        url = fill(pattern, victim_game)
        for method in ("get", "post"):
            response = getattr(other_client, method)(url, ALL_PAYLOAD)
            assert response.status_code in (403, 404), (method, url, response.status_code)
    assert snapshot(victim_game) == before


#: English words of Django admin and of templates that print a missing value.
NOT_RUSSIAN = (
    "Django administration",
    "Welcome,",
    "Log out",
    "View site",
    ">None<",
    " None ",
    "Home</a>",
)


def test_the_games_own_gm_reaches_every_page_in_russian(
    victim_game: Game, gm_client: Client
) -> None:
    for pattern in game_patterns():
        if pattern.name == "gameplay_game_delete":
            continue  # games are never deleted from the panel
        response = gm_client.get(fill(pattern, victim_game))
        assert response.status_code in (200, 302, 405), (pattern.name, response.status_code)
        if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
            html = response.content.decode()
            assert '<html lang="ru"' in html
            assert not [w for w in NOT_RUSSIAN if w in html], pattern.name


def test_anonymous_requests_are_sent_to_the_login_page(victim_game: Game) -> None:
    client = Client()
    before = snapshot(victim_game)
    for pattern in game_patterns():
        url = fill(pattern, victim_game)
        for method in ("get", "post"):
            response = getattr(client, method)(url, ALL_PAYLOAD)
            assert response.status_code == 302, (method, url)
            assert response["Location"].startswith("/admin/login/"), url
    assert snapshot(victim_game) == before


def test_a_logged_in_player_without_staff_is_sent_to_login(
    victim_game: Game, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("игрок", password="x")
    client = Client()
    client.force_login(user)
    response = client.post(reverse("admin:panel_close", kwargs={"game_id": victim_game.pk}))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_state_changes_need_post_and_csrf(victim_game: Game, gm: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(gm)
    before = snapshot(victim_game)
    extend = reverse("admin:panel_extend", kwargs={"game_id": victim_game.pk})
    assert client.get(extend).status_code == 405
    close = reverse("admin:panel_close", kwargs={"game_id": victim_game.pk})
    # A GET of a confirmed action is its confirmation page, and changes nothing.
    assert client.get(close).status_code == 200
    assert client.post(close, {"confirm": "yes"}).status_code == 403  # no CSRF token
    assert snapshot(victim_game) == before


def test_lists_show_only_the_gms_games(
    gm: Any, other_gm: Any, gm_client: Client, django_user_model: Any
) -> None:
    mine = make_game(gm, start=False, name="Моя игра")
    theirs = make_game(other_gm, start=False, name="Чужая игра", vk_base=60_000)
    page = gm_client.get(reverse("admin:gameplay_game_changelist")).content.decode()
    assert mine.name in page and theirs.name not in page
    boss = django_user_model.objects.create_superuser("админ", password="x")
    client = Client()
    client.force_login(boss)
    page = client.get(reverse("admin:gameplay_game_changelist")).content.decode()
    assert mine.name in page and theirs.name in page
    assert client.get(reverse("admin:panel_game", kwargs={"game_id": theirs.pk})).status_code == 200


def test_the_admin_change_page_leads_to_the_panel(victim_game: Game, gm_client: Client) -> None:
    response = gm_client.get(reverse("admin:gameplay_game_change", args=[victim_game.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:panel_game", kwargs={"game_id": victim_game.pk})


def test_panel_root_leads_to_my_games(gm_client: Client) -> None:
    response = gm_client.get("/panel/")
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:index")


# --- across communities ------------------------------------------------------------------------


def every_url_pattern() -> list[tuple[str, URLPattern]]:
    """Every named URL of the admin and the panel, from the URLconf itself (a new view cannot
    be left out of the walk): (its namespaced name, the pattern)."""
    from django.urls import URLResolver, get_resolver

    out: list[tuple[str, URLPattern]] = []

    def walk(patterns: list, namespace: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                ns = (
                    f"{namespace}:{p.namespace}"
                    if namespace and p.namespace
                    else (p.namespace or namespace)
                )
                walk(p.url_patterns, ns)
            elif p.name and namespace in ("admin", "panel"):
                out.append((f"{namespace}:{p.name}", p))

    walk(get_resolver().url_patterns, "")
    return out


#: Parameters that name something of a community: under another community's GM, a 404.
COMMUNITY_PARAMS = {"game_id", "vk_id"}


def test_the_url_walk_reaches_the_panel_and_the_communities() -> None:
    names = {name for name, _ in every_url_pattern()}
    assert {
        "panel:communities",
        "panel:community",
        "panel:community_connect",
        "panel:community_disconnect",
        "panel:community_gm_add",
        "panel:community_gm_remove",
        "panel:community_history",
        "panel:community_reconnect",
        "admin:panel_export",
        "admin:panel_export_download",
        "admin:panel_history",
    } <= names
    assert len(names) > 60


def params_of(pattern: URLPattern) -> list[str]:
    return list(pattern.pattern.regex.groupindex)


def community_snapshot() -> tuple:
    from django.contrib.auth.models import User

    from gameplay.models import Community, CommunityMember

    return (
        tuple(
            Community.objects.order_by("pk").values_list(
                "vk_id",
                "name",
                "connected",
                "history_public",
                "group_token",
                "user_token",
                "callback_secret",
                "setup",
                "disconnected_at",
            )
        ),
        tuple(CommunityMember.objects.order_by("pk").values_list("community", "user", "role")),
        tuple(
            User.objects.order_by("pk").values_list(
                "username", "password", "is_staff", "is_superuser", "is_active"
            )
        ),
        tuple(Game.objects.order_by("pk").values_list("pk", "name", "status", "vk_group_id")),
    )


def test_every_url_under_another_communitys_gm_is_a_404_and_changes_nothing(
    victim_game: Game, gm: Any, other_gm: Any, other_client: Client, fake_vk: Any
) -> None:
    from django.contrib.auth.models import User
    from django.contrib.contenttypes.models import ContentType

    from tests.panel.support import community_of

    home = community_of(4242, owner=gm, name="Сообщество жертвы")
    Game.objects.filter(pk=victim_game.pk).update(vk_group_id=home.vk_id)
    co_gm = User.objects.create_user("второй", password="x", is_staff=True)
    home.members.create(user=co_gm, role="gm")
    victim_game.gms.add(co_gm)
    theirs = community_of(5151, owner=other_gm, name="Чужое сообщество")
    make_game(other_gm, players=7, vk_base=50_000, name="Их игра", vk_group_id=theirs.vk_id)
    # The other community's GM runs games, has a community and may see their own pages.
    seat = Seat.objects.filter(game=victim_game, number__isnull=False).first()
    strike = Strike.objects.filter(seat__game=victim_game).first()
    flag = ModerationFlag.objects.filter(game=victim_game).first()
    outbox = Outbox.objects.filter(game=victim_game).first()
    assert seat is not None and strike is not None and flag is not None and outbox is not None
    values = {
        "game_id": victim_game.pk,
        "object_id": victim_game.pk,
        "vk_id": home.vk_id,
        "user_id": co_gm.pk,
        "seat_id": seat.pk,
        "number": seat.number,
        "strike_id": strike.pk,
        "flag_id": flag.pk,
        "outbox_id": outbox.pk,
        "vk_user_id": seat.vk_user_id,
        "app_label": "gameplay",
        "content_type_id": ContentType.objects.get_for_model(Game).pk,
    }
    before = (snapshot(victim_game), community_snapshot())
    walked = 0
    for name, pattern in every_url_pattern():
        if name == "admin:logout":
            continue  # signs the walker out: every later request would go to the login page
        params = params_of(pattern)
        if any(p not in values for p in params):
            continue  # the admin's catch-all and the like: no object of the community
        url = reverse(name, kwargs={p: values[p] for p in params})
        for method in ("get", "post"):
            response = getattr(other_client, method)(url, ALL_PAYLOAD)
            if COMMUNITY_PARAMS & set(params) or (
                "object_id" in params and name.startswith("admin:gameplay_game")
            ):
                assert response.status_code == 404, (method, url, response.status_code)
            else:
                assert response.status_code in (200, 302, 403, 404, 405), (method, url)
                body = response.content.decode(errors="replace")
                assert victim_game.name not in body and home.name not in body, (method, url)
            walked += 1
    assert walked > 100
    assert (snapshot(victim_game), community_snapshot()) == before
    assert not fake_vk.calls
