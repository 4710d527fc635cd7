"""After login a GM lands on «Мои игры»: each of their games with its phase, the time left to
its deadline and what needs them now."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services
from gameplay.models import FlagKind, ModerationFlag, Outbox, OutboxStatus, Seat
from tests.panel.conftest import PASSWORD
from tests.panel.support import make_game, night_round, vote_round

pytestmark = pytest.mark.django_db


def test_login_lands_on_my_games(gm: Any) -> None:
    client = Client()
    response = client.post(
        reverse("admin:login"),
        {"username": gm.username, "password": PASSWORD, "next": reverse("admin:index")},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("admin:index")
    html = response.content.decode()
    assert "<h1>Мои игры</h1>" in html and "Активных игр нет" in html


def test_my_games_shows_phase_countdown_and_what_needs_the_gm(
    gm: Any, other_gm: Any, gm_client: Client, django_assert_max_num_queries: Any
) -> None:
    day = make_game(gm, players=7, name="Дневная", vk_base=910_000)
    review = make_game(gm, players=7, name="Ночная", vk_base=920_000)
    vote_round(review)
    services.day_close(game_id=review.pk)
    night_round(review)
    services.night_close(game_id=review.pk)
    make_game(gm, players=5, name="Набор", deal=False, start=False, vk_base=930_000)
    make_game(other_gm, players=7, name="Чужая", vk_base=940_000)
    ModerationFlag.objects.create(
        game=day, seat=Seat.objects.filter(game=day).first(), kind=FlagKind.PROFANITY, text="…"
    )
    Outbox.objects.filter(game=day, kind="roster").update(status=OutboxStatus.FAILED)

    with django_assert_max_num_queries(12):
        response = gm_client.get(reverse("admin:index"))
    html = response.content.decode()
    active = response.context["active"]
    assert [r.game.name for r in active][:2] == ["Ночная", "Дневная"]  # needing the GM first
    assert "Чужая" not in html
    assert "День 1" in html and 'class="gm-countdown"' in html and "через" in html
    assert " МСК" in html
    assert "Черновик ночи 1 ждёт вашей проверки" in html
    assert "Отметки бота ждут решения: 1" in html
    assert "Не доставлены сообщения: 1" in html
    assert "Набор игроков: записано 5 из 5" in html
    assert "можно раздавать роли" in html
    assert "Администрирование" not in html  # the admin's sections are a superuser's


def test_a_superuser_also_sees_the_admin_sections(django_user_model: Any) -> None:
    boss = django_user_model.objects.create_superuser("админ", password="x")
    client = Client()
    client.force_login(boss)
    html = client.get(reverse("admin:index")).content.decode()
    assert "Мои игры" in html and "Администрирование" in html and "Пользователи" in html


def test_the_headers_open_site_link_leads_to_a_page_that_exists(gm_client: Client) -> None:
    html = gm_client.get(reverse("admin:index")).content.decode()
    link = re.search(r'<a href="([^"]+)">Открыть сайт</a>', html)
    assert link, "the admin header has its «Открыть сайт» link"
    assert Client().get(link.group(1)).status_code == 200  # the players' page, no login
