"""What a GM reads in the panel has no jargon: the admin's phrases in the right case, Russian
column headers, the log's «Кто» as people, chats by name, times as «14:33 МСК», no rule codes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gameplay import services
from gameplay.models import Actor, Game, GameEvent
from gameplay.services.spectators import spectator_chat_link
from tests.gameplay.factories import number_of
from tests.panel.support import community_of, living, make_game, vote_round
from tests.panel.test_access import fill, game_patterns

pytestmark = pytest.mark.django_db

#: A rule code (V6, G1, P2, §5) or a raw log actor where a GM reads.
JARGON = re.compile(r"\b[GPV]\d\b|§\s?\d|seat:\d|gm:\w|peer_id|часовой пояс|Europe/")


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r"<(input|select|textarea)\b[^>]*>", " ", html)  # form values are the GM's
    return re.sub(r"<[^>]+>", " ", html)


def test_the_games_list_speaks_correct_russian(gm: Any, gm_client: Client) -> None:
    make_game(gm, players=7, start=False)
    html = gm_client.get(reverse("admin:gameplay_game_changelist")).content.decode()
    assert "Выберите игру для изменения" in html and "Выберите игра" not in html
    assert "Created at" not in html and "created at" not in html.lower()
    assert ">Создана<" in html or "Создана" in visible_text(html)


def test_a_superusers_account_pages_speak_correct_russian(django_user_model: Any) -> None:
    boss = django_user_model.objects.create_superuser("админ", password="x")
    client = Client()
    client.force_login(boss)
    html = client.get(reverse("admin:auth_user_changelist")).content.decode()
    assert "Выберите пользователя для изменения" in html and "Добавить пользователя" in html
    assert "Удалить выбранных пользователей" in html
    html = client.get(reverse("admin:auth_user_add")).content.decode()
    assert "<h1>Добавить пользователя</h1>" in html


#: A Latin word in a column header or a section title (VK and ids are names, not English).
LATIN = re.compile(r"\b(?!VK\b|ID\b|id\b)[A-Za-z]{2,}\b")


def headers(html: str) -> list[str]:
    """The texts of the page's column headers, captions and section titles."""
    found = re.findall(r"<(th|caption|h1|h2)\b[^>]*>(.*?)</\1>", html, flags=re.S)
    return [" ".join(visible_text(body).split()) for _, body in found]


def test_a_superusers_admin_has_no_english_sections_or_column_headers(
    gm: Any, django_user_model: Any
) -> None:
    """Every section of the admin a superuser sees (its index, every registered model's list
    and add page): Russian titles and headers; django-axes' English section is not there."""
    from django.contrib import admin

    make_game(gm, players=7)
    boss = django_user_model.objects.create_superuser("админ", password="x")
    client = Client()
    client.force_login(boss)
    index = client.get(reverse("admin:index")).content.decode()
    assert "Axes" not in visible_text(index) and "/admin/axes/" not in index
    pages = [reverse("admin:index")]
    for model in admin.site._registry:
        meta = model._meta
        pages += [
            reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}")
            for view in ("changelist", "add")
        ]
    for url in pages:
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        for text in headers(response.content.decode()):
            assert not LATIN.search(text), (url, text)
    assert len(pages) >= 5


def test_the_games_models_have_russian_names() -> None:
    """What a superuser reads of a game's rows anywhere in the admin (a deletion's summary,
    a relation): every model of the game and every field of a seat named in Russian."""
    from django.apps import apps

    cyrillic = re.compile(r"[а-яё]", re.I)
    for model in apps.get_app_config("gameplay").get_models():
        for name in (model._meta.verbose_name, model._meta.verbose_name_plural):
            assert cyrillic.search(str(name)), (model.__name__, name)
    from gameplay.models import Seat

    for field in Seat._meta.concrete_fields:
        if field.name != "id":
            name = str(field.verbose_name)  # «VK id» is a name
            assert cyrillic.search(name) or not LATIN.search(name), field.name


def test_the_log_names_people_and_the_deadline_job(gm: Any, gm_client: Client) -> None:
    gm.first_name = "Анна"
    gm.save()
    game = make_game(gm, players=7)
    voter = living(game)[0]
    vote_round(game)
    services.strike_give(
        game_id=game.pk, seat=number_of(voter), by=Actor.gm("ведущий"), reason="флуд"
    )
    services.day_close(game_id=game.pk, by=Actor.DEADLINE)
    html = gm_client.get(reverse("admin:panel_log", kwargs={"game_id": game.pk})).content
    text = visible_text(html.decode())
    assert "ведущий Анна" in text
    assert f"№{voter.number} {voter.name}" in text
    assert "по сроку" in text and "бот" in text
    assert not JARGON.search(text), JARGON.search(text)
    assert GameEvent.objects.filter(game=game, actor=Actor.DEADLINE, kind="day_closed").exists()
    # «Кто» filters by what the log shows: a GM's name, a seat, «по сроку».
    log = reverse("admin:panel_log", kwargs={"game_id": game.pk})
    by_name = {f"seat:{voter.number}", f"vk:{voter.vk_user_id}"}  # the seat, the sign-up
    for query, actors in (
        ("Анна", {"gm:ведущий"}),
        (str(voter.number), {f"seat:{voter.number}"}),
        (voter.name, by_name),
        ("по сроку", {Actor.DEADLINE}),
    ):
        rows = gm_client.get(log, {"actor": query}).context["rows"]
        assert {e.actor for e, *_ in rows} == actors, query


#: A time of day the panel shows without its zone right after it («01.12 14:33» alone).
BARE_TIME = re.compile(r"\b\d?\d:\d\d(?::\d\d)?(?![:\d])(?!\s*МСК)")


def panel_pages(gm: Any) -> list[str]:
    """Every page of the panel a GM opens, for a game in sign-up and a running one (each game
    URL of the admin, the spectators' and the flags' pages with a row), «Мои игры», the games
    list and «Сообщества» with a community's pages."""
    from gameplay.models import ModerationFlag, Outbox, OutboxStatus, SpectatorMember

    signup = make_game(gm, players=5, name="Набор", deal=False, start=False, vk_base=960_000)
    game: Game = make_game(gm, players=7)
    vote_round(game, skip=1)
    services.day_close(game_id=game.pk)
    spectator_chat_link(game_id=game.pk, by=Actor.gm("ведущий"), chat=7)
    seat = living(game)[0]
    ModerationFlag.objects.create(game=game, seat=seat, kind="profanity", text="…")
    SpectatorMember.objects.create(game=game, vk_user_id=seat.vk_user_id, status="invited")
    Outbox.objects.filter(game=game, kind="roster").update(status=OutboxStatus.FAILED)
    home = community_of(555, owner=gm, name="Мафия на Неве", connected_at=timezone.now())
    pages = [reverse("admin:index"), reverse("admin:gameplay_game_changelist")]
    pages += [reverse("panel:communities")]
    pages += [
        reverse(f"panel:{name}", kwargs={"vk_id": home.vk_id})
        for name in ("community", "community_history", "community_disconnect")
    ]
    panel = [
        p
        for p in game_patterns()
        if p.name and p.name.startswith("panel_") and "download" not in p.name
    ]
    pages += [fill(p, game) for p in panel]
    pages += [
        reverse(f"admin:{p.name}", kwargs={"game_id": signup.pk})
        for p in panel
        if re.findall(r"<(?:\w+:)?(\w+)>", str(p.pattern)) == ["game_id"]
    ]
    return pages


def test_every_panel_page_is_free_of_rule_codes_raw_ids_and_bare_times(
    gm: Any, gm_client: Client
) -> None:
    seen = 0
    for url in panel_pages(gm):
        response = gm_client.get(url)
        if response.status_code != 200:
            continue
        seen += 1
        text = visible_text(response.content.decode())
        for pattern in (JARGON, BARE_TIME):
            found = pattern.search(text)
            assert not found, (url, text[max(0, found.start() - 80) : found.end() + 80])
    assert seen > 30
    game = Game.objects.get(name="Тестовая игра")
    html = gm_client.get(reverse("admin:panel_game", kwargs={"game_id": game.pk})).content
    assert re.search(r"\d\d\.\d\d \d\d:\d\d МСК", html.decode())


def test_times_are_told_by_their_offset_from_moscow() -> None:
    from datetime import UTC, datetime

    from panel.templatetags.panel_tags import local_time, zone_label

    winter = datetime(2026, 12, 1, 11, 33, tzinfo=UTC)
    assert local_time(winter, "Europe/Moscow") == "01.12 14:33 МСК"
    assert local_time(winter, "Asia/Yekaterinburg") == "01.12 16:33 МСК+2"
    assert zone_label("Europe/Kaliningrad", winter) == "МСК−1"
    assert zone_label("Asia/Kolkata", winter) == "МСК+2:30"
    assert zone_label("no/such-zone", winter) == "МСК"  # a bad value never breaks a page
    assert local_time(None, "Europe/Moscow") == "—"
