"""Builders for the deadline tests: running games made through the services themselves.

Eight players with a fixed deal: seats 1–2 mafia, 3 commissar, 4 doctor, 5 maniac, 6–8
civilians; seat ``n`` has VK id ``VK_BASE + n``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from gameplay import services
from gameplay.models import Game, GameEvent, Outbox, Phase, PhaseKind
from gameplay.rules import Role, RoleCounts
from tests.gameplay.factories import community_id

VK_BASE = 7_000
COUNTS = RoleCounts(mafia=2, commissar=1, doctor=1, maniac=1, civilian=3)
ROLES = {
    1: Role.MAFIA,
    2: Role.MAFIA,
    3: Role.COMMISSAR,
    4: Role.DOCTOR,
    5: Role.MANIAC,
    6: Role.CIVILIAN,
    7: Role.CIVILIAN,
    8: Role.CIVILIAN,
}
MAFIA, COMMISSAR, DOCTOR, MANIAC = (1, 2), 3, 4, 5

#: A fixed "now" for the service tests (the clock is an argument everywhere).
T0 = datetime(2031, 3, 14, 9, 0, tzinfo=UTC)

_topics = itertools.count(990_001)


def vk(seat: int) -> int:
    return VK_BASE + seat


def started_game(
    *,
    now: datetime = T0,
    day_length: timedelta = timedelta(hours=24),
    night_length: timedelta = timedelta(hours=12),
    auto_publish: bool = False,
    reminders: list[Any] | None = None,
    name: str = "Дедлайны",
) -> Game:
    """A running game on Day 1, opened at ``now``."""
    settings: dict[str, Any] = {
        "day_length": day_length,
        "night_length": night_length,
        "auto_publish": auto_publish,
        "topic_id": next(_topics),
        "vk_group_id": community_id(),
    }
    if reminders is not None:
        settings["reminders"] = reminders
    game = services.game_create(name=name, counts=COUNTS, **settings)
    entries = [services.SignupEntry(vk(seat), f"Игрок {seat}") for seat in ROLES]
    services.signups_create(game_id=game.pk, entries=entries)
    services.game_deal_fixed(
        game_id=game.pk, assignment={n: (role, None) for n, role in ROLES.items()}
    )
    services.game_start(game_id=game.pk, now=now)
    game.refresh_from_db()
    return game


def phase(game: Game, kind: str, number: int) -> Phase:
    return Phase.objects.get(game=game, kind=kind, number=number)


def day(game: Game, number: int = 1) -> Phase:
    return phase(game, PhaseKind.DAY, number)


def night(game: Game, number: int = 1) -> Phase:
    return phase(game, PhaseKind.NIGHT, number)


def events(game: Game, kind: str) -> list[GameEvent]:
    return list(GameEvent.objects.filter(game=game, kind=kind).order_by("seq"))


def reminders_sent(game: Game) -> list[Outbox]:
    return list(Outbox.objects.filter(game=game, kind="reminder").order_by("id"))


def reminded_vk_ids(game: Game) -> list[set[int]]:
    """Recipients of each reminder sent in the game, oldest first."""
    return [set(row.peer_ids) for row in reminders_sent(game)]


def vote_all(game: Game, *, except_seats: tuple[int, ...] = (), target: int = 6) -> None:
    """Every living player votes (for ``target``, or for seat 7 when they are ``target``)."""
    for seat in ROLES:
        if seat in except_seats:
            continue
        services.vote_submit(game_id=game.pk, voter=seat, target=target if seat != target else 7)
