"""Setting up the demo game, idempotently (``manage.py demo_seed``).

Each run moves the demo towards a running 26-player game and stops where it already is:

1. the GM account exists with the given password;
2. the local VK knows the demo's users (names from its generated Russian names);
3. a demo game exists — a new one (recruitment and game topics created in the board with
   the admin's user token, a spectator chat created by the community) when there is none, the
   last one has ended, or the local VK no longer has its topic;
4. its 26 players are signed up, the roles dealt, the game started (the services queue the
   roster, the role cards and the Day 1 prompts; the worker delivers them);
5. a running game whose open phase's deadline passed while the demo was stopped gets that
   phase extended by its usual length, so the players have time to act.

Everything goes through the game services and the VK API of the local server, as the panel
and the bot would do it.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import django_rq
from django.contrib.auth import get_user_model
from django.utils import timezone
from redis.exceptions import RedisError

from gameplay.models import Game, GameStatus, Phase, PhaseStatus, Seat, SeatStatus
from gameplay.rules import RoleCounts
from gameplay.services import game_deal, game_end, game_start, signup_create
from gameplay.services.common import current_phase
from gameplay.services.communities import community_record
from gameplay.services.deadlines import phase_extend
from gameplay.services.settings import game_open
from gameplay.services.spectators import spectator_chat_link
from outbox.queue import enqueue_delivery
from vkbot.pipeline import store_ts, stored_ts

from . import config
from .vk import LocalVkClient, VkCallError

logger = logging.getLogger(__name__)

#: A deadline closer than this when the demo starts counts as missed.
GRACE = timedelta(seconds=30)


class SeedError(Exception):
    """The demo cannot be set up (operator-facing, English)."""


@dataclass(frozen=True)
class SeedOptions:
    gm_user: str = "gm"
    gm_password: str = "gm"
    #: Phase lengths (the panel accepts 5 minutes at least).
    day_minutes: int = 5
    night_minutes: int = 5
    auto_publish: bool = False
    #: The deal's seed (None: a fresh random one); the browser test fixes it.
    seed: str | None = None
    #: Start a new demo game even if one is running.
    new_game: bool = False


@dataclass
class SeedReport:
    game: Game
    created: bool = False
    notes: list[str] = field(default_factory=list)


def ensure_gm(username: str, password: str) -> Any:
    """A staff superuser ``username`` with ``password`` (created or updated)."""
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=username)
    user.is_staff = user.is_superuser = user.is_active = True
    user.set_password(password)
    user.save()
    return user


def ensure_community(gm: Any) -> None:
    """The demo's community, connected, with the GM as its owner."""
    community_record(
        vk_id=config.GROUP_ID, name=config.GROUP_NAME, group_token=config.GROUP_TOKEN,
        user_token=config.USER_TOKEN, connected=True, by=gm,
    )


def seed(options: SeedOptions, vk: LocalVkClient, *, wait: float = 0.0) -> SeedReport:
    """Bring the demo game to life (see the module doc); ``wait``: seconds to wait for the
    local VK server and Redis to answer."""
    wait_for_servers(vk, wait)
    gm = ensure_gm(options.gm_user, options.gm_password)
    ensure_community(gm)
    register_users(vk)
    game = demo_game()
    notes: list[str] = []
    if game is not None and options.new_game:
        notes.append(end_game(game, gm, "Начинается новая демо-игра."))
        game = None
    if game is not None and not topic_exists(vk, game.topic_id):
        notes.append(end_game(
            game, gm, "Локальный VK потерял тему игры: демо-игра начата заново."))
        game = None
    created = game is None
    if game is None:
        game = create_game(options, vk, gm)
    if game.status == GameStatus.RECRUITING:
        sign_up_players(game, vk, gm)
        game_deal(game_id=game.pk, by=_by(gm))
        game.refresh_from_db()
    if game.status == GameStatus.DEALT:
        game_start(game_id=game.pk, by=_by(gm))
        game.refresh_from_db()
    elif not created:
        note = resume(game)
        if note:
            notes.append(note)
    # The bot's first poll starts here, not at the server's ts of that moment: whatever a
    # person does on the player page before the bot runs is not lost.
    if stored_ts(config.GROUP_ID) is None:
        store_ts(vk.control("stats")["longpoll_ts"], config.GROUP_ID)
    # Messages queued before the last stop wait in the database: have the worker drain them.
    enqueue_delivery()
    return SeedReport(game=game, created=created, notes=notes)


def wait_for_servers(vk: LocalVkClient, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not vk.reachable():
        if time.monotonic() >= deadline:
            raise SeedError(f"the local VK server at {vk.base_url} does not answer")
        time.sleep(0.2)
    while True:
        try:
            django_rq.get_connection("default").ping()
            return
        except RedisError as exc:
            if time.monotonic() >= deadline:
                raise SeedError(f"Redis does not answer: {exc}") from exc
            time.sleep(0.2)


def _by(gm: Any) -> str:
    return f"gm:{gm.get_username()}"


def demo_game() -> Game | None:
    """The latest demo game still in play (recruiting, dealt or running)."""
    return (
        Game.objects.filter(
            name=config.GAME_NAME,
            vk_group_id=config.GROUP_ID,
            status__in=[GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def register_users(vk: LocalVkClient) -> None:
    """Tell the local VK the community's users (idempotent)."""
    for user_id, first, last, sex in config.community_users():
        vk.control("users", {"id": user_id, "first_name": first, "last_name": last, "sex": sex})


def topic_exists(vk: LocalVkClient, topic_id: int | None) -> bool:
    if topic_id is None:
        return False
    try:
        vk.call("board.getComments", config.USER_TOKEN, group_id=config.GROUP_ID,
                topic_id=topic_id, count=1)
    except VkCallError as exc:
        if exc.code == 100:
            return False
        raise
    return True


def end_game(game: Game, gm: Any, reason: str) -> str:
    game_end(game_id=game.pk, by=_by(gm), reason=reason)
    return f"ended the previous demo game #{game.pk}: {reason}"


def create_game(options: SeedOptions, vk: LocalVkClient, gm: Any) -> Game:
    """A recruiting demo game with its own board topics and spectator chat."""
    name = config.GAME_NAME
    try:
        recruit = vk.call(
            "board.addTopic", config.USER_TOKEN, group_id=config.GROUP_ID, from_group=1,
            title=f"Набор в игру «{name}»",
            text=(f"Набор в игру «{name}» закрыт: все 26 мест заняты. Напишите «запас», "
                  "чтобы записаться в запас на замену."),
        )
        topic = vk.call(
            "board.addTopic", config.USER_TOKEN, group_id=config.GROUP_ID, from_group=1,
            title=f"Игра «{name}»",
            text=("Здесь идёт игра: днём голосуйте в этой теме («голос 5», «голос: Имя»), "
                  "здесь же ведущий публикует итоги дней и ночей."),
        )
        chat = vk.call("messages.createChat", config.GROUP_TOKEN, title=f"Зрители: {name}")
    except VkCallError as exc:
        raise SeedError(f"cannot prepare the demo's board and chat: {exc}") from exc
    game = game_open(
        name=name,
        counts=RoleCounts(),
        gm=gm,
        vk_group_id=config.GROUP_ID,
        recruit_topic_id=int(recruit),
        topic_id=int(topic),
        day_length=timedelta(minutes=options.day_minutes),
        night_length=timedelta(minutes=options.night_minutes),
        reminders=[1],
        auto_publish=options.auto_publish,
        seed=options.seed,
    )
    spectator_chat_link(game_id=game.pk, by=_by(gm), chat=int(chat["chat_id"]))
    return game


def sign_up_players(game: Game, vk: LocalVkClient, gm: Any) -> None:
    ids = config.player_ids()
    signed = set(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER).values_list(
            "vk_user_id", flat=True
        )
    )
    missing = [uid for uid in ids if uid not in signed]
    if not missing:
        return
    try:
        profiles = vk.call("users.get", config.GROUP_TOKEN,
                           user_ids=",".join(map(str, missing)), fields="sex")
    except VkCallError as exc:
        raise SeedError(f"cannot read the players' names: {exc}") from exc
    names = {p["id"]: f"{p['first_name']} {p['last_name']}".strip() for p in profiles}
    sexes = {p["id"]: p.get("sex", 0) for p in profiles}
    for uid in missing:
        signup_create(game_id=game.pk, vk_user_id=uid, name=names.get(uid, f"id{uid}"),
                      by=_by(gm), sex=sexes.get(uid, 0))


def resume(game: Game) -> str | None:
    """Give the players of a running game time again if its open phase's deadline passed
    while the demo was stopped."""
    if game.status != GameStatus.RUNNING:
        return None
    phase = current_phase(game)
    if phase is None or phase.status != PhaseStatus.OPEN or phase.deadline is None:
        return None
    if phase.deadline > timezone.now() + GRACE:
        return None
    length = game.day_length if phase.kind == "day" else game.night_length
    minutes = max(1, math.ceil((length or timedelta(minutes=3)).total_seconds() / 60))
    phase_extend(game_id=game.pk, by="system", minutes=minutes)
    return f"{phase} was overdue while the demo was stopped: extended by {minutes} min"


def describe(game: Game) -> str:
    """One line about where the game stands (for the operator)."""
    game.refresh_from_db()
    phase: Phase | None = current_phase(game)
    if game.status != GameStatus.RUNNING or phase is None:
        return f"«{game.name}» (#{game.pk}): {game.get_status_display()}"
    if phase.status == PhaseStatus.REVIEW:
        where = f"{phase} closed, waiting for the GM to publish it"
    elif phase.deadline is not None:
        local = timezone.localtime(phase.deadline)
        where = f"{phase} until {local:%H:%M:%S}"
    else:
        where = f"{phase}, no deadline"
    return f"«{game.name}» (#{game.pk}): {where}"
