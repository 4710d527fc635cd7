"""What the soak test's players send: for each game and phase, every living player votes (in
the board or by private message, some changing their mind) or acts at night (every role
action, the mafia's shots, the role strike once, the items while unused; the others ask for
their «статус»), with targets drawn from a seeded random among the valid ones, so every
submission is accepted and the game moves on (executions, deaths at night, a winner).

Each :class:`Event` knows what it must leave in the database: a vote (voter, target) or a
night action (actor, act, target, guess).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import cast

from bench.games import BenchGame
from gameplay.models import Game, GameStatus, PhaseKind, Seat, SeatStatus
from gameplay.rules import Act, Item, Role

GUESS_WORDS = {Role.COMMISSAR: "комиссар", Role.DOCTOR: "доктор", Role.MANIAC: "маньяк"}
ITEM_WORDS = {
    Item.CLOCK: ("часы", Act.CLOCK),
    Item.RED_BUTTON: ("кнопка", Act.RED_BUTTON),
    Item.BOOK: ("книга", Act.BOOK),
}


@dataclass(frozen=True)
class Event:
    game: BenchGame
    seat: int
    board: bool
    text: str
    #: ("vote", voter, target) or ("act", actor, act, target, guess); None: no submission.
    expects: tuple[object, ...] | None


@dataclass(frozen=True)
class Table:
    living: list[int]
    roles: dict[int, str]
    items: dict[int, str]
    last_heal: int | None
    strike_used: bool


def table_of(game: BenchGame) -> Table | None:
    """The game's living seats and what they hold; None when the game is over."""
    row = Game.objects.get(pk=game.game_id)
    if row.status != GameStatus.RUNNING:
        return None
    seats = list(
        Seat.objects.filter(
            game_id=game.game_id, status=SeatStatus.PLAYER, number__isnull=False
        ).order_by("number")
    )
    # number__isnull=False: the seats have their numbers.
    living = [cast(int, s.number) for s in seats if s.alive]
    doctor = next((s for s in seats if s.role == Role.DOCTOR), None)
    return Table(
        living=living,
        roles={cast(int, s.number): s.role for s in seats},
        items={
            cast(int, s.number): s.item for s in seats if s.alive and s.item and not s.item_used
        },
        last_heal=doctor.last_heal_target if doctor else None,
        strike_used=row.role_strike_used,
    )


def day_events(rng: random.Random, game: BenchGame, table: Table) -> list[Event]:
    """Everyone votes; most for one victim, so that someone is executed; a fifth vote twice
    (the later vote stands). Odd seats vote in the board, even seats by private message."""
    living = table.living
    victim = rng.choice(living)
    events = []
    for voter in living:
        others = [n for n in living if n != voter]
        if voter != victim and rng.random() < 0.75:
            target = victim
        else:
            target = rng.choice(others)
        choices = [target]
        if rng.random() < 0.2:
            choices.insert(0, rng.choice(others))
        for choice in choices:
            events.append(
                Event(game, voter, voter % 2 == 1, f"голос {choice}", ("vote", voter, choice))
            )
    return events


def night_events(rng: random.Random, game: BenchGame, table: Table, number: int) -> list[Event]:
    """Every living player with something to do does it; the others ask for their status."""
    living = table.living
    events: list[Event] = []

    def other(actor: int) -> int:
        return rng.choice([n for n in living if n != actor])

    def act(actor: int, text: str, kind: Act, target: int, guess: str = "") -> None:
        events.append(Event(game, actor, False, text, ("act", actor, kind.value, target, guess)))

    mafia = [n for n in living if table.roles[n] == Role.MAFIA]
    town = [n for n in living if table.roles[n] != Role.MAFIA]
    for actor in mafia:
        if town:
            target = rng.choice(town)
            act(actor, f"выстрел {target}", Act.MAFIA_SHOT, target)
    if mafia and not table.strike_used and number == 1:
        actor = rng.choice(mafia)
        guess = rng.choice(list(GUESS_WORDS))
        target = other(actor)
        act(actor, f"удар {target} {GUESS_WORDS[guess]}", Act.ROLE_STRIKE, target, guess.value)
    for actor in living:
        role = table.roles[actor]
        if role == Role.COMMISSAR:
            target = other(actor)
            if rng.random() < 0.5:
                act(actor, f"проверка {target}", Act.CHECK, target)
            else:
                act(actor, f"выстрел {target}", Act.COMMISSAR_SHOT, target)
        elif role == Role.DOCTOR:
            target = rng.choice([n for n in living if n != table.last_heal])
            act(actor, f"лечу {target}", Act.HEAL, target)
        elif role == Role.MANIAC:
            target = other(actor)
            act(actor, f"выстрел {target}", Act.MANIAC_SHOT, target)
        item = table.items.get(actor)
        if item:
            word, kind = ITEM_WORDS[Item(item)]
            target = rng.choice(living) if kind is Act.BOOK else other(actor)
            act(actor, f"{word} {target}", kind, target)
        if role == Role.CIVILIAN and not item:
            events.append(Event(game, actor, False, "статус", None))
    return events


def phase_events(seed: int, games: list[BenchGame], kind: str, number: int) -> list[Event]:
    """The phase's events of every running game, interleaved game by game (all at once)."""
    per_game: list[list[Event]] = []
    for game in games:
        table = table_of(game)
        if table is None:
            continue
        rng = random.Random(f"{seed}:{game.number}:{kind}:{number}")
        if kind == PhaseKind.DAY:
            per_game.append(day_events(rng, game, table))
        else:
            per_game.append(night_events(rng, game, table, number))
    interleaved: list[Event] = []
    for i in range(max((len(events) for events in per_game), default=0)):
        interleaved.extend(events[i] for events in per_game if i < len(events))
    return interleaved
