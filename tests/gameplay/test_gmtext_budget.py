"""The GM language's worst case, measured (``bench/gmtext.py``): the most expensive texts the
save check accepts for 26 players, in every slot, and a deadline tick of a 26-player game with
them. The times are printed, not asserted (a loaded machine would flake them; the bench is
where speed is judged); what is asserted is what does not depend on the machine: every such
text is accepted, and every message stays within VK's limits."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

import pytest
from django.db import transaction

from bench import gmtext as worst
from bench.games import deal_26
from gameplay import gmtext, services, themes
from gameplay.models import Actor, Game, ModerationFlag, Outbox
from gameplay.rules import Item, Role, RoleCounts
from gameplay.services.deadlines import deadline_tick
from gameplay.services.story import theme_text_set
from tests.gameplay.deadline_support import T0
from tests.gameplay.factories import community_id

PLAYERS = 26


@cache
def figures() -> worst.Figures:
    """The bench's figures from one cold render each (``make bench`` takes the median of
    three): the lengths asserted are the same in every run; the times are only printed."""
    return worst.measure(PLAYERS, runs=1)


def test_the_worst_accepted_texts_stay_within_vk_limits(capsys: pytest.CaptureFixture[str]) -> None:
    measured = figures()
    with capsys.disabled():
        print("\n" + worst.table(measured))
    assert {f.slot for f in measured.slots} == set(themes.SLOTS)
    for f in measured.slots:
        assert f.slot_chars <= themes.output_limit(f.slot)
    for m in measured.messages:
        # The end-of-game post's own facts for 26 players at their longest (104 night
        # actions, a decision per player) pass one post whatever the text, and a slot that
        # words a whole post may fill several: the delivery splits them. Every other message
        # stays within VK's limit with a worst text in each of its slots.
        whole = any(themes.output_limit(slot) > m.limit for slot in m.slots)
        if m.message != "board/game_over" and not whole:
            assert m.chars <= m.limit, m
    assert themes.output_limit("end") <= gmtext.BOARD_POST_MAX


def _game(counts: RoleCounts, deal: Mapping[int, tuple[Role, Item | None]], topic: int) -> Game:
    game = services.game_create(
        name="Бюджет", counts=counts, topic_id=topic, vk_group_id=community_id()
    )
    entries = [services.SignupEntry(topic * 100 + n, NAMES[n - 1]) for n in range(1, PLAYERS + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    services.game_deal_fixed(game_id=game.pk, assignment=deal)
    return game


#: Names as long as VK's run, each of its own (each declined afresh).
_FIRST = ("Александра", "Вячеслав", "Анастасия", "Константин", "Маргарита", "Святослав")
_LAST = ("Константинопольская", "Преображенский", "Воскресенская", "Многогрешный", "Белозёрова")
NAMES = [f"{_FIRST[n % 6]} {_LAST[n // 6 % 5]}" for n in range(PLAYERS)]


@cache
def tick_texts() -> dict[str, str]:
    """The worst texts for what a day-1 tick renders: the slots with lists there decline every
    player in every case (the tally of the day's result, the seats of the end), the others
    send as many words through pymorphy3 as the check accepts."""
    lists = {"execution": ("tally", "a.person"), "end": ("seats", "a.person")}
    out = {}
    for slot in themes.SLOTS:
        kind, target = ("names", lists[slot]) if slot in lists else ("words", None)
        text = worst.worst_text(slot, kind, PLAYERS, target=target)
        assert text is not None
        out[slot] = text
    return out


@dataclass
class Tick:
    ms: float  # the whole tick
    slots_ms: float  # of which rendering theme slots
    slots: int  # how many slots it rendered
    rows: int  # Outbox rows it queued


@contextmanager
def slot_time() -> Iterator[list[float]]:
    """The time each theme slot rendered within the block takes (``Theme.render_slot``)."""
    spent: list[float] = []
    original = themes.Theme.render_slot

    def timed(theme: themes.Theme, slot: str, context: Any) -> str:
        start = time.perf_counter()
        try:
            return original(theme, slot, context)
        finally:
            spent.append((time.perf_counter() - start) * 1000)

    themes.Theme.render_slot = timed  # type: ignore[method-assign,assignment]
    try:
        yield spent
    finally:
        themes.Theme.render_slot = original  # type: ignore[method-assign]


def _day_one_due(*, ends: bool, texts: dict[str, str], topic: int) -> Game:
    """A fresh 26-player game on day 1, every player's vote in and its deadline passed: the
    night opens at the next tick, with its prompts, or — one mafia, voted out — the game
    ends. The GM's ``texts`` saved through the panel's service first."""
    deal: dict[int, tuple[Role, Item | None]]
    if ends:
        counts = RoleCounts(mafia=1, commissar=0, doctor=0, maniac=0, civilian=PLAYERS - 1)
        deal = {n: (Role.MAFIA if n == 1 else Role.CIVILIAN, None) for n in range(1, 27)}
    else:
        counts, deal = RoleCounts(), deal_26()
    game = _game(counts, deal, topic)
    for slot, text in texts.items():
        theme_text_set(game_id=game.pk, by=Actor.gm("t"), slot=slot, text=text)
    services.game_start(game_id=game.pk, now=T0)
    target = 1 if ends else 12
    for n in range(1, PLAYERS + 1):
        services.vote_submit(game_id=game.pk, voter=n, target=target if n != target else 2)
    return game


def _tick(game: Game, *, ends: bool, cold: bool) -> Tick:
    """The deadline tick closing ``game``'s day 1, undone afterwards (a savepoint), so the
    next tick closes the same day again. ``cold``: the grammar's and the compiled texts'
    caches emptied (a worker just started); else as they are (a worker that has rendered
    these before)."""
    savepoint = transaction.savepoint()
    try:
        before = Outbox.objects.count()
        if cold:
            worst._cold()
        with slot_time() as spent:
            start = time.perf_counter()
            report = deadline_tick(now=T0 + timedelta(hours=24, seconds=1))
            took = (time.perf_counter() - start) * 1000
        assert report.closed and not report.failures
        game.refresh_from_db()
        assert (game.winner == "town") is ends
        assert not ModerationFlag.objects.filter(game=game).exists()  # no text fell back
        return Tick(took, sum(spent), len(spent), Outbox.objects.count() - before)
    finally:
        transaction.savepoint_rollback(savepoint)


@pytest.mark.django_db
def test_a_deadline_tick_with_the_worst_texts(capsys: pytest.CaptureFixture[str]) -> None:
    """Each game is built once and its day closed six times over, cold and warm in turn."""
    texts = tick_texts()
    rows = []
    topic = 662_000
    for ends in (False, True):
        for label, own in (("theme's texts", {}), ("worst GM texts", texts)):
            topic += 1
            built = transaction.savepoint()
            game = _day_one_due(ends=ends, texts=own, topic=topic)
            ticks: dict[bool, list[Tick]] = {True: [], False: []}
            for cold in (True, False, True, False, True, False):
                ticks[cold].append(_tick(game, ends=ends, cold=cold))
            transaction.savepoint_rollback(built)  # the next game's tick closes it alone
            what = "day 1 → game over" if ends else "day 1 → night 1 with its prompts"
            cells = []
            for cold in (True, False):
                whole = statistics.median(t.ms for t in ticks[cold])
                slots = statistics.median(t.slots_ms for t in ticks[cold])
                cells.append(f"{whole:.1f} ms (slots {slots:.1f} ms)")
            last = ticks[False][-1]
            rows.append(f"| {what} | {label} | {' | '.join(cells)} | {last.slots} | {last.rows} |")
    with capsys.disabled():
        print(f"\ndeadline tick, {PLAYERS} players (median of 3 each):")
        print("| tick | texts | cold caches | warm | slots rendered | Outbox rows |")
        print("|---|---|---|---|---|---|\n" + "\n".join(rows))
