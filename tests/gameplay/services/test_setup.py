"""Services of the setup (RULES.md §1): the deal and the start (sign-up: test_signup.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from gameplay import services
from gameplay.models import Draw, GameStatus, PhaseKind, PhaseStatus
from gameplay.rules import (
    Item,
    Role,
    RoleCounts,
    RuleViolation,
    deal_for_roster,
    round_commitment,
)
from gameplay.rules.errors import InvalidCommand, NotEnoughPlayers
from gameplay.services.setup import counts_of
from tests.gameplay.factories import (
    board,
    event_count,
    events,
    label,
    make_game,
    outbox,
    pms_to,
    seats,
    snapshot,
)

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
NOW = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)


def test_a_topic_holds_one_active_game_at_a_time():
    game = make_game(n=0, topic_id=4321)
    with pytest.raises(RuleViolation, match="уже идёт другая игра"):
        services.game_create(name="Вторая", topic_id=4321, vk_group_id=game.vk_group_id)
    services.game_end(game_id=game.pk, by="gm:test")  # cancelled: the topic is free again
    again = services.game_create(name="Вторая", topic_id=4321, vk_group_id=game.vk_group_id)
    assert again.topic_id == 4321


# --- sign-up -----------------------------------------------------------------------------------


def test_deal_refuses_when_players_do_not_match_the_role_total():
    game = make_game(n=8, counts=RoleCounts.default_for(9))
    before = snapshot(game)

    with pytest.raises(NotEnoughPlayers) as refused:
        services.game_deal(game_id=game.pk)

    assert isinstance(refused.value, RuleViolation)
    assert "8" in refused.value.reason and "9" in refused.value.reason
    assert CYRILLIC.search(refused.value.reason)
    assert snapshot(game) == before
    assert not Draw.objects.filter(game=game).exists()


def test_deal_numbers_seats_records_every_draw_and_commits_to_the_seed():
    # Seed "gamma-1" needs four item draws for VK ids 1001..1026 (mafia items 2, 0, 0, 1).
    game = make_game(n=26, seed="gamma-1")
    summary = services.game_deal(game_id=game.pk, by="gm:test")

    game.refresh_from_db()
    dealt = seats(game)
    assert [s.number for s in dealt] == list(range(1, 27))
    roles = [s.role for s in dealt]
    assert {r: roles.count(r) for r in set(roles)} == {
        "mafia": 6,
        "commissar": 1,
        "doctor": 1,
        "maniac": 1,
        "civilian": 17,
    }
    draws = list(Draw.objects.filter(game=game).order_by("attempt"))
    assert len(draws) == len(summary.draws) > 1
    assert [d.attempt for d in draws] == list(range(1, len(draws) + 1))
    assert [d.accepted for d in draws] == [False] * (len(draws) - 1) + [True]
    mafia_numbers = {s.number for s in dealt if s.role == Role.MAFIA}
    for d in draws:
        assert d.deal_round == 1
        assert d.mafia_items == sum(1 for n in d.holders.values() if n in mafia_numbers)
        assert (d.mafia_items == 1) is d.accepted
    held = {s.item: s.number for s in dealt if s.item}
    assert held == draws[-1].holders
    assert sorted(held) == sorted(i.value for i in Item)
    assert sum(1 for s in dealt if s.item and s.role == Role.MAFIA) == 1
    assert game.status == GameStatus.DEALT and game.seed == "gamma-1"
    assert game.commitment == summary.commitment and len(game.commitment) == 64
    roster = [s.vk_user_id for s in dealt]
    assert roster == sorted(roster)  # seats by VK id
    assert deal_for_roster("gamma-1", counts_of(game=game), roster).commitment == game.commitment
    assert deal_for_roster("gamma-2", counts_of(game=game), roster).commitment != game.commitment
    [event] = events(game, "deal")
    assert event.override is False and event.data["commitment"] == game.commitment
    assert event.data["roster"] == roster and event.data["seed_round"] == 1


def test_the_same_seed_deals_the_same_seats():
    one = make_game(n=9, deal=True, seed="same")
    two = make_game(n=9, deal=True, seed="same")
    other = make_game(n=9, deal=True, seed="different")

    def deal_of(game):
        return [(s.number, s.vk_user_id, s.role, s.item) for s in seats(game)]

    assert deal_of(one) == deal_of(two)
    assert one.commitment == two.commitment
    assert deal_of(one) != deal_of(other)


def test_a_new_round_before_the_start_is_an_override_and_keeps_earlier_draws():
    game = make_game(n=9, deal=True, seed="first")
    first_round = Draw.objects.filter(game=game).count()
    with pytest.raises(InvalidCommand, match="новом раунде"):
        services.game_deal(game_id=game.pk)  # the same roster and seed: the same deal

    rnd = services.deal_round_new(game_id=game.pk, seed="second", by="gm:anna")

    game.refresh_from_db()
    assert rnd.number == 2
    assert Draw.objects.filter(game=game, deal_round=1).count() == first_round
    assert Draw.objects.filter(game=game, deal_round=2).exists()
    assert Draw.objects.filter(game=game, accepted=True).count() == 2  # one per deal
    [opened] = events(game, "deal_round_opened")[1:]
    assert opened.override is True and opened.actor == "gm:anna"
    assert opened.data["round"] == 2 and "second" not in str(opened.data)  # no seed logged
    [deal2] = events(game, "deal")[1:]
    assert (deal2.data["deal_round"], deal2.data["seed_round"]) == (2, 2)
    roster = [s.vk_user_id for s in seats(game)]
    assert game.seed == "second"
    assert deal_for_roster("second", counts_of(game=game), roster).commitment == game.commitment
    assert [s.number for s in seats(game)] == list(range(1, 10))


def test_deal_after_the_start_is_refused():
    game = make_game(n=9, start=True)
    before = snapshot(game)
    draws = Draw.objects.filter(game=game).count()

    with pytest.raises(InvalidCommand):
        services.game_deal(game_id=game.pk)
    with pytest.raises(InvalidCommand):
        services.deal_round_new(game_id=game.pk, by="gm:test")

    assert snapshot(game) == before
    assert Draw.objects.filter(game=game).count() == draws


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
