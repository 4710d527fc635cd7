"""What the theme-text tests share: the texts seen in games that the unbounded language let
through, a game to store them in, and a guard against the memory they would take."""

from __future__ import annotations

import resource
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from gameplay import services
from gameplay.models import Game
from gameplay.rules import Role, RoleCounts
from tests.gameplay.deadline_support import T0
from tests.gameplay.factories import community_id

#: Seen in a game: a 265-character end-of-game text, eight loops over the seats one inside
#: another (seats⁸ iterations: 5.7 million for seven players).
EIGHT_LOOPS = (
    "{% for a in seats %}{% for b in seats %}{% for c in seats %}{% for d in seats %}"
    "{% for e in seats %}{% for f in seats %}{% for g in seats %}{% for h in seats %}"
    "."
    "{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}"
    "{% endfor %}"
)
#: Seen in «Начало дня»: a filter that allocates what its argument asks (4.2 GB).
CENTER = 'Утро. {{ number|center:"999999999" }}'


@contextmanager
def address_space_within(extra: int = 1 << 30) -> Iterator[None]:
    """Fail with a MemoryError, rather than swap the machine, should the code under test
    allocate more than ``extra`` bytes (as the unbounded language did)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm", encoding="ascii") as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    cap = used + extra if hard == resource.RLIM_INFINITY else min(hard, used + extra)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def seven_players(texts: dict[str, str], *, start: bool = True, **settings: Any) -> Game:
    """A game of seven, dealt (seat 1 the only mafia, six civilians) and started at ``T0``;
    ``texts`` stored as the game's own theme texts as they are, before the start (as a save
    before the GM language left them)."""
    game = services.game_create(
        name="Тексты",
        counts=RoleCounts(mafia=1, commissar=0, doctor=0, maniac=0, civilian=6),
        topic_id=660_001,
        vk_group_id=community_id(),
        day_length=timedelta(hours=24),
        **settings,
    )
    entries = [services.SignupEntry(66_000 + n, f"Игрок {n}") for n in range(1, 8)]
    services.signups_create(game_id=game.pk, entries=entries)
    roles = {n: (Role.MAFIA if n == 1 else Role.CIVILIAN, None) for n in range(1, 8)}
    services.game_deal_fixed(game_id=game.pk, assignment=roles)
    Game.objects.filter(pk=game.pk).update(theme_texts=texts)
    if start:
        services.game_start(game_id=game.pk, now=T0)
    game.refresh_from_db()
    return game
