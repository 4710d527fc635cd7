"""gameplay.services.votes: one command for a vote, by a seat number or by a VK user (the bot,
its buttons naming their phase); the vote count in the topic every ``COUNT_EVERY`` votes from
VK, at the GM's click, and on a player's «голоса» at most once every
``VOTE_COUNT_EVERY_MINUTES`` per topic (sooner is refused, saying when)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from gameplay.models import Actor, Game, Phase, PhaseKind, Source, Vote
from gameplay.refusals import CountNotDay, CountTooSoon, StaleButton
from gameplay.rules import Role
from gameplay.rules.errors import InvalidCommand, NotInGame
from gameplay.services.story import theme_text_set
from gameplay.services.votes import (
    COUNT_EVERY,
    vote_count_post,
    vote_count_request,
    vote_submit,
)
from gameplay.unit_of_work import txcache
from tests.gameplay.factories import (
    advance_to_day,
    board,
    current_phase,
    label,
    last_outbox_id,
    make_game,
    number_of,
    seat,
    seat_no,
    seats,
    snapshot,
    to_night,
    vk_id,
    vote,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _day_one() -> int:
    return make_game(n=12, start=True).pk


_day_one_rows = module_rows(_day_one)


@pytest.fixture
def game(_day_one_rows: int) -> Game:
    """Twelve players, Day 1 open (built once per module)."""
    return Game.objects.get(pk=_day_one_rows)


def test_a_vote_needs_a_voter() -> None:
    with pytest.raises(TypeError):
        vote_submit(game_id=1, target=2)


def test_a_vk_user_votes_as_their_seat(game: Game) -> None:
    day = current_phase(game)
    outcome = vote_submit(game_id=game.pk, vk_user_id=vk_id(3), target=5, phase_id=day.pk)
    v = outcome.vote
    assert (v.voter_id, v.target_id, v.phase_id) == (
        seat_no(game, 3).pk,
        seat_no(game, 5).pk,
        day.pk,
    )
    assert v.source == Source.PM and v.current
    with pytest.raises(NotInGame):
        vote_submit(game_id=game.pk, vk_user_id=424242, target=5)


def test_a_button_of_a_past_day_is_refused_and_changes_nothing(game: Game) -> None:
    to_night(game)
    advance_to_day(game, 2)
    day_one = Phase.objects.get(game=game, kind=PhaseKind.DAY, number=1)
    before = snapshot(game)
    with pytest.raises(StaleButton):
        vote_submit(game_id=game.pk, vk_user_id=vk_id(3), target=5, phase_id=day_one.pk)
    assert snapshot(game) == before


def test_every_tenth_vote_from_vk_is_followed_by_the_count(game: Game) -> None:
    mark = last_outbox_id()
    for n in range(1, COUNT_EVERY):
        vote_submit(game_id=game.pk, vk_user_id=vk_id(n), target=12)
    assert board(game, "vote_count", after=mark) == []
    vote_submit(game_id=game.pk, vk_user_id=vk_id(COUNT_EVERY), target=11)
    [count] = board(game, "vote_count", after=mark)
    assert count.text.startswith("Часы в лаборатории отсчитывают время. Подсчёт голосов, день 1")
    assert f"Проголосовали {COUNT_EVERY} из 12." in count.text
    assert f"Не проголосовали: {label(seat_no(game, 11))} и {label(seat_no(game, 12))}." in (
        count.text
    )
    vote_submit(game_id=game.pk, vk_user_id=vk_id(1), target=11)  # a change: the 11th vote
    assert len(board(game, "vote_count", after=mark)) == 1


def test_votes_by_seat_number_are_not_counted_in_the_topic(game: Game) -> None:
    mark = last_outbox_id()
    for n in range(1, COUNT_EVERY + 1):
        vote(game, n, 12)
    assert board(game, "vote_count", after=mark) == []


def test_the_gm_posts_the_count_whenever_they_click(game: Game) -> None:
    vote(game, 1, 2)
    vote(game, 3, 2)
    vote(game, 2, 1)
    mark = last_outbox_id()
    post = vote_count_post(game_id=game.pk)
    again = vote_count_post(game_id=game.pk)
    assert post is not None and post.topic_id == game.topic_id
    assert board(game, "vote_count", after=mark) == [post, again]
    lines = post.text.splitlines()
    assert lines[1].startswith("Проголосовали 3 из 12. Голосование до ")
    assert f"{label(seat_no(game, 2))} — 2 голоса" in lines
    assert f"{label(seat_no(game, 1))} — 1 голос" in lines


@override_settings(VOTE_COUNT_EVERY_MINUTES=10)
def test_a_players_request_waits_for_the_last_count_in_its_topic(game: Game) -> None:
    vote(game, 1, 2)
    now = timezone.now()
    first = vote_count_request(game_id=game.pk, now=now)
    assert first is not None and first.topic_id == game.topic_id
    with pytest.raises(CountTooSoon) as refused:
        vote_count_request(game_id=game.pk, now=now + timedelta(minutes=9))
    at = timezone.localtime(first.created_at)
    nxt = at + timedelta(minutes=10)
    assert refused.value.reason.startswith(
        f"Подсчёт голосов уже публиковался в {at:%d.%m %H:%M} МСК. "
        f"Следующий можно попросить с {nxt:%d.%m %H:%M} МСК"
    )
    # another topic of the game's has a wait of its own
    other = vote_count_request(game_id=game.pk, topic_id=555, now=now)
    assert other is not None and other.topic_id == 555 and other.kind == "vote_count"
    assert vote_count_request(game_id=game.pk, now=now + timedelta(minutes=11)) is not None


@override_settings(VOTE_COUNT_EVERY_MINUTES=10)
def test_a_count_the_gm_posted_holds_the_players_requests_back(game: Game) -> None:
    vote_count_post(game_id=game.pk)
    with pytest.raises(CountTooSoon):
        vote_count_request(game_id=game.pk)
    with override_settings(VOTE_COUNT_EVERY_MINUTES=0):
        assert vote_count_request(game_id=game.pk) is not None


def test_the_count_is_refused_at_night(game: Game) -> None:
    to_night(game)
    with pytest.raises(CountNotDay):
        vote_count_post(game_id=game.pk)
    with pytest.raises(CountNotDay):
        vote_count_request(game_id=game.pk)


def test_a_vote_that_closes_the_day_drops_the_kept_game(game: Game) -> None:
    advance_to_day(game, 3)
    target = seat(game, Role.MAFIA)
    voters = [s for s in seats(game, alive=True) if s.pk != target.pk]
    with transaction.atomic(), txcache.kept():
        for v in voters[:6]:
            outcome = vote_submit(
                game_id=game.pk, vk_user_id=v.vk_user_id, target=number_of(target), early=True
            )
            assert outcome.day_result is None and txcache.get(game.pk) is not None
        outcome = vote_submit(
            game_id=game.pk, vk_user_id=voters[6].vk_user_id, target=number_of(target), early=True
        )
        assert outcome.day_result is not None and outcome.day_result.executed == target.number
        assert txcache.get(game.pk) is None
    assert current_phase(game).kind == PhaseKind.NIGHT
    assert Vote.objects.filter(phase__game=game, phase__number=3, early=True).count() == 7


def test_the_gm_words_the_count_in_the_gm_language(game: Game) -> None:
    """The count is a theme text the GM may rewrite (variables, if, for, filters), checked at
    save against the count of the game's table at its longest; what the language has not is
    refused."""
    own = (
        "Голоса, день {{ day }}:\n"
        "{% for c in candidates %}{{ c.person }} ({{ c.total }}): "
        "{% for v in c.voters %}{{ v.person.name }}{{ forloop|sep }}{% endfor %}\n{% endfor %}"
        "{% if missing %}Молчат: {{ missing|length }}.{% endif %}"
    )
    theme_text_set(game_id=game.pk, by=Actor.gm("test"), slot="vote_count", text=own)
    vote(game, 1, 2)
    vote(game, 3, 2)
    post = vote_count_post(game_id=game.pk)
    assert post is not None
    assert post.text.splitlines() == [
        "Голоса, день 1:",
        f"{label(seat_no(game, 2))} (2): {seat_no(game, 1).name} и {seat_no(game, 3).name}",
        "Молчат: 10.",
    ]
    with pytest.raises(InvalidCommand, match="Строка 1"):
        theme_text_set(
            game_id=game.pk, by=Actor.gm("test"), slot="vote_count", text='{% include "x.txt" %}'
        )
