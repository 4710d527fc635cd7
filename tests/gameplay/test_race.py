"""Per-game serialisation: commands racing for one game behave as if they came one after another
(docs/architecture.md). Each thread has its own connection and transaction: on PostgreSQL the
game row's lock serialises them, on the embedded default SQLite's write lock taken at BEGIN."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from django.db import connections

from gameplay import services
from gameplay.models import Actor, NightAction, Phase, PhaseKind, Seat, Vote
from gameplay.rules import Role, RoleCounts, RuleViolation
from tests.gameplay.factories import community_id, number_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

COUNTS = RoleCounts(mafia=2, commissar=1, doctor=1, maniac=1, civilian=3)


def started_game() -> int:
    game = services.game_create(
        name="Гонка", counts=COUNTS, seed="race", vk_group_id=community_id()
    )
    entries = [services.SignupEntry(5000 + i, f"Игрок {i}") for i in range(COUNTS.total)]
    services.signups_create(game_id=game.pk, entries=entries)
    services.game_deal(game_id=game.pk)
    services.game_start(game_id=game.pk)
    return game.pk


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at the same instant in separate threads; return results or exceptions."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[i] = call()
        except Exception as e:  # noqa: BLE001 - the test inspects what each thread got
            results[i] = e
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_two_day_closes_close_once() -> None:
    for _ in range(5):
        game_id = started_game()
        results = race(
            partial(services.day_close, game_id=game_id, by=Actor.gm("gm")),
            partial(services.day_close, game_id=game_id, by=Actor.DEADLINE),
        )
        errors = [r for r in results if isinstance(r, Exception)]
        assert len(errors) == 1, results
        assert isinstance(errors[0], RuleViolation), errors[0]
        assert Phase.objects.filter(game_id=game_id, kind=PhaseKind.NIGHT).count() == 1
        assert Phase.objects.filter(game_id=game_id, kind=PhaseKind.DAY, number=2).count() == 0


def test_mafia_members_shooting_at_once_leave_one_team_shot() -> None:
    game_id = started_game()
    services.day_close(game_id=game_id)
    mafia = list(Seat.objects.filter(game_id=game_id, role=Role.MAFIA).order_by("number"))
    others = list(Seat.objects.filter(game_id=game_id).exclude(role=Role.MAFIA).order_by("number"))
    alive_others = [s for s in others if s.alive]
    for round_ in range(5):
        shots = [
            partial(
                services.night_action_submit,
                game_id=game_id,
                actor=m.number,
                act="mafia_shot",
                target=number_of(alive_others[(i + round_) % len(alive_others)]),
            )
            for i, m in enumerate(mafia)
            if m.alive
        ]
        results = race(*shots)
        assert not [r for r in results if isinstance(r, Exception)], results
        assert (
            NightAction.objects.filter(
                phase__game_id=game_id, act="mafia_shot", current=True
            ).count()
            == 1
        )


def test_vote_and_close_race_is_serial() -> None:
    """A vote racing the deadline either lands before the close (and counts) or is refused."""
    for _ in range(5):
        game_id = started_game()
        seats = list(Seat.objects.filter(game_id=game_id).order_by("number"))
        voter, target = seats[0], seats[1]
        results = race(
            partial(
                services.vote_submit, game_id=game_id, voter=voter.number, target=number_of(target)
            ),
            partial(services.day_close, game_id=game_id),
        )
        vote_result, close_result = results
        assert not isinstance(close_result, Exception), close_result
        day = Phase.objects.get(game_id=game_id, kind=PhaseKind.DAY, number=1)
        assert day.result is not None  # closed
        if isinstance(vote_result, Exception):
            # Refused after the close: nobody voted, everyone got a strike and +2.
            assert isinstance(vote_result, RuleViolation)
            assert not Vote.objects.filter(phase=day).exists()
            assert day.result["tally"] == {str(s.number): 2 for s in seats}
        else:
            # Landed before the close: counted, and the voter was not struck.
            assert Vote.objects.filter(phase=day, current=True).count() == 1
            assert day.result["tally"][str(target.number)] == 3
            assert str(voter.number) not in day.result["tally"]
