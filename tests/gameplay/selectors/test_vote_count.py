"""gameplay.selectors.vote_count: an open day's count as forum GMs post one: each candidate with
who voted for them (and by which board comment), the votes that moved away, who has not voted,
the penalty votes, and what closing the day now would do."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from gameplay import services
from gameplay.models import Actor, Game, Outbox, OutboxChannel, Seat, Source
from gameplay.selectors.vote_count import (
    COUNT_KIND,
    STRIKE,
    board_link,
    count_context,
    last_count_at,
    struck,
    vote_tally,
)
from tests.gameplay.factories import current_phase, make_game, number_of, topic_of, vote

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def game() -> Game:
    """Nine players, Day 1 open: 1 and 2 vote for 5, 3 for 6 and then for 5, 5 for 1."""
    g = make_game(n=9, start=True)
    vote(g, 1, 5, source=Source.BOARD, vk_post_id=42)
    vote(g, 2, 5)
    vote(g, 3, 6)
    vote(g, 3, 5)
    vote(g, 5, 1)
    return g


def numbers(seats: Sequence[Seat]) -> list[int]:
    return [number_of(s) for s in seats]


def test_the_tally_names_each_candidates_voters_and_who_moved_away(game: Game) -> None:
    tally = vote_tally(current_phase(game))
    got = [(c.seat.number, numbers([v.voter for v in c.votes]), c.total) for c in tally.candidates]
    assert got == [(5, [1, 2, 3], 3), (1, [5], 1), (6, [], 0)]
    assert [v.post_id for v in tally.candidates[0].votes] == [42, None, None]
    assert numbers(tally.candidates[2].left) == [3]
    assert numbers(tally.missing) == [4, 6, 7, 8, 9]
    assert (tally.voted, tally.living) == (4, 9)
    assert numbers(tally.leaders) == [5]


def test_closing_now_would_strike_the_missing_and_the_tally_counts_penalties(game: Game) -> None:
    services.strike_give(game_id=game.pk, seat=9, by=Actor.gm("test"), reason="флуд")
    tally = vote_tally(current_phase(game))
    [nine] = [c for c in tally.candidates if c.seat.number == 9]
    assert (nine.penalty, nine.total, nine.votes) == (2, 2, [])
    assert sorted(tally.strikes) == [4, 6, 7, 8, 9]
    assert tally.strikes[9].modkill and not tally.strikes[4].modkill  # a second strike
    assert tally.close_leaders == ([5], 3)


def test_a_dead_players_votes_do_not_count(game: Game) -> None:
    services.seat_modkill(game_id=game.pk, seat=2, by=Actor.gm("test"), reason="тест")
    tally = vote_tally(current_phase(game))
    assert [(c.seat.number, c.total) for c in tally.candidates][:2] == [(5, 2), (1, 1)]
    assert (tally.voted, tally.living) == (3, 8)


def test_the_posts_context_is_the_tallys_facts(game: Game) -> None:
    tally = vote_tally(current_phase(game))
    ctx = count_context(game=game, tally=tally, now=NOW)
    assert (ctx["day"], ctx["voted"], ctx["living"], ctx["final"]) == (1, 4, 9, False)
    first = ctx["candidates"][0]
    assert (first["person"].number, first["total"]) == (5, 3)
    link = f"https://vk.com/topic-{game.vk_group_id}_{game.topic_id}?post=42"
    assert [v["link"] for v in first["voters"]] == [link, "", ""]
    assert ctx["candidates"][2]["left"][0]["struck"] == struck(
        str(ctx["candidates"][2]["left"][0]["person"])
    )
    assert [m["person"].number for m in ctx["missing"]] == [4, 6, 7, 8, 9]
    assert ctx["executed"].number == 5 and ctx["tie"] == [] and ctx["close_votes"] == 3


def test_a_board_link_needs_all_three_ids_and_striking_marks_every_character() -> None:
    assert board_link(group_id=7, topic_id=8, post_id=9) == "https://vk.com/topic-7_8?post=9"
    assert board_link(group_id=7, topic_id=None, post_id=9) == ""
    assert board_link(group_id=7, topic_id=8, post_id=None) == ""
    assert struck("№3") == f"№{STRIKE}3{STRIKE}" and struck("") == ""


def test_the_last_count_is_the_newest_posted_in_that_topic_that_day(game: Game) -> None:
    day = current_phase(game)
    assert last_count_at(game=game, topic_id=topic_of(game), since=day.opened_at) is None

    def count(topic: int, kind: str = COUNT_KIND) -> Outbox:
        return Outbox.objects.create(
            game=game, channel=OutboxChannel.BOARD, topic_id=topic, kind=kind, text="подсчёт"
        )

    count(topic_of(game) + 1)
    count(topic_of(game), kind="vote")
    assert last_count_at(game=game, topic_id=topic_of(game), since=day.opened_at) is None
    first, second = count(topic_of(game)), count(topic_of(game))
    assert (
        last_count_at(game=game, topic_id=topic_of(game), since=day.opened_at) == second.created_at
    )
    later = max(first.created_at, second.created_at).replace(year=2100)
    assert last_count_at(game=game, topic_id=topic_of(game), since=later) is None
