"""gameplay.services.votes: one command for a vote, by a seat number or by a VK user (the bot,
its buttons naming their phase), a count in the topic every ``COUNT_EVERY`` votes from VK, and
«подсчёт» in the topic or by private message."""

from __future__ import annotations

import pytest
from django.db import transaction

from gameplay.models import Game, Phase, PhaseKind, Source, Vote
from gameplay.refusals import CountNotDay, StaleButton
from gameplay.rules import Role
from gameplay.rules.errors import NotInGame
from gameplay.services.votes import COUNT_EVERY, vote_count_post, vote_count_text, vote_submit
from outbox import txcache
from tests.gameplay.factories import (
    advance_to_day,
    board,
    current_phase,
    last_outbox_id,
    make_game,
    seat,
    seat_no,
    seats,
    snapshot,
    to_night,
    vk_id,
    vote,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def game() -> Game:
    """Twelve players, Day 1 open."""
    return make_game(n=12, start=True)


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
    assert count.text.startswith(f"Подсчёт голосов, день 1: проголосовали {COUNT_EVERY} из 12.")
    assert "Ещё не голосовали: №11, №12." in count.text
    vote_submit(game_id=game.pk, vk_user_id=vk_id(1), target=11)  # a change: the 11th vote
    assert len(board(game, "vote_count", after=mark)) == 1


def test_votes_by_seat_number_are_not_counted_in_the_topic(game: Game) -> None:
    mark = last_outbox_id()
    for n in range(1, COUNT_EVERY + 1):
        vote(game, n, 12)
    assert board(game, "vote_count", after=mark) == []


def test_the_count_is_posted_on_request_and_the_same_text_goes_by_message(game: Game) -> None:
    vote(game, 1, 2)
    vote(game, 3, 2)
    vote(game, 2, 1)
    mark = last_outbox_id()
    post = vote_count_post(game_id=game.pk)
    assert post is not None and post.topic_id == game.topic_id
    assert board(game, "vote_count", after=mark) == [post]
    assert post.text == vote_count_text(game_id=game.pk)
    lines = post.text.splitlines()
    assert lines[0] == "Подсчёт голосов, день 1: проголосовали 3 из 12."
    assert lines[1].startswith("№2 ") and lines[1].endswith("— 2 голоса")
    assert lines[2].startswith("№1 ") and lines[2].endswith("— 1 голос")


def test_the_count_is_refused_at_night(game: Game) -> None:
    to_night(game)
    with pytest.raises(CountNotDay):
        vote_count_post(game_id=game.pk)
    with pytest.raises(CountNotDay):
        vote_count_text(game_id=game.pk)


def test_a_vote_that_closes_the_day_drops_the_kept_game(game: Game) -> None:
    advance_to_day(game, 3)
    target = seat(game, Role.MAFIA)
    voters = [s for s in seats(game, alive=True) if s.pk != target.pk]
    with transaction.atomic(), txcache.kept():
        for v in voters[:6]:
            outcome = vote_submit(
                game_id=game.pk, vk_user_id=v.vk_user_id, target=target.number, early=True
            )
            assert outcome.day_result is None and txcache.get(game.pk) is not None
        outcome = vote_submit(
            game_id=game.pk, vk_user_id=voters[6].vk_user_id, target=target.number, early=True
        )
        assert outcome.day_result is not None and outcome.day_result.executed == target.number
        assert txcache.get(game.pk) is None
    assert current_phase(game).kind == PhaseKind.NIGHT
    assert Vote.objects.filter(phase__game=game, phase__number=3, early=True).count() == 7
