"""gameplay.unit_of_work.seqs: the event log's next seq is read once per transaction and
counted on from there, and what a rolled-back savepoint took back is read again (the seqs
stay 1, 2, 3 … with no gap and no repeat)."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from gameplay.models import EventKind, Game, GameEvent
from gameplay.services.common import lock_game, log_event
from gameplay.unit_of_work import next_event_seq
from tests.gameplay.factories import make_game

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


def seqs(game: Game) -> list[int]:
    return list(GameEvent.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))


def max_reads(captured: CaptureQueriesContext) -> int:
    return sum("MAX(" in q["sql"] for q in captured.captured_queries)


def test_a_transaction_reads_the_last_seq_once() -> None:
    game = make_game(n=7)
    before = next_event_seq(game)
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        game = lock_game(game_id=game.pk)
        for _ in range(3):
            log_event(game, EventKind.GAME_CREATED)
        with transaction.atomic():  # a savepoint released: its seqs count
            log_event(game, EventKind.GAME_CREATED)
        log_event(game, EventKind.GAME_CREATED)
    # (none when the test's transaction, which made the game, counted its seqs already)
    assert max_reads(captured) <= 1
    assert seqs(game) == list(range(1, before + 5))


def test_a_rolled_back_savepoint_takes_its_seqs_back() -> None:
    game = make_game(n=7)
    with transaction.atomic():
        game = lock_game(game_id=game.pk)
        log_event(game, EventKind.GAME_CREATED)
        with pytest.raises(Boom), transaction.atomic():
            log_event(game, EventKind.GAME_CREATED)
            log_event(game, EventKind.GAME_CREATED)
            raise Boom
        with CaptureQueriesContext(connection) as captured:
            log_event(game, EventKind.GAME_CREATED)
        assert max_reads(captured) == 1  # read again
    assert seqs(game) == list(range(1, len(seqs(game)) + 1))
