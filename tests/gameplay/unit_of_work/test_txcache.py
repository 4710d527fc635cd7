"""gameplay.unit_of_work.txcache: the hot path's kept games and deferred rows never outlive
what they describe (a new transaction, a rolled-back savepoint, a service that locks the game
afresh), and the kept rows save the hot path its reads."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from gameplay import services
from gameplay.models import Actor, Game, GameEvent, Outbox, OutboxChannel, Vote
from gameplay.rules import RuleViolation
from gameplay.services.common import lock_game_hot, players
from gameplay.services.replies import reply
from gameplay.services.votes import vote_submit
from gameplay.unit_of_work import txcache
from tests.gameplay.factories import make_game as make_started_game
from tests.gameplay.factories import topic_of
from tests.vkbot.bot_support import make_game, roles_26

pytestmark = pytest.mark.django_db


def locks(captured: CaptureQueriesContext) -> int:
    """Reads of the game row (``lock_game``: FOR UPDATE, which SQLite leaves out)."""
    return sum(
        q["sql"].startswith("SELECT") and 'FROM "gameplay_game"' in q["sql"]
        for q in captured.captured_queries
    )


def seqs(game: Game) -> list[int]:
    return list(GameEvent.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))


def vote(game: Game, voter: int, target: int) -> None:
    vote_submit(game_id=game.pk, vk_user_id=1000 + voter, target=target)


class Boom(Exception):
    pass


def test_the_hot_path_reads_a_kept_game_once_per_transaction() -> None:
    game = make_game(roles_26())
    with transaction.atomic(), txcache.kept():
        with CaptureQueriesContext(connection) as first:
            vote(game, 1, 20)
        with CaptureQueriesContext(connection) as second:
            vote(game, 2, 20)
        assert locks(first) == 1 and locks(second) == 0
        assert len(second.captured_queries) < len(first.captured_queries)
    with transaction.atomic(), txcache.kept(), CaptureQueriesContext(connection) as again:
        vote(game, 3, 20)
    assert locks(again) == 1  # a new transaction locks and reads again
    assert seqs(game) == list(range(1, len(seqs(game)) + 1))


def test_a_rolled_back_savepoint_takes_what_it_kept_with_it() -> None:
    game = make_game(roles_26())
    with transaction.atomic(), txcache.kept():
        # Kept in a savepoint that rolls back: the lock went with it, so did the entry.
        with pytest.raises(Boom), transaction.atomic():
            vote(game, 1, 20)
            raise Boom
        with CaptureQueriesContext(connection) as captured:
            vote(game, 2, 20)
        assert locks(captured) == 1
        # Changed (seq, count, ballots) in a savepoint that rolls back: read again.
        with pytest.raises(Boom), transaction.atomic():
            vote(game, 3, 20)
            raise Boom
        with CaptureQueriesContext(connection) as captured:
            vote(game, 3, 21)
        assert locks(captured) == 1
        for n in range(4, 12):
            vote(game, n, 21)
    assert seqs(game) == list(range(1, len(seqs(game)) + 1))
    current = dict(
        Vote.objects.filter(phase__game=game, current=True).values_list(
            "voter__number", "target__number"
        )
    )
    assert current == {2: 20, **{n: 21 for n in range(3, 12)}}
    # The count came after the 10th vote cast, not after the one rolled back.
    [count] = Outbox.objects.filter(game=game, kind="vote_count")
    assert "проголосовали 10 из 26" in count.text.lower()


def test_a_refusal_keeps_the_kept_game_and_other_services_read_afresh() -> None:
    game = make_game(roles_26())
    with transaction.atomic(), txcache.kept():
        vote(game, 1, 20)
        with pytest.raises(RuleViolation), CaptureQueriesContext(connection) as refused:
            vote(game, 2, 2)  # a vote for oneself: refused before anything is written
        assert locks(refused) == 0
        services.seat_modkill(game_id=game.pk, seat=3, by=Actor.gm("test"), reason="тест")
        with pytest.raises(RuleViolation):
            vote(game, 3, 20)  # dead now: the modkill's lock dropped the kept seats
        with pytest.raises(RuleViolation):
            vote(game, 4, 3)
        vote(game, 4, 20)
    assert seqs(game) == list(range(1, len(seqs(game)) + 1))


def test_queued_rows_keep_their_order_and_go_with_a_rolled_back_savepoint() -> None:
    game = make_game(roles_26())
    before = Outbox.objects.count()
    with transaction.atomic(), txcache.kept():
        vote(game, 1, 20)  # its echo and event are queued
        reply(vk_user_id=1001, text="после голоса", game=game)
        with pytest.raises(Boom), transaction.atomic():
            reply(vk_user_id=1002, text="откачено", game=game)
            vote(game, 2, 20)
            raise Boom
        assert Outbox.objects.count() == before  # nothing inserted yet
        vote(game, 3, 20)
    rows = list(Outbox.objects.order_by("id")[before:])
    # The players' messages, in the order queued (the board's rows aside).
    messages = [(r.kind, r.peer_ids) for r in rows if r.channel == OutboxChannel.MESSAGE]
    assert messages == [
        ("vote_echo", [1001]),
        ("reply", [1001]),
        ("vote_echo", [1003]),
    ]
    assert seqs(game) == list(range(1, len(seqs(game)) + 1))
    assert list(
        GameEvent.objects.filter(game=game, kind="vote").values_list("data__voter", flat=True)
    ) == [1, 3]


# --- the cache's own functions, called directly ------------------------------------------------


def row(text: str) -> Outbox:
    return Outbox(channel=OutboxChannel.MESSAGE, peer_ids=[1001], text=text, kind="test")


def entry_of(game: Game) -> txcache.LockedGame:
    """The game locked and read as the hot path does (kept when the cache is open)."""
    return lock_game_hot(game_id=game.pk)


def test_outside_kept_nothing_is_kept_and_rows_are_not_deferred() -> None:
    game = make_started_game(n=5, start=True)
    assert not txcache.active()
    assert txcache.defer([row("сейчас")]) is False
    entry = entry_of(game)
    assert txcache.get(game.pk) is None and txcache.stored(game.pk) is None
    assert not txcache.keeps_any()
    txcache.keep_user_seats({1001: entry.seats[:1]})
    assert txcache.user_seats(1001) is None


def test_deferred_rows_are_inserted_in_order_by_flush_or_at_the_end_of_kept() -> None:
    with transaction.atomic(), txcache.kept():
        first, second = row("первая"), row("вторая")
        assert txcache.defer([first, second]) is True
        assert first.pk is None and not Outbox.objects.filter(kind="test").exists()
        txcache.flush()
        assert first.pk is not None and second.pk > first.pk
        third = row("третья")
        txcache.defer([third])
        assert third.pk is None
    assert list(
        Outbox.objects.filter(kind="test").order_by("id").values_list("text", flat=True)
    ) == [
        "первая",
        "вторая",
        "третья",
    ]


def texts() -> list[str]:
    return list(Outbox.objects.filter(kind="test").order_by("id").values_list("text", flat=True))


def test_rows_written_in_a_savepoint_that_rolls_back_are_written_again_once() -> None:
    """A savepoint that writes the rows queued before it and then rolls back takes its own
    rows only: the earlier ones are written again, in their place, by the next flush."""
    with transaction.atomic(), txcache.kept():
        first, second = row("первая"), row("вторая")
        txcache.defer([first, second])
        with pytest.raises(Boom), transaction.atomic():
            txcache.defer([row("откачена")])
            txcache.flush()
            assert texts() == ["первая", "вторая", "откачена"]
            raise Boom
        assert texts() == []
        txcache.defer([row("после")])
        txcache.flush()
        assert texts() == ["первая", "вторая", "после"]
        assert [first.pk, second.pk] == list(
            Outbox.objects.filter(text__in=["первая", "вторая"])
            .order_by("id")
            .values_list("id", flat=True)
        )
        txcache.flush()
    assert texts() == ["первая", "вторая", "после"]


def test_rows_written_in_a_released_savepoint_stay_written_once() -> None:
    with transaction.atomic(), txcache.kept():
        txcache.defer([row("первая")])
        with transaction.atomic():
            txcache.flush()
        with pytest.raises(Boom), transaction.atomic():  # a later rollback: not theirs
            txcache.defer([row("откачена")])
            txcache.flush()
            raise Boom
        txcache.flush()
    assert texts() == ["первая"]


def test_rows_queued_in_a_released_savepoint_and_written_in_a_rolled_back_one_stand() -> None:
    with transaction.atomic(), txcache.kept():
        with transaction.atomic():
            txcache.defer([row("из сохранённой")])
        with pytest.raises(Boom), transaction.atomic():
            txcache.flush()
            raise Boom
    assert texts() == ["из сохранённой"]


def test_rows_of_a_rolled_back_savepoint_are_not_written_again() -> None:
    with transaction.atomic(), txcache.kept():
        with pytest.raises(Boom), transaction.atomic():
            txcache.defer([row("откачена")])
            with pytest.raises(Boom), transaction.atomic():
                txcache.flush()
                raise Boom
            raise Boom
        txcache.defer([row("после")])
    assert texts() == ["после"]


def test_a_kept_game_is_found_by_id_and_topic_until_forgotten() -> None:
    game = make_started_game(n=5, start=True)
    other = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = entry_of(game)
        assert txcache.keeps_any()
        assert txcache.get(game.pk) is entry and txcache.get(game) is entry
        assert txcache.get(other.pk) is None
        assert txcache.game_with_topic(topic_of(game)) is entry.game
        assert txcache.game_with_topic(topic_of(other)) is None
        assert entry.is_kept
        txcache.forget(other.pk)
        assert txcache.get(game.pk) is entry
        txcache.forget(game.pk)
        assert txcache.get(game.pk) is None and txcache.game_with_topic(topic_of(game)) is None
    assert txcache.stored(game.pk) is None


def test_kept_users_seats_go_when_any_game_is_forgotten() -> None:
    game = make_started_game(n=5, start=True)
    seats = players(game)
    with transaction.atomic(), txcache.kept():
        txcache.keep_user_seats({1001: seats[:1], 1002: []})
        assert txcache.user_seats(1001) == seats[:1] and txcache.user_seats(1002) == []
        assert txcache.user_seats(1003) is None
        txcache.forget(game.pk + 1000)  # another game, even one never kept
        assert txcache.user_seats(1001) is None


def test_an_entry_changed_in_a_rolled_back_savepoint_is_stale() -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = entry_of(game)
        with pytest.raises(Boom), transaction.atomic():
            entry.take_event_seq(lambda: 41)
            entry.mark()
            assert txcache.get(game.pk) is entry
            raise Boom
        assert txcache.get(game.pk) is None
        assert txcache.stored(game.pk) is None  # the stale entry was dropped


@pytest.mark.parametrize("change", ["seq", "ballot", "standing", "writes"])
def test_any_change_of_an_entry_in_a_rolled_back_savepoint_makes_it_stale(change: str) -> None:
    """A change ties the entry to the savepoints open (no explicit mark needed): the refused
    event's partial changes are never seen by the next one."""
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = entry_of(game)
        entry.ballots_or(dict)
        entry.standing_or(set)
        with pytest.raises(Boom), transaction.atomic():
            if change == "seq":
                entry.take_event_seq(lambda: 41)
            elif change == "ballot":
                entry.record_ballot(1, txcache.CastVote(pk=1, target=2, early=False, void=False))
            elif change == "standing":
                entry.record_standing(("role", 3))
            else:
                entry.begin_writes()
            raise Boom
        assert txcache.get(game.pk) is None
        fresh = entry_of(game)
        assert fresh is not entry and fresh.ballots == {} and fresh.standing == set()
        assert fresh.next_seq == seqs(game)[-1] + 1 and fresh.votes_cast == 0


def test_the_counts_of_an_entry_are_read_once_and_counted_on() -> None:
    """A handle made without its counts (as the services other than the hot path make one)
    reads each once, when first asked."""
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        read = entry_of(game)
        entry = txcache.store(txcache.LockedGame(read.game, read.phase, read.seats))
        version = entry.version
        assert [entry.take_event_seq(lambda: 7) for _ in range(3)] == [7, 8, 9]
        assert entry.take_event_seq(lambda: 100) == 10  # read once
        assert entry.version == version + 4
        ballots = entry.ballots_or(dict)
        assert entry.votes_cast_or(lambda: 4) == 4
        cast = txcache.CastVote(pk=1, target=2, early=False, void=False)
        entry.record_ballot(1, cast)
        assert ballots == {1: cast} and entry.ballots_or(lambda: {}) is ballots
        assert entry.votes_cast_or(lambda: 0) == 5
        assert entry.standing_or(set) == set()
        entry.record_standing(("role", 3))
        assert entry.standing_or(lambda: {("x", 0)}) == {("role", 3)}
        made = entry.table_or(len)
        assert made == 5 and entry.table_or(lambda seats: -1) == 5
