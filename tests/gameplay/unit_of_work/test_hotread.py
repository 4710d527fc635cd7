"""gameplay.unit_of_work.hotread: the hot path's one read of a locked game gives what the
separate reads give (the seats, the phase, the day's ballots and vote count, the night's
standing slots, the log's next seq), in one statement."""

from __future__ import annotations

from typing import cast

import pytest
from django.db import connection, transaction
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from gameplay.models import Game, NightAction, Phase, Vote
from gameplay.rules import Act, Item, Role
from gameplay.selectors.table import current_phase, players
from gameplay.services.common import lock_game
from gameplay.unit_of_work import LockedGame, next_event_seq, read_locked, standing_key
from tests.gameplay.factories import act, make_game, seat, seats, to_night, vote

pytestmark = pytest.mark.django_db


def read(game: Game) -> tuple[LockedGame, int]:
    with transaction.atomic():
        locked = lock_game(game_id=game.pk)
        with CaptureQueriesContext(connection) as captured:
            entry = read_locked(locked)
    assert entry is not None
    return entry, len(captured.captured_queries)


def same_rows(a: Model, b: Model) -> bool:
    fields = [f.attname for f in type(a)._meta.concrete_fields]
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def test_a_days_read_is_the_separate_reads_in_one_statement() -> None:
    game = make_game(n=7, start=True)
    players_ = seats(game, alive=True)
    vote(game, players_[0], players_[1])
    vote(game, players_[0], players_[2])  # changed: two votes cast, one current
    vote(game, players_[3], players_[1], early=True)
    entry, statements = read(game)
    assert statements == 1
    phase = cast(Phase, current_phase(game))
    assert entry.phase is not None and same_rows(entry.phase, phase)
    expected = players(game)
    assert [s.pk for s in entry.seats] == [s.pk for s in expected]
    assert all(same_rows(a, b) for a, b in zip(entry.seats, expected, strict=True))
    assert entry.votes_cast == Vote.objects.filter(phase=phase).count() == 3
    ballots = entry.ballots or {}
    assert {v: (b.target, b.early, b.void) for v, b in ballots.items()} == {
        players_[0].number: (players_[2].number, False, False),
        players_[3].number: (players_[1].number, False, False),  # early only from Day 3
    }
    assert entry.next_seq == next_event_seq(game)
    assert entry.standing == set()


def test_a_nights_read_has_its_standing_slots() -> None:
    game = make_game(n=7, start=True)
    to_night(game)
    commissar = seat(game, Role.COMMISSAR)
    mafia = seat(game, Role.MAFIA)
    others = [s for s in seats(game, alive=True) if s.role == Role.CIVILIAN]
    act(game, commissar, Act.CHECK, others[0])
    act(game, commissar, Act.CHECK, others[1])  # replaces the first
    act(game, mafia, Act.MAFIA_SHOT, others[0])
    holders = [s for s in seats(game, alive=True) if s.item == Item.CLOCK]
    if holders:
        act(game, holders[0], Act.CLOCK, others[1])
    entry, statements = read(game)
    assert statements == 1
    expected = {
        standing_key(a.slot, a.actor_id, a.act)
        for a in NightAction.objects.filter(phase=current_phase(game), current=True)
    }
    assert entry.standing == expected and len(expected) == 2 + bool(holders)
    assert entry.ballots == {} and entry.votes_cast == 0
    assert entry.next_seq == next_event_seq(game)


def test_a_game_without_seated_players_reads_as_none() -> None:
    game = make_game(n=7, start=False)
    with transaction.atomic():
        assert read_locked(lock_game(game_id=game.pk)) is None
