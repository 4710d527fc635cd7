"""Sign-up, reserve and withdrawal (RULES.md §1): gameplay.services.signup."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from gameplay import services
from gameplay.models import Draw, GameStatus, OutboxChannel, SeatStatus
from gameplay.rules import (
    RuleViolation,
)
from gameplay.rules.errors import InvalidCommand, NotEnoughPlayers
from tests.gameplay.factories import (
    event_count,
    events,
    make_game,
    pms_to,
    seats,
    snapshot,
    vk_id,
)

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
NOW = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)


def test_signup_seats_the_player_logs_it_and_confirms_by_pm():
    game = make_game(n=0)
    before = event_count(game)

    seat = services.signup_create(game_id=game.pk, vk_user_id=555, name="  Алёна  ")

    assert (seat.status, seat.name, seat.number, seat.role) == (
        SeatStatus.PLAYER,
        "Алёна",
        None,
        "",
    )
    [event] = events(game)[before:]
    assert (event.kind, event.actor, event.data["vk_user_id"]) == ("signup", "vk:555", 555)
    [pm] = pms_to(game, 555, "signup")
    assert pm.channel == OutboxChannel.MESSAGE and pm.peer_ids == [555]
    assert "записаны" in pm.text


def test_second_signup_of_the_same_vk_user_is_refused_in_russian_and_changes_nothing():
    game = make_game(n=3)
    before = snapshot(game)

    with pytest.raises(RuleViolation) as refused:
        services.signup_create(game_id=game.pk, vk_user_id=vk_id(2), name="Борис снова")
    with pytest.raises(RuleViolation) as as_reserve:
        services.signup_create(game_id=game.pk, vk_user_id=vk_id(2), name="Борис", reserve=True)

    assert isinstance(refused.value, InvalidCommand)
    assert CYRILLIC.search(refused.value.reason) and "уже записаны" in refused.value.reason
    assert "уже записаны в игре" in as_reserve.value.reason
    assert snapshot(game) == before


def test_reserve_signup_is_open_after_recruitment_closes_and_is_not_dealt_in():
    game = make_game(n=9, deal=True)
    before = snapshot(game)

    with pytest.raises(InvalidCommand, match="запас"):
        services.signup_create(game_id=game.pk, vk_user_id=777, name="Зоя")
    assert snapshot(game) == before

    reserve = services.signup_create(game_id=game.pk, vk_user_id=777, name="Зоя", reserve=True)

    assert reserve.status == SeatStatus.RESERVE and reserve.number is None and reserve.role == ""
    assert events(game)[-1].data["reserve"] is True
    assert "запасе" in pms_to(game, 777, "signup")[0].text
    services.game_start(game_id=game.pk)
    reserve.refresh_from_db()
    assert reserve.status == SeatStatus.RESERVE and reserve.number is None
    assert not pms_to(game, 777, "role_card")


def test_withdrawal_before_the_deal_frees_the_place_and_allows_signing_up_again():
    game = make_game(n=3)
    before = event_count(game)

    seat = services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(2))

    assert seat.status == SeatStatus.WITHDRAWN
    assert [e.kind for e in events(game)[before:]] == ["withdraw"]
    assert pms_to(game, vk_id(2), "withdraw")
    again = services.signup_create(game_id=game.pk, vk_user_id=vk_id(2), name="Борис")
    assert again.status == SeatStatus.PLAYER and again.pk != seat.pk


def test_withdrawal_from_a_dealt_game_discards_the_deal_and_reopens_recruitment():
    game = make_game(n=9, deal=True)
    assert Draw.objects.filter(game=game).exists()
    draws = Draw.objects.filter(game=game).count()
    before = event_count(game)

    services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(4))

    game.refresh_from_db()
    assert game.status == GameStatus.RECRUITING
    assert game.seed == "test-seed" and game.commitment == ""  # the round's seed stays
    left = seats(game)
    assert left == []  # nobody holds a seat number any more
    assert Draw.objects.filter(game=game).count() == draws  # every draw stays on record
    assert [e.kind for e in events(game)[before:]] == ["deal_discarded", "withdraw"]
    [discarded] = events(game, "deal_discarded")
    assert discarded.override is True and discarded.actor == f"vk:{vk_id(4)}"
    assert discarded.data["summary"] == (
        f"Раздача №1 (раунд 1) отброшена: игрок id{vk_id(4)} снялся сам."
    )
    assert pms_to(game, vk_id(4), "withdraw")
    with pytest.raises(InvalidCommand):
        services.game_start(game_id=game.pk)
    with pytest.raises(NotEnoughPlayers):
        services.game_deal(game_id=game.pk)


def test_player_cannot_withdraw_after_the_start_but_a_reserve_can():
    game = make_game(n=9, start=True)
    services.signup_create(game_id=game.pk, vk_user_id=777, name="Яна", reserve=True)
    before = snapshot(game)

    with pytest.raises(InvalidCommand) as refused:
        services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(1))

    assert CYRILLIC.search(refused.value.reason)
    assert snapshot(game) == before
    reserve = services.signup_withdraw(game_id=game.pk, vk_user_id=777)
    assert reserve.status == SeatStatus.WITHDRAWN
    assert events(game)[-1].kind == "withdraw"
    assert pms_to(game, 777, "withdraw")


# --- the deal ----------------------------------------------------------------------------------
