"""Services of the setup (RULES.md §1): creating a game and the start (the deal: test_deal.py;
sign-up: test_signup.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gameplay import services
from gameplay.models import GameStatus, PhaseKind, PhaseStatus
from gameplay.rules import (
    Item,
    Role,
    RuleViolation,
    round_commitment,
)
from gameplay.rules.errors import InvalidCommand
from tests.gameplay.factories import (
    board,
    event_count,
    events,
    label,
    make_game,
    outbox,
    pms_to,
    seats,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)


def test_a_topic_holds_one_active_game_at_a_time():
    game = make_game(n=0, topic_id=4321)
    with pytest.raises(RuleViolation, match="уже идёт другая игра"):
        services.game_create(name="Вторая", topic_id=4321, vk_group_id=game.vk_group_id)
    services.game_end(game_id=game.pk, by="gm:test")  # cancelled: the topic is free again
    again = services.game_create(name="Вторая", topic_id=4321, vk_group_id=game.vk_group_id)
    assert again.topic_id == 4321


# --- the start ---------------------------------------------------------------------------------


def test_start_runs_the_game_and_opens_day_one_with_its_deadline():
    game = make_game(n=9, deal=True, day_length=timedelta(hours=20))
    before = event_count(game)

    services.game_start(game_id=game.pk, by="gm:test", now=NOW)

    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING and game.started_at == NOW
    [day] = game.phases.all()
    assert (day.kind, day.number, day.status) == (PhaseKind.DAY, 1, PhaseStatus.OPEN)
    assert day.opened_at == NOW and day.deadline == NOW + timedelta(hours=20)
    kinds = [e.kind for e in events(game)[before:]]
    assert kinds == ["game_started", "phase_opened"]
    with pytest.raises(InvalidCommand):
        services.game_start(game_id=game.pk)


def test_start_posts_the_roster_and_the_commitment_in_the_game_topic():
    game = make_game(n=9, deal=True)
    services.game_start(game_id=game.pk)

    [roster] = board(game, "roster")
    assert roster.topic_id == game.topic_id
    for s in seats(game):
        assert label(s) in roster.text
    assert game.commitment in roster.text
    for s in seats(game):
        assert Role(s.role).title not in roster.text
    assert [o.kind for o in board(game)] == ["deal_round", "roster", "day_opened"]
    [round1] = board(game, "deal_round")
    assert f"Раунд 1: хеш зерна (SHA-256) {round_commitment(1, 'test-seed')}" in round1.text
    assert f"Раунд 1: хеш зерна (SHA-256) {round_commitment(1, 'test-seed')}" in roster.text
    # how the seats are numbered, in words players use (no «VK id»)
    assert "Номера мест даны по порядку номеров страниц VK: у кого номер страницы меньше, " in (
        roster.text
    )
    assert "VK id" not in roster.text and "по возрастанию" not in roster.text


def test_start_without_a_topic_posts_nothing_to_the_board_but_sends_the_cards():
    game = make_game(n=9, deal=True, topic_id=None)
    services.game_start(game_id=game.pk)

    assert board(game) == []
    assert len(outbox(game, "role_card")) == 9


def test_every_player_gets_exactly_one_role_card_that_tells_only_what_the_role_may_know():
    game = make_game(n=26, deal=True, seed="gamma")
    services.game_start(game_id=game.pk)

    everyone = seats(game)
    mafia = [s for s in everyone if s.role == Role.MAFIA]
    assert len(mafia) == 6
    for s in everyone:
        [card] = pms_to(game, s.vk_user_id, "role_card")
        assert card.peer_ids == [s.vk_user_id]
        assert f"Ваш номер: {s.number}." in card.text
        assert f"Ваша роль — {Role(s.role).title}" in card.text
        assert game.commitment in card.text
        if s.item:
            assert Item(s.item).title in card.text
        others = [o for o in everyone if o.pk != s.pk]
        if s.role == Role.MAFIA:
            for m in mafia:
                assert label(m) in card.text
            named = [o for o in others if o.role != Role.MAFIA and label(o) in card.text]
        else:
            named = [o for o in others if label(o) in card.text or o.name in card.text]
        assert named == [], f"card of {label(s)} names {named}"
    assert len(outbox(game, "role_card")) == 26
