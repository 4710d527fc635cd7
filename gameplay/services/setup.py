"""Creating a game, sign-up and withdrawal, the deal and the start."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from gameplay import texts
from gameplay.keyboards import menu_keyboard
from gameplay.models import Draw, Game, GameStatus, Seat, SeatStatus
from gameplay.rules import Item, Role, RoleCounts, commitment, deal
from gameplay.rules.errors import InvalidCommand, NotEnoughPlayers, SetupError

from .common import current_phase, lock_game, log_event, now_or, players, post_board, send_message
from .phases import open_day


def counts_of(game: Game) -> RoleCounts:
    return RoleCounts(
        mafia=game.mafia_count,
        commissar=game.commissar_count,
        doctor=game.doctor_count,
        maniac=game.maniac_count,
        civilian=game.civilian_count,
    )


@transaction.atomic
def game_create(
    *,
    name: str,
    counts: RoleCounts | None = None,
    gm: Any = None,
    by: str = "system",
    **settings: Any,
) -> Game:
    """Create a game in recruitment. ``settings`` are Game fields (phase lengths, VK ids, …)."""
    counts = counts or RoleCounts()
    counts.validate()
    name = (name or "").strip()
    if not name:
        raise SetupError("У игры должно быть название.")
    settings.setdefault("reminders", [180, 60])
    game = Game(
        name=name[:200],
        mafia_count=counts.mafia,
        commissar_count=counts.commissar,
        doctor_count=counts.doctor,
        maniac_count=counts.maniac,
        civilian_count=counts.civilian,
        **settings,
    )
    try:
        with transaction.atomic():
            game.save()
    except IntegrityError:
        raise SetupError("В этой теме уже идёт другая игра.") from None
    if gm is not None:
        game.gms.add(gm)
    log_event(game, "game_created", by=by, counts=counts.as_dict(), name=game.name)
    return game


@transaction.atomic
def signup_create(
    *, game_id: int, vk_user_id: int, name: str, reserve: bool = False, by: str | None = None
) -> Seat:
    """Sign a VK user up as a player (during recruitment) or as a reserve (any time)."""
    game = lock_game(game_id)
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING):
        raise InvalidCommand("Запись в эту игру закрыта.")
    if not reserve and game.status != GameStatus.RECRUITING:
        raise InvalidCommand("Набор в игру закрыт. Можно записаться в запас.")
    existing = Seat.objects.filter(
        game=game, vk_user_id=vk_user_id, status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE]
    ).first()
    if existing is not None:
        where = "в запасе" if existing.status == SeatStatus.RESERVE else "в игре"
        raise InvalidCommand(f"Вы уже записаны {where}.")
    seat = Seat.objects.create(
        game=game,
        vk_user_id=vk_user_id,
        name=(name or f"id{vk_user_id}").strip()[:200],
        status=SeatStatus.RESERVE if reserve else SeatStatus.PLAYER,
    )
    log_event(
        game,
        "signup",
        by=by or f"vk:{vk_user_id}",
        vk_user_id=vk_user_id,
        name=seat.name,
        reserve=reserve,
    )
    send_message(game, [vk_user_id], texts.signed_up(game.name, reserve), kind="signup")
    return seat


@transaction.atomic
def signup_withdraw(*, game_id: int, vk_user_id: int, by: str | None = None) -> Seat:
    """Withdraw a sign-up before the start (a reserve may withdraw any time).

    Withdrawing from a dealt game discards the deal: the GM deals again.
    """
    game = lock_game(game_id)
    seat = Seat.objects.filter(
        game=game, vk_user_id=vk_user_id, status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE]
    ).first()
    if seat is None:
        raise InvalidCommand("Вы не записаны в эту игру.")
    if seat.status == SeatStatus.PLAYER and game.status not in (
        GameStatus.RECRUITING,
        GameStatus.DEALT,
    ):
        raise InvalidCommand("Игра уже началась: сняться нельзя, обратитесь к ведущему.")
    if seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT:
        _discard_deal(game)
    seat.status = SeatStatus.WITHDRAWN
    seat.number = None
    seat.role = ""
    seat.item = ""
    seat.save()
    log_event(game, "withdraw", by=by or f"vk:{vk_user_id}", vk_user_id=vk_user_id)
    send_message(game, [vk_user_id], texts.withdrawn(game.name), kind="withdraw")
    return seat


def _discard_deal(game: Game) -> None:
    Seat.objects.filter(game=game).update(number=None, role="", item="", item_used=False)
    game.status = GameStatus.RECRUITING
    game.seed = ""
    game.commitment = ""
    game.save(update_fields=["status", "seed", "commitment"])
    log_event(game, "deal_discarded")


@dataclass(frozen=True)
class DealSummary:
    deal_round: int
    commitment: str
    draws: list[dict[str, object]]


@transaction.atomic
def game_deal(*, game_id: int, by: str = "system", seed: str | None = None) -> DealSummary:
    """Deal roles and draw items from a fresh seed (re-dealing before the start is allowed)."""
    game = lock_game(game_id)
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT):
        raise InvalidCommand("Раздать роли можно только до начала игры.")
    counts = counts_of(game)
    seats = list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("signed_up_at", "id")
    )
    if len(seats) != counts.total:
        raise NotEnoughPlayers(
            f"Записано игроков: {len(seats)}, а ролей в настройках: {counts.total}."
        )
    seed = seed or secrets.token_hex(32)
    result = deal(seed, counts)
    items = result.item_by_seat
    Seat.objects.filter(game=game).update(number=None)
    for i, seat in enumerate(seats):
        seat.number = i + 1
        seat.role = result.roles[i].value
        seat.item = items[i + 1].value if i + 1 in items else ""
        seat.item_used = False
    Seat.objects.bulk_update(seats, ["number", "role", "item", "item_used"])
    last = Draw.objects.filter(game=game).aggregate(m=Max("deal_round"))["m"]
    deal_round = (last or 0) + 1
    Draw.objects.bulk_create(
        Draw(
            game=game,
            deal_round=deal_round,
            attempt=d.attempt,
            holders=d.as_dict()["holders"],
            mafia_items=d.mafia_items,
            accepted=d.accepted,
        )
        for d in result.draws
    )
    redeal = game.status == GameStatus.DEALT
    game.seed = seed
    game.commitment = result.commitment
    game.deal_from_seed = True
    game.status = GameStatus.DEALT
    game.save(update_fields=["seed", "commitment", "deal_from_seed", "status"])
    draws = [d.as_dict() for d in result.draws]
    log_event(
        game,
        "redeal" if redeal else "deal",
        by=by,
        override=redeal,
        deal_round=deal_round,
        commitment=result.commitment,
        draws=draws,
    )
    return DealSummary(deal_round=deal_round, commitment=result.commitment, draws=draws)


@transaction.atomic
def game_deal_fixed(
    *,
    game_id: int,
    assignment: Mapping[int, tuple[Role, Item | None]],
    by: str = "system",
) -> str:
    """Seat players with a given deal (scenario replay, import). Returns the commitment.

    Seats are numbered in sign-up order; ``assignment`` maps seat numbers to role and item.
    The commitment covers the fixed deal with a fresh seed (it verifies as a commitment, but
    the deal was not derived from the seed: ``deal_from_seed`` is False).
    """
    game = lock_game(game_id)
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT):
        raise InvalidCommand("Раздать роли можно только до начала игры.")
    seats = list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("signed_up_at", "id")
    )
    numbers = sorted(assignment)
    if len(numbers) != len(seats) or any(n < 1 for n in numbers):
        raise NotEnoughPlayers("Нужно по одному положительному номеру места на игрока.")
    items = [i for _, i in assignment.values() if i is not None]
    if len(items) != len(set(items)):
        raise SetupError("Каждый предмет может быть только у одного игрока.")
    for number, seat in zip(numbers, seats, strict=True):
        role, item = assignment[number]
        seat.number = number
        seat.role = Role(role).value
        seat.item = Item(item).value if item else ""
        seat.item_used = False
    Seat.objects.bulk_update(seats, ["number", "role", "item", "item_used"])
    roles = [Role(assignment[n][0]) for n in numbers]
    held = {Item(i): n for n, (_, i) in assignment.items() if i is not None}
    seed = secrets.token_hex(32)
    game.seed = seed
    game.commitment = commitment(seed, roles, held)
    game.deal_from_seed = False
    game.status = GameStatus.DEALT
    counts = {r.value: roles.count(r) for r in Role}
    game.mafia_count = counts["mafia"]
    game.commissar_count = counts["commissar"]
    game.doctor_count = counts["doctor"]
    game.maniac_count = counts["maniac"]
    game.civilian_count = counts["civilian"]
    game.save()
    log_event(game, "deal_fixed", by=by, override=True, commitment=game.commitment)
    return game.commitment


@transaction.atomic
def game_start(*, game_id: int, by: str = "system", now: datetime | None = None) -> Game:
    """Start a dealt game: roster and commitment in the board, role cards, Day 1 opens."""
    now = now_or(now)
    game = lock_game(game_id)
    if game.status != GameStatus.DEALT:
        raise InvalidCommand("Сначала раздайте роли.")
    if current_phase(game) is not None:  # pragma: no cover - guarded by the status
        raise InvalidCommand("Игра уже идёт.")
    seats = players(game)
    game.status = GameStatus.RUNNING
    game.started_at = now
    game.save(update_fields=["status", "started_at"])
    log_event(game, "game_started", by=by, commitment=game.commitment, players=len(seats))
    post_board(game, texts.roster(game.name, [(s.number, s.name) for s in seats], game.commitment),
               kind="roster")
    mafia = [(s.number, s.name) for s in seats if s.role == Role.MAFIA]
    cards: dict[str, list[int]] = {}
    for s in seats:
        text = texts.role_card(
            game.name,
            s.number,
            Role(s.role),
            Item(s.item) if s.item else None,
            mafia if s.role == Role.MAFIA else [],
            game.commitment,
        )
        cards.setdefault(text, []).append(s.vk_user_id)
    for text, peers in cards.items():
        # The persistent menu («Действия», «Статус», «Помощь») comes with the role card.
        send_message(game, peers, text, kind="role_card", keyboard=menu_keyboard())
    open_day(game, 1, now, seats)
    return game
