"""The simulated players' loop: read the local VK's feed (every private message and board
comment, like the players' phones), keep each player's knowledge, plan a move for every
prompt at a human pace (within the phase's deadline), and make it through the player page's
API — the same injection paths as a person's clicks, so the bot gets them by long poll.

A player a person has taken over on the player page is left alone. After a restart the loop
reads the whole history first and acts only on the prompts of the current phases that were
not answered yet.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp

from gameplay.buttons import NIGHT_ACTS, VOTE

from . import brain
from .knowledge import Me, Table, buttons_of, deadline_of, is_confirmation

logger = logging.getLogger("demo.players")


class SandboxClient:
    """The player page's JSON API (``/sandbox/api/``) of the local VK, for one community
    (``group_id``; None: the server's default one)."""

    def __init__(
        self, base_url: str, session: aiohttp.ClientSession, *, group_id: int | None = None
    ) -> None:
        self.api = base_url.rstrip("/") + "/sandbox/api/"
        self.session = session
        self.group_id = group_id

    async def _json(self, method: str, path: str, body: Any = None) -> Any:
        params = {} if self.group_id is None else {"group_id": str(self.group_id)}
        async with self.session.request(
            method, self.api + path, json=body, params=params
        ) as response:
            data = await response.json()
            if response.status != 200:
                raise SandboxRefusal(str(data.get("error") if isinstance(data, dict) else data))
            return data

    async def feed(
        self, after_message: int, after_comment: int, after_edit: int = 0
    ) -> dict[str, Any]:
        return await self._json(
            "GET",
            f"feed?after_message={after_message}&after_comment={after_comment}"
            f"&after_edit={after_edit}",
        )

    async def press(self, user_id: int, message_id: int, row: int, column: int) -> Any:
        return await self._json(
            "POST",
            f"users/{user_id}/press",
            {"message_id": message_id, "row": row, "column": column},
        )

    async def send(self, user_id: int, text: str) -> Any:
        return await self._json("POST", f"users/{user_id}/send", {"text": text})

    async def post(self, user_id: int, topic_id: int, text: str) -> Any:
        return await self._json(
            "POST", f"users/{user_id}/board", {"topic_id": topic_id, "text": text}
        )


class SandboxRefusal(Exception):
    pass


@dataclass(order=True)
class Plan:
    due: float
    seq: int
    user_id: int = field(compare=False)
    kind: str = field(compare=False)  # "vote", "night", "chatter", "talk"
    phase: int = field(compare=False, default=0)
    day: int = field(compare=False, default=0)
    message: dict[str, Any] | None = field(compare=False, default=None)
    followup: bool = field(compare=False, default=False)


@dataclass(frozen=True)
class Pace:
    """Seconds between a prompt and the move: at least ``min_delay``, at most ``max_delay``,
    and well before the deadline."""

    min_delay: float = 3.0
    max_delay: float = 150.0

    def delay(self, rng: random.Random, seconds_left: float | None) -> float:
        upper = self.max_delay
        if seconds_left is not None:
            upper = min(upper, seconds_left * 0.6 - 10)
        upper = max(upper, self.min_delay)
        return rng.uniform(self.min_delay, upper)

    def followup(self, rng: random.Random) -> float:
        return rng.uniform(min(1.0, self.min_delay), min(3.0, max(self.min_delay, 1.0)))


class Players:
    """Every simulated player of the community."""

    def __init__(
        self,
        client: SandboxClient,
        *,
        rng: random.Random | None = None,
        pace: Pace | None = None,
        time_zone: str = "Europe/Moscow",
        clock: Callable[[], float] = time.monotonic,
        label: str = "",
    ) -> None:
        self.client = client
        #: Put before each logged move (which community's game it is in).
        self.label = label
        self.rng = rng or random.Random()
        self.pace = pace or Pace()
        self.time_zone = time_zone
        self.clock = clock
        self.me: dict[int, Me] = {}
        self.table = Table()
        self.taken: set[int] = set()
        self.cursor = {"message": 0, "comment": 0}
        self.plans: list[Plan] = []
        self._seq = itertools.count()
        #: The phase of the latest prompt each player got, and prompts already answered.
        self.latest_phase: dict[int, int] = {}
        self.answered: set[tuple[int, int]] = set()
        #: A button was pressed that asks for a page (commissar's choice, role strike target).
        self.awaiting: dict[int, int] = {}
        self.moves = 0

    # --- reading -------------------------------------------------------------------------

    async def catch_up(self) -> None:
        """Read the whole history without acting, then plan the open prompts."""
        pending: list[dict[str, Any]] = []
        while True:
            before = dict(self.cursor)
            feed = await self.client.feed(
                self.cursor["message"], self.cursor["comment"], self.cursor.get("edit", 0)
            )
            pending += self.ingest(feed, plan=False)
            if self.cursor == before:
                break
        for message in pending:
            user = message["peer_id"]
            phase = self._phase_of(message)
            if phase == self.latest_phase.get(user) and (user, phase) not in self.answered:
                self._plan_prompt(message, followup=False)

    async def poll(self) -> None:
        feed = await self.client.feed(
            self.cursor["message"], self.cursor["comment"], self.cursor.get("edit", 0)
        )
        self.ingest(feed, plan=True)

    def ingest(self, feed: dict[str, Any], *, plan: bool) -> list[dict[str, Any]]:
        """Take in a feed page; returns the prompts seen (planned already when ``plan``)."""
        self.taken = set(feed.get("taken_over") or [])
        for comment in feed.get("comments") or []:
            if comment.get("from_community"):
                self.table.read_board(int(comment["topic_id"]), str(comment.get("text") or ""))
        prompts = []
        for message in feed.get("messages") or []:
            if not message.get("from_community"):
                continue
            user = int(message["peer_id"])
            me = self.me.setdefault(user, Me(user))
            text = str(message.get("text") or "")
            me.read_private(text)
            if is_confirmation(text) and user in self.latest_phase:
                self.answered.add((user, self.latest_phase[user]))
            phase = self._phase_of(message)
            if not phase:
                continue
            self.latest_phase[user] = phase
            prompts.append(message)
            if plan:
                followup = self.awaiting.pop(user, None) == phase
                self._plan_prompt(message, followup=followup)
        self.cursor = dict(feed.get("cursor") or self.cursor)
        return prompts

    @staticmethod
    def _phase_of(message: dict[str, Any]) -> int:
        for button in buttons_of(message):
            if (
                button.payload is not None
                and button.payload.phase
                and (button.payload.action == VOTE or button.payload.action in NIGHT_ACTS)
            ):
                return button.payload.phase
        return 0

    # --- planning ------------------------------------------------------------------------

    def _schedule(self, delay: float, user: int, kind: str, **fields: Any) -> None:
        heapq.heappush(
            self.plans, Plan(self.clock() + delay, next(self._seq), user, kind, **fields)
        )

    def _plan_prompt(self, message: dict[str, Any], *, followup: bool) -> None:
        user = int(message["peer_id"])
        me = self.me.get(user)
        if me is None or not me.playing:
            return
        buttons = buttons_of(message)
        acts = brain.acts_in(buttons)
        phase = self._phase_of(message)
        deadline = deadline_of(str(message.get("text") or ""), self.time_zone, datetime.now(UTC))
        left = None if deadline is None else (deadline - datetime.now(UTC)).total_seconds()
        delay = self.pace.followup(self.rng) if followup else self.pace.delay(self.rng, left)
        if VOTE in acts:
            day = self.table.day
            self._schedule(
                delay, user, "vote", phase=phase, day=day, message=message, followup=followup
            )
            if not followup and self.rng.random() < 0.15:
                self._schedule(
                    self.pace.delay(self.rng, left), user, "chatter", phase=phase, day=day
                )
        elif acts & NIGHT_ACTS:
            if (
                not followup
                and "mafia_shot" in acts
                and brain.is_leader(me, self.table)
                and self.rng.random() < 0.3
            ):
                self._schedule(delay * 0.5, user, "talk", phase=phase)
            self._schedule(delay, user, "night", phase=phase, message=message, followup=followup)

    # --- acting --------------------------------------------------------------------------

    async def run_due(self) -> int:
        """Make every move that is due; returns how many were made."""
        made = 0
        while self.plans and self.plans[0].due <= self.clock():
            plan = heapq.heappop(self.plans)
            try:
                if await self._execute(plan):
                    made += 1
            except (TimeoutError, aiohttp.ClientError, SandboxRefusal) as exc:
                logger.warning("player id%s could not act: %s", plan.user_id, exc)
        self.moves += made
        return made

    def _stale(self, plan: Plan, me: Me) -> bool:
        if plan.user_id in self.taken or not me.playing or self.table.over:
            return True
        if plan.phase and self.latest_phase.get(plan.user_id) != plan.phase:
            return True
        return plan.kind in ("vote", "chatter") and plan.day in self.table.closed_days

    async def _execute(self, plan: Plan) -> bool:
        me = self.me.get(plan.user_id)
        if me is None or self._stale(plan, me):
            return False
        buttons = buttons_of(plan.message) if plan.message else []
        if plan.kind == "vote":
            move = brain.vote_move(me, self.table, buttons, plan.day, self.rng)
        elif plan.kind == "night":
            move = brain.night_move(me, self.table, buttons, self.rng, followup=plan.followup)
        elif plan.kind == "chatter":
            move = brain.chatter(me, self.table, self.rng)
        else:
            move = brain.mafia_talk(me, self.table, self.rng)
        if move is None:
            return False
        await self._make(plan, me, move)
        if plan.kind == "vote" and not plan.followup and self.rng.random() < 0.1:
            self._schedule(
                self.pace.delay(self.rng, None),
                plan.user_id,
                "vote",
                phase=plan.phase,
                day=plan.day,
                message=plan.message,
                followup=True,
            )
        return True

    async def _make(self, plan: Plan, me: Me, move: brain.Move) -> None:
        who = f"{self.label}№{me.number} {self.table.seats.get(me.number or 0, f'id{me.user_id}')}"
        public = plan.kind in ("vote", "chatter")
        if isinstance(move, brain.Press):
            assert plan.message is not None
            await self.client.press(me.user_id, int(plan.message["id"]), move.row, move.column)
            button = buttons_of(plan.message)
            pressed = next(
                (b for b in button if (b.row, b.column) == (move.row, move.column)), None
            )
            if (
                pressed is not None
                and pressed.payload is not None
                and (
                    pressed.payload.target is None
                    or (pressed.payload.action == "role_strike" and pressed.payload.guess is None)
                )
            ):
                self.awaiting[me.user_id] = plan.phase  # a page of targets or roles follows
        elif isinstance(move, brain.Write):
            await self.client.send(me.user_id, move.text)
        else:
            await self.client.post(me.user_id, move.topic_id, move.text)
        what = getattr(move, "what", None) or getattr(move, "text", "")
        if public:
            logger.info("%s: %s", who, what)
        else:
            logger.debug("%s: %s", who, what)

    # --- the loop ------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, interval: float = 1.0) -> None:
        while not stop.is_set():
            try:
                await self.catch_up()
                break
            except (TimeoutError, aiohttp.ClientError, SandboxRefusal, ValueError) as exc:
                logger.warning("local VK not reachable yet (%s); retrying", exc)
                await _sleep(stop, 2.0)
        playing = sum(m.playing for m in self.me.values())
        logger.info("%scaught up: %d players with a role so far", self.label, playing)
        while not stop.is_set():
            try:
                await self.poll()
                await self.run_due()
            except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
                logger.warning("feed failed (%s); retrying", exc)
                await _sleep(stop, 2.0)
                continue
            await _sleep(stop, interval)


async def _sleep(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass
