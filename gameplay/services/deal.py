"""The rounds of the deal and the deal itself (creating and starting a game: :mod:`.setup`).

The deal cannot be chosen by the GM (gameplay/rules/deal.py): the server draws round 1's seed
when the game is created (sign-up opens) and posts its commitment in the board at once; a deal
is that seed's for the final roster, so dealing the same roster again gives the same deal. A
deal discarded before the start (a player withdraws or is removed) is an override listed at the
end; a new seed only comes with a new round the GM opens explicitly (``deal_round_new``, an
override, its commitment posted in the board). Every round's seed is revealed at the end.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from gameplay.messages import render
from gameplay.models import (
    Actor,
    DealRound,
    Draw,
    EventKind,
    Game,
    GameStatus,
    Outbox,
    OutboxChannel,
    Seat,
    SeatStatus,
)
from gameplay.refusals import (
    AlreadyDealt,
    DealTooLate,
    ItemTwice,
    NewRoundTooLate,
    RosterMismatch,
    RoundNotNeeded,
    SeatNumbersInvalid,
    SeedUnreadable,
)
from gameplay.rules import Item, Role, RoleCounts, commitment, deal_for_roster, round_commitment
from outbox import dbrows

from .common import lock_game, log_event, queue_outbox


def counts_of(*, game: Game) -> RoleCounts:
    """The roles the game is set up to deal."""
    return RoleCounts(
        mafia=game.mafia_count,
        commissar=game.commissar_count,
        doctor=game.doctor_count,
        maniac=game.maniac_count,
        civilian=game.civilian_count,
    )


# --- the rounds of the deal --------------------------------------------------------------------


def current_round(*, game: Game) -> DealRound | None:
    """The game's latest round (None for a game created before rounds existed)."""
    return DealRound.objects.filter(game=game).order_by("-number").first()


def _post_round(game: Game, rnd: DealRound) -> None:
    """Post the round's commitment where sign-up happens (the recruitment topic, else the
    game's topic); a game without a topic posts it once it gets one (``announce_round``)."""
    topic = game.recruit_topic_id or game.topic_id
    if topic is None:
        return
    text = (
        render("board/signup_opened", game=game.name, commitment=rnd.commitment)
        if rnd.number == 1
        else render(
            "board/round_opened", game=game.name, number=rnd.number, commitment=rnd.commitment
        )
    )
    queue_outbox(
        rows=[
            Outbox(
                game=game, channel=OutboxChannel.BOARD, topic_id=topic, text=text, kind="deal_round"
            )
        ]
    )
    rnd.topic_id = topic
    rnd.save(update_fields=["topic_id"])


def _seed_of(rnd: DealRound) -> str:
    """The round's seed; one stored under a key the server lost reads as empty: refused."""
    if not rnd.seed:
        raise SeedUnreadable()
    return rnd.seed


def open_round(*, game: Game, by: Actor, seed: str | None = None) -> DealRound:
    """A new round of the deal: its seed drawn by the server (``seed`` only for tests and the
    demo), logged (an override after round 1) and its commitment posted in the board."""
    last = current_round(game=game)
    number = (last.number if last else 0) + 1
    seed = seed or secrets.token_hex(32)
    rnd = DealRound.objects.create(
        game=game, number=number, seed=seed, commitment=round_commitment(number, seed)
    )
    game.seed = seed
    game.save(update_fields=["seed"])
    override = number > 1
    log_event(
        game,
        EventKind.DEAL_ROUND_OPENED,
        by=by,
        override=override,
        round=number,
        commitment=rnd.commitment,
        summary=render("board/round_opened_summary", number=number, commitment=rnd.commitment)
        if override
        else "",
    )
    _post_round(game, rnd)
    return rnd


def announce_round(*, game: Game) -> None:
    """Post the commitment of every round never posted (the game had no topic until now), in
    order: a round opened before that is numbered in the board too. Call with the game
    locked, after its topics changed."""
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT):
        return
    for rnd in DealRound.objects.filter(game=game, topic_id__isnull=True).order_by("number"):
        _post_round(game, rnd)


def round_was_dealt(*, game: Game) -> bool:
    """Has a deal been made from the current round's seed (so the GM has seen one)?"""
    rnd = current_round(game=game)
    return rnd is not None and rnd.deals > 0


@transaction.atomic
def deal_round_new(*, game_id: int, by: Actor, seed: str | None = None) -> DealRound:
    """The GM's override: a new round with a new seed drawn by the server (``seed`` only for
    tests), its commitment posted in the board. A dealt game is dealt again from it (the
    discarded deal is an override too). Refused before any deal from the current round."""
    game = lock_game(game_id=game_id)
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT):
        raise NewRoundTooLate()
    rnd = current_round(game=game)
    if rnd is None or rnd.deals == 0:
        raise RoundNotNeeded()
    dealt = game.status == GameStatus.DEALT
    if dealt:
        discard_deal(game=game, by=by, cause="round", new_round=rnd.number + 1)
    new = open_round(game=game, by=by, seed=seed)
    if dealt:
        _deal(game, new, by)
    return new


def _last_deal_number(game: Game) -> int:
    return Draw.objects.filter(game=game).aggregate(m=Max("deal_round"))["m"] or 0


def discard_deal(*, game: Game, by: Actor, **why: Any) -> None:
    """Back to recruitment: the seats lose their deal; the round (its seed) stays. Logged as an
    override, so the end-of-game «Решения ведущего» lists it. ``why``: the context of
    ``board/deal_discarded`` (``cause`` "round" with ``new_round``, or "player"/"gm" with
    ``vk_user_id``)."""
    rnd = current_round(game=game)
    deal_number = _last_deal_number(game)
    Seat.objects.filter(game=game).update(number=None, role="", item="", item_used=False)
    game.status = GameStatus.RECRUITING
    game.commitment = ""
    game.save(update_fields=["status", "commitment"])
    round_number = rnd.number if rnd is not None else 0
    log_event(
        game,
        EventKind.DEAL_DISCARDED,
        by=by,
        override=True,
        deal_round=deal_number,
        seed_round=round_number,
        summary=render("board/deal_discarded", deal=deal_number, round=round_number, **why),
    )


@dataclass(frozen=True)
class DealSummary:
    #: The deal's number in the game (every deal counts, discarded ones too).
    deal_round: int
    commitment: str
    draws: list[dict[str, object]]
    #: The round whose seed it came from.
    seed_round: int = 1


@transaction.atomic
def game_deal(*, game_id: int, by: Actor = Actor.BOT) -> DealSummary:
    """Deal roles and draw items from the current round's seed and the roster (seats by VK
    id). A dealt game is refused: the same roster would get the same deal; a new deal needs a
    new round (``deal_round_new``)."""
    game = lock_game(game_id=game_id)
    if game.status == GameStatus.DEALT:
        raise AlreadyDealt()
    if game.status != GameStatus.RECRUITING:
        raise DealTooLate()
    rnd = current_round(game=game) or open_round(game=game, by=by)  # a game created before rounds
    return _deal(game, rnd, by)


def _deal(game: Game, rnd: DealRound, by: Actor) -> DealSummary:
    counts = counts_of(game=game)
    seats = list(Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("vk_user_id"))
    if len(seats) != counts.total:
        raise RosterMismatch(players=len(seats), roles=counts.total)
    result = deal_for_roster(_seed_of(rnd), counts, [s.vk_user_id for s in seats])
    items = result.item_by_seat
    Seat.objects.filter(game=game).update(number=None)
    for i, seat in enumerate(seats):
        seat.number = i + 1
        seat.role = result.roles[i].value
        seat.item = items[i + 1].value if i + 1 in items else ""
        seat.item_used = False
    dbrows.update_each(seats, ["number", "role", "item", "item_used"])
    deal_round = _last_deal_number(game) + 1
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
    rnd.deals += 1
    rnd.save(update_fields=["deals"])
    game.seed = rnd.seed
    game.commitment = result.commitment
    game.deal_from_seed = True
    game.status = GameStatus.DEALT
    game.save(update_fields=["seed", "commitment", "deal_from_seed", "status"])
    draws = [d.as_dict() for d in result.draws]
    log_event(
        game,
        EventKind.DEAL,
        by=by,
        deal_round=deal_round,
        seed_round=rnd.number,
        roster=list(result.roster),
        commitment=result.commitment,
        draws=draws,
    )
    return DealSummary(
        deal_round=deal_round, commitment=result.commitment, draws=draws, seed_round=rnd.number
    )


@transaction.atomic
def game_deal_fixed(
    *,
    game_id: int,
    assignment: Mapping[int, tuple[Role, Item | None]],
    by: Actor = Actor.BOT,
) -> str:
    """Seat players with a given deal (scenario replay, import). Returns the commitment.

    Seats are numbered in sign-up order; ``assignment`` maps seat numbers to role and item.
    The commitment covers the fixed deal with the current round's seed (it verifies as a
    commitment, but the deal was not derived from the seed: ``deal_from_seed`` is False).
    """
    game = lock_game(game_id=game_id)
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT):
        raise DealTooLate()
    seats = list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("signed_up_at", "id")
    )
    numbers = sorted(assignment)
    if len(numbers) != len(seats) or any(n < 1 for n in numbers):
        raise SeatNumbersInvalid()
    items = [i for _, i in assignment.values() if i is not None]
    if len(items) != len(set(items)):
        raise ItemTwice()
    for number, seat in zip(numbers, seats, strict=True):
        role, item = assignment[number]
        seat.number = number
        seat.role = Role(role).value
        seat.item = Item(item).value if item else ""
        seat.item_used = False
    dbrows.update_each(seats, ["number", "role", "item", "item_used"])
    roles = [Role(assignment[n][0]) for n in numbers]
    held = {Item(i): n for n, (_, i) in assignment.items() if i is not None}
    rnd = current_round(game=game) or open_round(game=game, by=by)
    rnd.deals += 1
    rnd.save(update_fields=["deals"])
    seed = _seed_of(rnd)
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
    log_event(game, EventKind.DEAL_FIXED, by=by, override=True, commitment=game.commitment)
    return game.commitment
