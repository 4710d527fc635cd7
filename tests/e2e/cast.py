"""Who plays what in the end-to-end game: the people (VK users with names), and the parts the
script gives the seats once the deal is known (the deal comes from a fixed seed, so the parts
are the same on every run; they are derived from the roles, not hard-coded seat numbers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from gameplay.models import Seat

#: VK user ``BASE + i`` is the i-th person; the first 26 sign up in this order (seat i).
BASE = 5000
PEOPLE: list[tuple[str, str]] = [
    ("Аня", "Петрова"), ("Борис", "Соколов"), ("Вера", "Ильина"), ("Глеб", "Морозов"),
    ("Дарья", "Белова"), ("Егор", "Волков"), ("Жанна", "Зайцева"), ("Захар", "Орлов"),
    ("Ирина", "Лебедева"), ("Кирилл", "Новиков"), ("Лиза", "Козлова"), ("Максим", "Павлов"),
    ("Нина", "Семёнова"), ("Олег", "Голубев"), ("Полина", "Виноградова"), ("Роман", "Богданов"),
    ("Света", "Воробьёва"), ("Тимур", "Фролов"), ("Ульяна", "Михайлова"), ("Фёдор", "Ёлкин"),
    ("Харитон", "Беляев"), ("Цветана", "Тарасова"), ("Чеслав", "Жуков"), ("Шура", "Лукина"),
    ("Эмма", "Осипова"), ("Юрий", "Титов"),
    ("Яна", "Ершова"),  # the reserve, who replaces a player on Day 2
    ("Арсений", "Гусев"),  # signs up and withdraws before the start
]  # fmt: skip
PLAYERS = 26
RESERVE = 27
QUITTER = 28


@dataclass(frozen=True)
class Cast:
    """Seat numbers by part. Mafia: ``clock`` holds the clock and survives to Day 3;
    ``executed1`` is executed on Day 1, ``shot1`` shot by the maniac on Night 1, ``checked``
    checked on Night 1 and executed on Day 2, ``modkilled`` modkilled on Day 2, ``striker``
    sends the wrong role strike on Night 2. Civilians: ``skipper`` skips the Day 1 vote,
    ``decoy`` is the mafia's first shot on Night 1 and ``victim`` its last (the dead player who
    joins the spectator chat), ``healed1`` the doctor's (blocked) heal, ``replaced`` leaves on
    Day 2, ``buttoned`` is hit by the red button on Night 2 (the GM's edit of the draft spares
    them), ``saved`` is saved by the book, ``intruder`` is a living player who tries the
    spectator chat, ``other`` a vote sink."""

    mafia: tuple[int, ...]
    clock: int
    executed1: int
    shot1: int
    checked: int
    modkilled: int
    striker: int
    commissar: int
    doctor: int
    maniac: int
    red_button: int
    book: int
    skipper: int
    decoy: int
    victim: int
    healed1: int
    replaced: int
    buttoned: int
    saved: int
    intruder: int
    other: int


def cast_of(seats: list[Seat]) -> Cast:
    """The parts for this deal. The script needs the clock with the mafia and the red button
    and the book with civilians (the seed is chosen so)."""
    by_role: dict[str, list[int]] = {}
    items: dict[str, tuple[int, str]] = {}
    for seat in seats:
        number = cast(int, seat.number)  # a player's seat
        by_role.setdefault(seat.role, []).append(number)
        if seat.item:
            items[seat.item] = (number, seat.role)
    assert items["clock"][1] == "mafia", items
    assert items["red_button"][1] == items["book"][1] == "civilian", items
    mafia = sorted(by_role["mafia"])
    clock = items["clock"][0]
    executed1, shot1, checked, modkilled, striker = [m for m in mafia if m != clock]
    plain = [
        c
        for c in sorted(by_role["civilian"])
        if c not in (items["red_button"][0], items["book"][0])
    ]
    return Cast(
        mafia=tuple(mafia),
        clock=clock,
        executed1=executed1,
        shot1=shot1,
        checked=checked,
        modkilled=modkilled,
        striker=striker,
        commissar=by_role["commissar"][0],
        doctor=by_role["doctor"][0],
        maniac=by_role["maniac"][0],
        red_button=items["red_button"][0],
        book=items["book"][0],
        skipper=plain[0],
        decoy=plain[1],
        victim=plain[2],
        healed1=plain[3],
        replaced=plain[4],
        buttoned=plain[5],
        saved=plain[6],
        intruder=plain[7],
        other=plain[8],
    )
