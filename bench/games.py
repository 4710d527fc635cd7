"""26-player games for the benchmark and the soak test, built through the services, and what
their players send: a day's votes and a night's actions as VK users would write them.

Game ``g`` (1, 2, …) uses board topic ``g`` of the local VK (topics are numbered from 1 there)
and VK users ``vk_user(g, n)`` for its seats ``n``. The deal is fixed: seats 1–6 mafia (seat 1
holds the clock), 7 commissar, 8 doctor, 9 maniac, 10 and 11 civilians with the red button and
the book, 12–26 civilians.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from gameplay import services
from gameplay.models import Actor, Game, Outbox, OutboxStatus
from gameplay.rules import Item, Role, RoleCounts

PLAYERS = 26
MAFIA = tuple(range(1, 7))
COMMISSAR, DOCTOR, MANIAC = 7, 8, 9
RED_BUTTON_HOLDER, BOOK_HOLDER = 10, 11
#: VK ids: game g, seat n → VK_BASE + g * 1000 + n.
VK_BASE = 10_000_000


def vk_user(game_number: int, seat: int) -> int:
    return VK_BASE + game_number * 1000 + seat


def deal_26() -> dict[int, tuple[Role, Item | None]]:
    deal: dict[int, tuple[Role, Item | None]] = {}
    for n in range(1, PLAYERS + 1):
        role = Role.MAFIA if n in MAFIA else Role.CIVILIAN
        deal[n] = (role, None)
    deal[1] = (Role.MAFIA, Item.CLOCK)
    deal[COMMISSAR] = (Role.COMMISSAR, None)
    deal[DOCTOR] = (Role.DOCTOR, None)
    deal[MANIAC] = (Role.MANIAC, None)
    deal[RED_BUTTON_HOLDER] = (Role.CIVILIAN, Item.RED_BUTTON)
    deal[BOOK_HOLDER] = (Role.CIVILIAN, Item.BOOK)
    return deal


@dataclass(frozen=True)
class BenchGame:
    number: int
    game_id: int
    topic_id: int

    def vk(self, seat: int) -> int:
        return vk_user(self.number, seat)


def create_game(number: int, *, start: bool = True, **settings: Any) -> BenchGame:
    """Game ``number``: created, 26 sign-ups, the fixed deal, started (Day 1 open)."""
    with transaction.atomic():
        game = services.game_create(
            name=f"Бенчмарк {number}",
            counts=RoleCounts(),
            by=Actor.gm("bench"),
            topic_id=number,
            **settings,
        )
        entries = [
            services.SignupEntry(vk_user(number, n), f"Игрок {n}") for n in range(1, PLAYERS + 1)
        ]
        services.signups_create(game_id=game.pk, entries=entries)
        if start:
            services.game_deal_fixed(game_id=game.pk, assignment=deal_26(), by=Actor.gm("bench"))
            services.game_start(game_id=game.pk, by=Actor.gm("bench"))
    return BenchGame(number, game.pk, number)


def drop_pending_outbox() -> int:
    """Forget the messages setup queued (role cards, prompts…): the runs that follow measure
    only what their own events cause. Returns how many rows were dropped."""
    deleted, _ = Outbox.objects.filter(status=OutboxStatus.PENDING).delete()
    return deleted


# --- what players send --------------------------------------------------------------------------


def day_votes(living: list[int] | None = None) -> dict[int, int]:
    """Voter → target for a day every living player votes in and that ends in a tie (nobody is
    executed, so the same game can be played on)."""
    seats = sorted(living or range(1, PLAYERS + 1))
    a, b, rest = seats[0], seats[1], seats[2:]
    plan = {a: b, b: a}
    half = len(rest) // 2
    for i, n in enumerate(rest[: 2 * half]):
        plan[n] = a if i < half else b
    if len(rest) % 2:
        plan[rest[-1]] = rest[0]
    return plan


def vote_text(target: int) -> str:
    return f"голос {target}"


def night_messages() -> list[tuple[int, str]]:
    """(seat, private message) of Night 1: every mafia member names the shot (the last one
    stands), the commissar checks, the doctor heals, the maniac shoots, and the three items are
    used. Nobody dies: every kill aims at seat 12, whom the doctor and the book heal."""
    messages = [(seat, "выстрел 12") for seat in MAFIA]
    messages += [
        (COMMISSAR, "проверка 1"),
        (DOCTOR, "лечу 12"),
        (MANIAC, "выстрел 12"),
        (1, "часы 13"),
        (RED_BUTTON_HOLDER, "кнопка 12"),
        (BOOK_HOLDER, "книга 12"),
    ]
    return messages


def game_of(bench_game: BenchGame) -> Game:
    return Game.objects.get(pk=bench_game.game_id)
