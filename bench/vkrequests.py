"""VK API requests per phase of a 26-player game: the project's delivery, the naive one, and
the lower bound (:mod:`bench.bound`).

Two identical games are played side by side, phase by phase; after each phase the messages
it queued are drained — one game's by the project's delivery, the other's by the naive one —
against a local VK server that counts the requests. A phase is applied as a burst (every
player acts, then the GM or the deadline closes it), then drained: the situation of a busy
game, where a phase's messages wait for the worker together. Player events go through the
real ingestion pipeline (``vkbot.pipeline.apply_update``); the GM's steps call the services
as the panel does.

Phases: ``start`` (the deal and the start: roster, role cards, Day 1 and its vote buttons),
``day`` (all 26 vote — odd seats in the board, even seats by private message, which the bot
posts in the board — then the day closes: tally, Night 1 and its action buttons), ``night``
(all 12 night actions by private message, then the night closes for review) and
``publication`` (the GM publishes: the night's result, Day 2 and its buttons).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from django.test.utils import override_settings

from gameplay import services
from gameplay.models import Actor, Outbox, OutboxStatus
from vkbot.delivery.drain import Drainer
from vkbot.pipeline import LONGPOLL, apply_update

from .bound import calls_needed, requests_bound
from .e2e import DELIVERY_METHODS, make_vk
from .env import Databases, Services, flush_redis
from .games import BenchGame, create_game, day_votes, deal_26, night_messages, vote_text
from .naive import NaiveDrainer

PHASES = ("start", "day", "night", "publication")
MODES = ("project", "naive")


@dataclass
class PhaseRequests:
    phase: str
    rows: int
    calls: dict[str, int]
    bound: int
    project: int
    naive: int
    detail: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Table:
    """The two games, the local VK, and what was counted."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def apply(self, update: dict[str, Any]) -> None:
        apply_update(update, source=LONGPOLL)

    def start(self, game: BenchGame) -> None:
        services.game_deal_fixed(game_id=game.game_id, assignment=deal_26(), by=Actor.gm("bench"))
        services.game_start(game_id=game.game_id, by=Actor.gm("bench"))

    def day(self, game: BenchGame) -> None:
        for voter, target in sorted(day_votes().items()):
            if voter % 2:
                update = self.state.inject_board_post(
                    game.vk(voter), game.topic_id, vote_text(target)
                )
            else:
                update = self.state.inject_message(game.vk(voter), vote_text(target))
            self.apply(update)
        services.day_close(game_id=game.game_id, by=Actor.gm("bench"))

    def night(self, game: BenchGame) -> None:
        for seat, text in night_messages():
            self.apply(self.state.inject_message(game.vk(seat), text))
        services.night_close(game_id=game.game_id, by=Actor.gm("bench"))

    def publication(self, game: BenchGame) -> None:
        services.night_publish(game_id=game.game_id, by=Actor.gm("bench"))


def _last_seq(state: Any) -> int:
    with state.lock:
        return state.log.records[-1].seq if state.log.records else 0


def _requests(state: Any, since: int) -> dict[str, int]:
    counted: dict[str, int] = {}
    for record in state.calls(since=since, include_inner=False):
        if record.method in DELIVERY_METHODS:
            counted[record.token_kind] = counted.get(record.token_kind, 0) + 1
    return counted


def _drain(drainer_type: type[Drainer]) -> None:
    with drainer_type() as drainer:
        drainer.run(max_seconds=120.0, wait_up_to=3.0)


def measure(services_: Services, databases: Databases) -> list[PhaseRequests]:
    from localvk import ServerThread

    databases.restore("empty")
    flush_redis(services_)
    state = make_vk(len(MODES))
    results: list[PhaseRequests] = []
    with (
        ServerThread(state) as server,
        override_settings(VK_API_URL=server.api_url, OUTBOX_DELIVERY_ENABLED=False),
    ):
        table = Table(state)
        games = {mode: create_game(n, start=False) for n, mode in enumerate(MODES, start=1)}
        Outbox.objects.all().delete()  # sign-up confirmations, if any: not a phase
        drainers: dict[str, type[Drainer]] = {"project": Drainer, "naive": NaiveDrainer}
        for phase in PHASES:
            step: Callable[[BenchGame], None] = getattr(table, phase)
            counted: dict[str, dict[str, int]] = {}
            rows: list[Outbox] = []
            for mode in MODES:
                last = Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0
                step(games[mode])
                mode_rows = list(Outbox.objects.filter(pk__gt=last).order_by("id"))
                if mode == "project":
                    rows = mode_rows
                since = _last_seq(state)
                _drain(drainers[mode])
                counted[mode] = _requests(state, since)
                stuck = Outbox.objects.exclude(status=OutboxStatus.SENT).count()
                if stuck:
                    raise RuntimeError(f"{mode} delivery left {stuck} rows unsent in {phase}")
            calls = calls_needed(rows)
            results.append(
                PhaseRequests(
                    phase=phase,
                    rows=len(rows),
                    calls=calls,
                    bound=sum(requests_bound(calls).values()),
                    project=sum(counted["project"].values()),
                    naive=sum(counted["naive"].values()),
                    detail={"bound": requests_bound(calls), **counted},
                )
            )
    return results
