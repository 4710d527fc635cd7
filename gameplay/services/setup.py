"""Creating a game and starting it (the rounds of the deal and the deal: :mod:`.deal`;
sign-up and withdrawal: :mod:`.signup`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from gameplay import themes
from gameplay.buttons import menu_keyboard
from gameplay.messages import Person, render
from gameplay.models import ACTIVE_STATUSES, Actor, DealRound, EventKind, Game, GameStatus
from gameplay.refusals import (
    AlreadyRunning,
    GameNameMissing,
    NotDealtYet,
    SpectatorChatTaken,
    TopicTaken,
)
from gameplay.rules import RoleCounts
from gameplay.rules.errors import SetupError

from .common import (
    current_phase,
    lock_game,
    log_event,
    message_rows,
    now_or,
    players,
    post_board,
    queue_outbox,
    role_card_text,
)
from .communities import community_of_new_game
from .deal import open_round
from .phases import day_open_locked


def check_vk_tenancy(*, game: Game) -> None:
    """Refuse (``SetupError``, in Russian) VK links of ``game`` that belong to another
    unfinished game of its community (topic ids and chat peer ids are a community's own): a
    topic is one game's sign-up or game topic, a spectator chat one game's chat, until that
    game finishes. The database holds the same for each column on its own (partial unique
    constraints); a topic used as one game's sign-up topic and another's game topic is caught
    here only."""
    others = Game.objects.filter(vk_group_id=game.vk_group_id, status__in=ACTIVE_STATUSES)
    if game.pk is not None:
        others = others.exclude(pk=game.pk)
    topics = {t for t in (game.recruit_topic_id, game.topic_id) if t}
    if topics and others.filter(Q(topic_id__in=topics) | Q(recruit_topic_id__in=topics)).exists():
        raise TopicTaken()
    chat = game.spectator_chat_id
    if chat and others.filter(spectator_chat_id=chat).exists():
        raise SpectatorChatTaken()


def tenancy_refusal(*, error: IntegrityError) -> SetupError:
    """The refusal for a save that a tenancy constraint stopped (a race past the check)."""
    return SpectatorChatTaken() if "spectator_chat" in str(error) else TopicTaken()


@transaction.atomic
def game_create(
    *,
    name: str,
    counts: RoleCounts | None = None,
    gm: Any = None,
    by: Actor = Actor.BOT,
    seed: str | None = None,
    **settings: Any,
) -> Game:
    """Create a game in recruitment. ``settings`` are Game fields (phase lengths, VK ids, …);
    its community is ``vk_group_id``, by default the environment's (``community_of_new_game``).

    Round 1 of the deal opens with it: the server draws the seed (``seed`` only for tests and
    the demo; the panel never passes one) and its commitment is posted in the board."""
    counts = counts or RoleCounts()
    counts.validate()
    name = (name or "").strip()
    if not name:
        raise GameNameMissing()
    settings.setdefault("reminders", [180, 60])
    settings["vk_group_id"] = community_of_new_game(vk_group_id=settings.get("vk_group_id"))
    game = Game(
        name=name[:200],
        mafia_count=counts.mafia,
        commissar_count=counts.commissar,
        doctor_count=counts.doctor,
        maniac_count=counts.maniac,
        civilian_count=counts.civilian,
        **settings,
    )
    check_vk_tenancy(game=game)
    try:
        with transaction.atomic():
            game.save()
    except IntegrityError as error:
        raise tenancy_refusal(error=error) from None
    if gm is not None:
        game.gms.add(gm)
    log_event(game, EventKind.GAME_CREATED, by=by, counts=counts.as_dict(), name=game.name)
    open_round(game=game, by=by, seed=seed)
    return game


@transaction.atomic
def game_start(*, game_id: int, by: Actor = Actor.BOT, now: datetime | None = None) -> Game:
    """Start a dealt game: roster and commitment in the board, role cards, Day 1 opens."""
    game = lock_game(game_id=game_id)
    now = now_or(now=now)  # after the lock: the moment of the write
    if game.status != GameStatus.DEALT:
        raise NotDealtYet()
    if current_phase(game) is not None:  # pragma: no cover - guarded by the status
        raise AlreadyRunning()
    seats = players(game)
    game.status = GameStatus.RUNNING
    game.started_at = now
    game.save(update_fields=["status", "started_at"])
    log_event(game, EventKind.GAME_STARTED, by=by, commitment=game.commitment, players=len(seats))
    rounds = [(r.number, r.commitment) for r in DealRound.objects.filter(game=game)]
    post_board(
        game=game,
        text=render(
            "board/roster",
            theme=themes.of(game),
            game=game.name,
            seats=[Person.of(s) for s in seats],
            commitment=game.commitment,
            rounds=rounds,
        ),
        kind="roster",
    )
    cards: dict[str, list[int]] = {}
    for s in seats:
        cards.setdefault(role_card_text(game=game, seat=s, seats=seats), []).append(s.vk_user_id)
    # The persistent menu («Действия», «Статус», «Помощь») comes with the role card.
    menu = menu_keyboard()
    rows = [
        row
        for text, peers in cards.items()
        for row in message_rows(
            game=game, peer_ids=peers, text=text, kind="role_card", keyboard=menu
        )
    ]
    queue_outbox(rows=rows)
    day_open_locked(game=game, number=1, now=now, seats=seats)
    return game
