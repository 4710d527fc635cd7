"""The public pages: the players' (the repository's docs/players.md, linked from the
end-of-game post at PUBLIC_URL) and the community admin's (docs/community.md), no login."""

from __future__ import annotations

import pytest
from django.test import Client

from config.env import EnvError, get_http_url
from gameplay import services
from gameplay.messages import players_page_url
from gameplay.models import Actor
from tests.gameplay.factories import board, make_game

pytestmark = pytest.mark.django_db


def test_the_players_page_opens_without_login_and_shows_how_to_check_the_deal() -> None:
    response = Client().get("/players/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h2>Проверить честность раздачи</h2>" in html
    assert "verify --post" in html
    assert 'name="viewport"' in html  # readable on a phone
    assert Client().post("/players/").status_code == 405  # a page to read, nothing to send


def test_the_community_admins_page_opens_without_login_and_says_how_to_connect() -> None:
    response = Client().get("/community/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Как подключить сообщество</title>" in html
    assert "<h2>Подключение</h2>" in html and "<h2>Как отключить</h2>" in html
    assert "управлению сообществом" in html and "access_token" in html
    assert 'name="viewport"' in html
    assert Client().post("/community/").status_code == 405


def test_the_end_of_game_post_links_the_players_page_at_the_public_address(settings) -> None:
    settings.PUBLIC_URL = "https://mafia.example.org/"
    assert players_page_url() == "https://mafia.example.org/players/"
    game = make_game(n=9, deal=True, start=True)
    services.game_end(game_id=game.pk, by=Actor.gm("anna"), reason="проверка")
    [final] = board(game, "game_over")
    assert "в памятке игрока: https://mafia.example.org/players/" in final.text
    assert "manage.py" not in final.text


def test_without_a_public_address_the_post_names_the_page_without_a_broken_link(settings) -> None:
    settings.PUBLIC_URL = ""
    game = make_game(n=9, deal=True, start=True)
    services.game_end(game_id=game.pk, by=Actor.gm("anna"), reason="проверка")
    [final] = board(game, "game_over")
    assert "в памятке игрока, раздел «Проверить честность раздачи»" in final.text
    assert "http" not in final.text


@pytest.mark.parametrize("value", ["mafia.example.org", "ftp://x.org", "https://", "https://a b"])
def test_a_public_address_that_is_not_http_is_refused_in_one_sentence(value: str) -> None:
    with pytest.raises(EnvError, match="PUBLIC_URL must be an http:// or https:// address"):
        get_http_url("PUBLIC_URL", environ={"PUBLIC_URL": value})
    assert get_http_url("PUBLIC_URL", environ={}) == ""
    assert get_http_url("PUBLIC_URL", environ={"PUBLIC_URL": "http://127.0.0.1:8000"})
