"""gameplay.selectors.spectators: the spectator chat's page (RULES.md G6) — who may join
(while the game runs: the dead who are not mafia; once it is over: everyone), and the chat's
creation request."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor, Outbox
from gameplay.selectors.spectators import spectator_page
from gameplay.services.spectators import spectator_chat_create, spectator_chat_link
from tests.gameplay.deadline_support import started_game

pytestmark = pytest.mark.django_db


def test_the_dead_who_are_not_mafia_may_watch_and_everyone_once_the_game_is_over() -> None:
    game = started_game()
    for number in (1, 6, 8):  # a mafia member and two civilians
        services.seat_modkill(game_id=game.pk, seat=number, by=Actor.gm("test"), reason="тест")

    page = spectator_page(game)

    assert [s.number for s in page.eligible] == [6, 8]
    assert (page.members, page.joined, page.removed, page.creation) == ([], 0, 0, None)
    services.game_end(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    assert [s.number for s in spectator_page(game).eligible] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_the_chat_title_shows_once_the_created_chat_is_linked() -> None:
    game = started_game()
    row = spectator_chat_create(game_id=game.pk, by=Actor.gm("test"))

    pending = spectator_page(game)
    assert pending.creation == row and pending.chat_title == ""

    Outbox.objects.filter(pk=row.pk).update(result={"peer_id": 2_000_000_003})
    spectator_chat_link(game_id=game.pk, by=Actor.gm("test"), chat=3)
    game.refresh_from_db()
    assert row.text and spectator_page(game).chat_title == row.text
