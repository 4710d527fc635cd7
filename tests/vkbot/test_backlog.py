"""The long poll's backlog (vkbot.backlog): fair slices across games, each game's updates in
their order, an update of no single game as a barrier, and a batch's ts only once it and
everything before it were taken."""

from __future__ import annotations

import random
from typing import Any

import pytest

from vkbot.backlog import QUANTUM, SLICE, Backlog


def updates(*games: int | None) -> list[dict[str, Any]]:
    return [{"game": g, "n": i} for i, g in enumerate(games)]


def by_game(batch: list[dict[str, Any]]) -> list[int | None]:
    return [u["game"] for u in batch]


def drain(backlog: Backlog) -> list[list[dict[str, Any]]]:
    slices = []
    while backlog:
        if backlog.needs_games():
            backlog.place(by_game)
        slices.append([update for update, _, _ in backlog.take()])
    return slices


def test_a_small_backlog_is_taken_whole_in_its_order() -> None:
    backlog = Backlog(whole_up_to=50)
    batch = updates(1, 2, None, 1)
    backlog.add(batch, [None] * 4, "5")
    assert not backlog.needs_games()
    assert [u for u, _, _ in backlog.take()] == batch
    assert backlog.ts_done() == "5"
    assert backlog.ts_done() is None
    assert not backlog


def test_a_game_that_comes_late_waits_for_one_slice_not_for_the_burst() -> None:
    backlog = Backlog(whole_up_to=50)
    burst = updates(*[g for _ in range(26) for g in range(1, 101)])
    backlog.add(burst, [None] * len(burst), "2601")
    backlog.place(by_game)
    first = backlog.take()
    assert len(first) <= SLICE
    backlog.add([{"game": 999, "n": 0}], [None], "2602")
    backlog.place(by_game)
    second = backlog.take()
    assert second[0][0] == {"game": 999, "n": 0}
    assert backlog.ts_done() is None  # the burst is not applied yet: its ts waits


def test_a_game_is_never_served_twice_before_one_that_waits() -> None:
    backlog = Backlog(whole_up_to=50)
    batch = updates(*([1] * 300 + [2] * 300))
    backlog.add(batch, [None] * 600, "601")
    served = []
    for _ in range(4):
        backlog.place(by_game)
        served.append({u["game"] for u, _, _ in backlog.take()})
    assert served == [{1, 2}, {1, 2}, {1, 2}, {1, 2}]  # QUANTUM each per slice
    assert QUANTUM * 2 <= SLICE


@pytest.mark.parametrize("seed", range(40))
def test_every_order_that_matters_is_kept(seed: int) -> None:
    rng = random.Random(seed)
    backlog = Backlog(whole_up_to=rng.choice([0, 5, 50]))
    arrived: list[dict[str, Any]] = []
    ends: list[tuple[int, str]] = []
    taken: list[dict[str, Any]] = []
    stored: list[str] = []
    for batch_number in range(rng.randint(1, 8)):
        count = rng.randint(1, 400)
        batch = [
            {
                "game": rng.choice([None, 1, 2, 3, 4, 5, 6, 7] + [None] * rng.randint(0, 1)),
                "n": len(arrived) + i,
            }
            for i in range(count)
        ]
        arrived += batch
        ends.append((len(arrived) - 1, f"ts{batch_number}"))
        backlog.add(batch, [None] * count, f"ts{batch_number}")
        for _ in range(rng.randint(0, 3)):
            if backlog:
                if backlog.needs_games():
                    backlog.place(by_game)
                taken += [u for u, _, _ in backlog.take()]
                if (ts := backlog.ts_done()) is not None:
                    stored.append(ts)
                    done = max(e for e, t in ends if t == ts)
                    assert {u["n"] for u in taken} >= set(range(done + 1))
    for part in drain(backlog):
        taken += part
    assert sorted(u["n"] for u in taken) == list(range(len(arrived)))
    position = {u["n"]: i for i, u in enumerate(taken)}
    for game in range(1, 8):
        mine = [u["n"] for u in taken if u["game"] == game]
        assert mine == sorted(mine)
    for barrier in (u["n"] for u in arrived if u["game"] is None):
        assert all(position[n] < position[barrier] for n in range(barrier))
        assert all(position[n] > position[barrier] for n in range(barrier + 1, len(arrived)))
    assert stored == sorted(stored, key=lambda t: int(t[2:]))
