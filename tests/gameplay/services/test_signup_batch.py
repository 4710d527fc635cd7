"""gameplay.services.signup_batch: many sign-ups in one go write what ``signup_create`` one by
one writes, and refuse as it refuses, with nothing written."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from gameplay import services, unit_of_work
from gameplay.models import Actor, Game, GameEvent, GameStatus, Outbox, Seat
from gameplay.refusals import NoSuchGame
from gameplay.rules.errors import InvalidCommand
from gameplay.services import SignupEntry
from tests.gameplay.factories import make_game, snapshot, vk_id, vote

pytestmark = pytest.mark.django_db

#: Names as people type them (spaces around, none at all, longer than a seat holds), VK's sex
#: (one it does not know among them) and whether the community may write.
ENTRIES = [
    SignupEntry(5001, "  Алёна  ", sex=1, pm_allowed=True),
    SignupEntry(5002, "", sex=2, pm_allowed=False),
    SignupEntry(5003, "Ё" * 250, sex=7),
    SignupEntry(5004, "Пётр Иванов", pm_allowed=None),
    SignupEntry(5005, "фёдор", sex=2, pm_allowed=True),
]


def written(game: Game) -> dict[str, Any]:
    """What sign-ups wrote to ``game``: its seats, events and Outbox rows in their order,
    without their ids and times (the two games compared are two rows)."""
    seats = Seat.objects.filter(game=game).order_by("id")
    return {
        "seats": list(
            seats.values_list("vk_user_id", "name", "sex", "status", "number", "role", "pm_allowed")
        ),
        "listed": [s.vk_user_id for s in Seat.objects.filter(game=game)],  # the model's order
        "events": list(
            GameEvent.objects.filter(game=game)
            .order_by("seq")
            .values_list("seq", "kind", "actor", "data", "phase", "override")
        ),
        "outbox": list(
            Outbox.objects.filter(game=game)
            .order_by("id")
            .values_list("channel", "peer_ids", "text", "kind", "keyboard", "status", "group_id")
        ),
    }


def one_by_one(game: Game, entries: list[SignupEntry], **kw: Any) -> list[Seat]:
    return [
        services.signup_create(
            game_id=game.pk,
            vk_user_id=e.vk_user_id,
            name=e.name,
            sex=e.sex,
            pm_allowed=e.pm_allowed,
            **kw,
        )
        for e in entries
    ]


@pytest.mark.parametrize(
    ("dealt", "kw"),
    [
        (False, {}),
        (False, {"by": Actor.gm("anna")}),
        (True, {"reserve": True}),
        (False, {"reserve": True, "by": Actor.gm("anna")}),
    ],
)
def test_a_batch_writes_what_sign_ups_one_by_one_write(dealt: bool, kw: dict[str, Any]) -> None:
    batch, single = make_game(n=9, deal=dealt), make_game(n=9, deal=dealt)

    seats = services.signups_create(game_id=batch.pk, entries=ENTRIES, **kw)
    alone = one_by_one(single, ENTRIES, **kw)

    assert written(batch) == written(single)
    assert [(s.vk_user_id, s.name, s.sex, s.status, s.pm_allowed) for s in seats] == [
        (s.vk_user_id, s.name, s.sex, s.status, s.pm_allowed) for s in alone
    ]
    # The seats returned are the rows, their ids and times in the entries' order.
    stored = Seat.objects.in_bulk([s.pk for s in seats])
    assert [stored[s.pk].signed_up_at for s in seats] == [s.signed_up_at for s in seats]
    assert all(a.pk < b.pk and a.signed_up_at < b.signed_up_at for a, b in pairwise(seats))


@pytest.mark.django_db(transaction=True)  # a transaction of its own, as a GM's request runs it
def test_a_batch_costs_one_statement_a_table() -> None:
    """In a fresh transaction (one that has not read or taken the game's last seq yet)."""
    game = make_game(n=3)
    with CaptureQueriesContext(connection) as captured:
        services.signups_create(game_id=game.pk, entries=ENTRIES)
    # The lock, who is listed, the seats, the log's last seq, the events, the messages.
    statements = [
        q["sql"]
        for q in captured.captured_queries
        if "SAVEPOINT" not in q["sql"] and q["sql"] not in ("BEGIN", "BEGIN IMMEDIATE", "COMMIT")
    ]
    assert len(statements) == 6, statements


def test_the_sign_ups_times_follow_the_entries_even_when_the_clock_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = make_game(n=0)
    instant = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: instant)

    seats = services.signups_create(game_id=game.pk, entries=ENTRIES)

    stored = list(Seat.objects.filter(game=game).order_by("signed_up_at"))
    assert [s.vk_user_id for s in stored] == [e.vk_user_id for e in ENTRIES]
    assert len({s.signed_up_at for s in stored}) == len(ENTRIES)
    assert [s.signed_up_at for s in stored] == [s.signed_up_at for s in seats]


def refusal(call: Callable[[], object]) -> tuple[type, str, dict[str, Any]]:
    with pytest.raises(InvalidCommand) as refused:
        call()
    return type(refused.value), refused.value.reason, refused.value.params


@pytest.mark.parametrize(
    ("case", "reserve"),
    [
        ("listed", False),  # the third entry is a player already
        ("listed", True),
        ("twice", False),  # the fourth entry repeats the second
        ("twice", True),
        ("dealt", False),  # recruitment is over: the reserve only
        ("finished", True),  # not even the reserve
    ],
)
def test_a_refused_batch_writes_nothing_and_refuses_as_one_by_one_would(
    case: str, reserve: bool
) -> None:
    game = make_game(n=5, deal=case == "dealt")
    if case == "finished":
        Game.objects.filter(pk=game.pk).update(status=GameStatus.FINISHED)
    entries = ENTRIES[:4]
    if case == "listed":
        entries = [*ENTRIES[:2], SignupEntry(vk_id(3), "Снова"), *ENTRIES[2:]]
    elif case == "twice":
        entries = [*ENTRIES[:3], SignupEntry(ENTRIES[1].vk_user_id, "Ещё раз"), ENTRIES[3]]
    before = snapshot(game)

    batch = refusal(
        lambda: services.signups_create(game_id=game.pk, entries=entries, reserve=reserve)
    )

    assert snapshot(game) == before
    assert batch == refusal(lambda: one_by_one(game, entries, reserve=reserve))


def test_an_unknown_game_is_refused_and_an_empty_batch_does_nothing() -> None:
    kind, _, _ = refusal(lambda: services.signups_create(game_id=0, entries=ENTRIES))
    assert kind is NoSuchGame
    game = make_game(n=1)
    before = snapshot(game)
    assert services.signups_create(game_id=game.pk, entries=[]) == []
    assert snapshot(game) == before


def test_a_batch_in_the_pipelines_transaction_logs_after_the_rows_it_queued() -> None:
    """A vote in the pipeline's transaction queues its event and messages to be inserted at
    its end (:func:`gameplay.unit_of_work.defer`); a batch after it in that transaction logs
    its events after the vote's, in one run of seqs, and its messages after the vote's."""
    game = make_game(n=9, start=True)
    with transaction.atomic(), unit_of_work.kept():
        vote(game, 1, 2)
        services.signups_create(game_id=game.pk, entries=ENTRIES, reserve=True)
    log = list(GameEvent.objects.filter(game=game).order_by("seq").values_list("seq", "kind"))
    assert [seq for seq, _ in log] == list(range(1, len(log) + 1))
    assert [kind for _, kind in log[-6:]] == ["vote"] + ["signup"] * len(ENTRIES)
    rows = list(Outbox.objects.filter(game=game).order_by("id"))
    assert [r.peer_ids for r in rows[-len(ENTRIES) :]] == [[e.vk_user_id] for e in ENTRIES]
