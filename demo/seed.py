"""Setting up the demo games, idempotently (``manage.py demo_seed``).

Each run moves the demo towards a running game in each of its communities (the 26-player
«Машина времени» and a 12-player «Классика», :data:`demo.config.GAME_COMMUNITIES`) and stops
where it already is:

1. the GM account exists with the given password;
2. the local VK hosts the demo's communities (the missing ones are created; the one nobody
   connected, :data:`demo.config.CONNECT`, with its token lacking ``manage`` too) and knows the
   demo's users (names from its generated Russian names);
3. each game community is a connected ``Community`` row with the GM as its owner
   (:data:`~demo.config.CONNECT` is not: a person connects it in the panel);
4. in each, a demo game exists — a new one (recruitment and game topics created in the board with
   the admin's user token, a spectator chat created by the community) when there is none, the
   last one has ended, or the local VK no longer has its topic;
5. its players are signed up, the roles dealt, the game started (the services queue the
   roster, the role cards and the Day 1 prompts; the worker delivers them);
6. a running game whose open phase's deadline passed while the demo was stopped gets that
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

from gameplay.models import Actor, Game, GameStatus, Phase, PhaseStatus, Seat, SeatStatus
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
class GameReport:
    """What the seed did with one community's demo game."""

    community: config.DemoCommunity
    game: Game
    created: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class SeedReport:
    #: One per :data:`demo.config.GAME_COMMUNITIES`, in that order.
    games: list[GameReport]

    @property
    def game(self) -> Game:
        """The first (the environment's) community's game."""
        return self.games[0].game

    @property
    def created(self) -> bool:
        return self.games[0].created

    @property
    def notes(self) -> list[str]:
        return [note for report in self.games for note in report.notes]


def ensure_gm(username: str, password: str) -> Any:
    """A staff superuser ``username`` with ``password`` (created or updated)."""
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=username)
    user.is_staff = user.is_superuser = user.is_active = True
    user.set_password(password)
    user.save()
    return user


def ensure_local_communities(vk: LocalVkClient) -> None:
    """The demo's communities in the local VK (``make demo`` declares them; a local VK
    started otherwise gets the missing ones), and the connectable one's token without
    ``manage``."""
    from localvk.recording import token_fingerprint  # see config.community_users

    hosted = {int(c["group_id"]): c for c in vk.communities()}
    for community in config.COMMUNITIES:
        if community.group_id not in hosted:
            hosted[community.group_id] = vk.create_community(
                community.group_id,
                community.group_token,
                user_tokens=[community.user_token],
                name=community.name,
            )
    tokens = {t["token"] for t in hosted[config.CONNECT.group_id]["group_tokens"]}
    if token_fingerprint(config.CONNECT_WEAK_TOKEN) not in tokens:
        vk.add_token(
            config.CONNECT.group_id,
            config.CONNECT_WEAK_TOKEN,
            scopes=list(config.CONNECT_WEAK_SCOPES),
        )


def ensure_community(gm: Any, community: config.DemoCommunity = config.MAIN) -> None:
    """A demo community, connected, with the GM as its owner."""
    community_record(
        vk_id=community.group_id,
        name=community.name,
        group_token=community.group_token,
        user_token=community.user_token,
        connected=True,
        by=gm,
    )


def seed(options: SeedOptions, vk: LocalVkClient, *, wait: float = 0.0) -> SeedReport:
    """Bring the demo games to life (see the module doc); ``wait``: seconds to wait for the
    local VK server and Redis to answer."""
    wait_for_servers(vk, wait)
    gm = ensure_gm(options.gm_user, options.gm_password)
    ensure_local_communities(vk)
    register_users(vk)
    reports = []
    for community in config.GAME_COMMUNITIES:
        ensure_community(gm, community)
        reports.append(seed_game(options, vk, gm, community))
        # The bot's first poll starts here, not at the server's ts of that moment: whatever
        # a person does on the player page before the bot runs is not lost.
        if stored_ts(community.group_id) is None:
            ts = vk.control("stats", group_id=community.group_id)["longpoll_ts"]
            store_ts(ts, community.group_id)
    # Messages queued before the last stop wait in the database: have the worker drain them.
    enqueue_delivery()
    return SeedReport(games=reports)


def seed_game(
    options: SeedOptions, vk: LocalVkClient, gm: Any, community: config.DemoCommunity
) -> GameReport:
    """``community``'s demo game, created, signed up, dealt and started, or resumed."""
    game = demo_game(community)
    notes: list[str] = []
    if game is not None and options.new_game:
        notes.append(end_game(game, gm, "Начинается новая демо-игра."))
        game = None
    if game is not None and not topic_exists(vk, community, game.topic_id):
        notes.append(end_game(game, gm, "Локальный VK потерял тему игры: демо-игра начата заново."))
        game = None
    created = game is None
    if game is None:
        game = create_game(options, vk, gm, community)
    if game.status == GameStatus.RECRUITING:
        sign_up_players(game, vk, gm, community)
        game_deal(game_id=game.pk, by=_by(gm))
        game.refresh_from_db()
    if game.status == GameStatus.DEALT:
        game_start(game_id=game.pk, by=_by(gm))
        game.refresh_from_db()
    elif not created:
        note = resume(game)
        if note:
            notes.append(note)
    return GameReport(community=community, game=game, created=created, notes=notes)


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


def _by(gm: Any) -> Actor:
    return Actor.gm(gm)


def demo_game(community: config.DemoCommunity = config.MAIN) -> Game | None:
    """The latest demo game of ``community`` still in play (recruiting, dealt or running)."""
    return (
        Game.objects.filter(
            name=community.game_name,
            vk_group_id=community.group_id,
            status__in=[GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def register_users(vk: LocalVkClient) -> None:
    """Tell the local VK the demo's users (idempotent; VK's people are every community's)."""
    for user_id, first, last, sex in config.community_users():
        vk.control("users", {"id": user_id, "first_name": first, "last_name": last, "sex": sex})


def topic_exists(vk: LocalVkClient, community: config.DemoCommunity, topic_id: int | None) -> bool:
    if topic_id is None:
        return False
    try:
        vk.call(
            "board.getComments",
            community.user_token,
            group_id=community.group_id,
            topic_id=topic_id,
            count=1,
        )
    except VkCallError as exc:
        if exc.code == 100:
            return False
        raise
    return True


def end_game(game: Game, gm: Any, reason: str) -> str:
    game_end(game_id=game.pk, by=_by(gm), reason=reason)
    return f"ended the previous demo game #{game.pk}: {reason}"


def create_game(
    options: SeedOptions, vk: LocalVkClient, gm: Any, community: config.DemoCommunity
) -> Game:
    """A recruiting demo game with its own board topics and spectator chat."""
    name = community.game_name
    group_id, user_token = community.group_id, community.user_token
    try:
        recruit = vk.call(
            "board.addTopic",
            user_token,
            group_id=group_id,
            from_group=1,
            title=f"Набор в игру «{name}»",
            text=(
                f"Набор в игру «{name}» закрыт: все {community.players} мест заняты. "
                "Напишите «запас», чтобы записаться в запас на замену."
            ),
        )
        topic = vk.call(
            "board.addTopic",
            user_token,
            group_id=group_id,
            from_group=1,
            title=f"Игра «{name}»",
            text=(
                "Здесь идёт игра: днём голосуйте в этой теме («голос 5», «голос: Имя»), "
                "здесь же ведущий публикует итоги дней и ночей."
            ),
        )
        chat = vk.call("messages.createChat", community.group_token, title=f"Зрители: {name}")
    except VkCallError as exc:
        raise SeedError(f"cannot prepare the demo's board and chat: {exc}") from exc
    game = game_open(
        name=name,
        counts=RoleCounts.default_for(community.players),
        gm=gm,
        vk_group_id=group_id,
        theme=community.theme,
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


def sign_up_players(
    game: Game, vk: LocalVkClient, gm: Any, community: config.DemoCommunity
) -> None:
    ids = config.player_ids(community)
    signed = set(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER).values_list(
            "vk_user_id", flat=True
        )
    )
    missing = [uid for uid in ids if uid not in signed]
    if not missing:
        return
    try:
        profiles = vk.call(
            "users.get", community.group_token, user_ids=",".join(map(str, missing)), fields="sex"
        )
    except VkCallError as exc:
        raise SeedError(f"cannot read the players' names: {exc}") from exc
    names = {p["id"]: f"{p['first_name']} {p['last_name']}".strip() for p in profiles}
    sexes = {p["id"]: p.get("sex", 0) for p in profiles}
    for uid in missing:
        signup_create(
            game_id=game.pk,
            vk_user_id=uid,
            name=names.get(uid, f"id{uid}"),
            by=_by(gm),
            sex=sexes.get(uid, 0),
        )


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
    phase_extend(game_id=game.pk, by=Actor.BOT, minutes=minutes)
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
