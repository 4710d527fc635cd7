"""The long poll's backlog (vkbot.backlog): fair slices across games and communities, each
game's updates in their order, an update of no single game as a barrier within its community,
and a batch's ts only once it and everything of its community before it were taken."""

from __future__ import annotations

import random
from typing import Any

import pytest

from vkbot.backlog import QUANTUM, SLICE, Backlog, Backlogs


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


# --- several communities (vkbot.backlog.Backlogs) -------------------------------------------


def games_by_group(group: int, batch: list[dict[str, Any]]) -> list[int | None]:
    return [u["game"] for u in batch]


def take_placed(backlogs: Backlogs) -> dict[int, list[dict[str, Any]]]:
    if backlogs.needs_games():
        backlogs.place(games_by_group)
    return {group: [u for u, _, _ in part] for group, part in backlogs.take().items()}


def test_a_small_backlog_of_several_communities_is_taken_whole() -> None:
    backlogs = Backlogs(whole_up_to=50)
    backlogs.add(1, updates(1, None, 1), [None] * 3, "a3")
    backlogs.add(2, updates(2, 2), [None] * 2, "b2")
    assert not backlogs.needs_games()
    assert take_placed(backlogs) == {1: updates(1, None, 1), 2: updates(2, 2)}
    assert (backlogs.ts_done(1), backlogs.ts_done(2)) == ("a3", "b2")
    assert not backlogs and backlogs.groups() == []


def test_a_hundred_small_communities_go_in_one_slice_beside_a_burst() -> None:
    backlogs = Backlogs(whole_up_to=50)
    burst = updates(*[1000] * 600)
    backlogs.add(1000, burst, [None] * 600, "burst")
    for group in range(1, 101):
        backlogs.add(group, updates(group), [None], f"ts{group}")
    first = take_placed(backlogs)
    assert set(first) == set(range(1, 101))  # every small community, the burst next
    assert all(backlogs.ts_done(group) == f"ts{group}" for group in range(1, 101))
    assert backlogs.ts_done(1000) is None
    second = take_placed(backlogs)
    assert list(second) == [1000] and len(second[1000]) <= SLICE


def test_a_community_that_comes_late_waits_for_one_slice_not_for_anothers_burst() -> None:
    backlogs = Backlogs(whole_up_to=50)
    burst = updates(*[g for _ in range(26) for g in range(1, 101)])  # 100 games at once
    backlogs.add(7, burst, [None] * len(burst), "2600")
    assert len(take_placed(backlogs)[7]) <= SLICE
    backlogs.add(8, [{"game": 999, "n": 0}], [None], "1")
    second = take_placed(backlogs)
    assert second[8] == [{"game": 999, "n": 0}]
    assert backlogs.ts_done(8) == "1" and backlogs.ts_done(7) is None


def test_a_barrier_holds_back_its_own_community_only() -> None:
    backlogs = Backlogs(whole_up_to=0)
    backlogs.add(1, updates(1, None, 1), [None] * 3, "a")
    backlogs.add(2, updates(2, 2, 2), [None] * 3, "b")
    slices = []
    while backlogs:
        slices.append({g: [u["n"] for u in part] for g, part in take_placed(backlogs).items()})
    # Community 1: its first update, then (once it is at the head) the barrier and what
    # follows it; community 2's updates go along in the first slice.
    assert slices == [{1: [0], 2: [0, 1, 2]}, {1: [1, 2]}]


def test_a_dropped_community_leaves_the_others() -> None:
    backlogs = Backlogs(whole_up_to=0)
    backlogs.add(1, updates(1, 1), [None] * 2, "a")
    backlogs.add(2, updates(2), [None], "b")
    assert backlogs.drop(1) == 2 and len(backlogs) == 1
    assert take_placed(backlogs) == {2: updates(2)}
    assert backlogs.ts_done(1) is None and backlogs.ts_done(2) == "b"


@pytest.mark.parametrize("seed", range(30))
def test_every_order_that_matters_is_kept_across_communities(seed: int) -> None:
    rng = random.Random(seed)
    backlogs = Backlogs(whole_up_to=rng.choice([0, 5, 50]))
    groups = [10, 20, 30]
    arrived: dict[int, list[dict[str, Any]]] = {g: [] for g in groups}
    ends: dict[int, list[tuple[int, str]]] = {g: [] for g in groups}
    taken: dict[int, list[dict[str, Any]]] = {g: [] for g in groups}
    stored: dict[int, list[str]] = {g: [] for g in groups}

    def take_one() -> None:
        part = take_placed(backlogs)
        assert sum(map(len, part.values())) <= max(SLICE, backlogs.whole_up_to)
        for group, got in part.items():
            taken[group] += got
        for group in groups:
            if (ts := backlogs.ts_done(group)) is not None:
                stored[group].append(ts)
                done = max(e for e, t in ends[group] if t == ts)
                assert {u["n"] for u in taken[group]} >= set(range(done + 1))

    for batch_number in range(rng.randint(1, 12)):
        group = rng.choice(groups)
        count = rng.randint(1, 300)
        start = len(arrived[group])
        games = [None, group + 1, group + 2, group + 3]
        batch = [{"game": rng.choice(games), "n": start + i} for i in range(count)]
        arrived[group] += batch
        ends[group].append((len(arrived[group]) - 1, f"ts{batch_number}"))
        backlogs.add(group, batch, [None] * count, f"ts{batch_number}")
        for _ in range(rng.randint(0, 3)):
            if backlogs:
                take_one()
    while backlogs:
        take_one()
    for group in groups:
        got = taken[group]
        assert sorted(u["n"] for u in got) == list(range(len(arrived[group])))
        position = {u["n"]: i for i, u in enumerate(got)}
        for game in {u["game"] for u in got} - {None}:
            mine = [u["n"] for u in got if u["game"] == game]
            assert mine == sorted(mine)
        for barrier in (u["n"] for u in arrived[group] if u["game"] is None):
            assert all(position[n] < position[barrier] for n in range(barrier))
            later = range(barrier + 1, len(arrived[group]))
            assert all(position[n] > position[barrier] for n in later)
        assert stored[group] == sorted(stored[group], key=lambda t: int(t[2:]))
        if arrived[group]:
            assert stored[group][-1] == ends[group][-1][1]
