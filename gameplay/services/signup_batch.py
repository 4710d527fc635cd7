"""Signing many up at once (the GM's list of players, a roster made in one go): what
``signup.signup_create`` does for each entry in turn — the seats, their events, the players'
«записан» messages, the same refusals — in one lock of the game and one statement each, all of
them or (on a refusal) none."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from itertools import pairwise

from django.db import transaction

from gameplay.messages import render
from gameplay.models import Actor, EventKind, Game, GameStatus, Seat, SeatStatus
from gameplay.refusals import AlreadySignedUp, RecruitmentClosed, SignupClosed
from gameplay.rules.errors import InvalidCommand
from outbox import dbrows

from .common import lock_game, log_events, message_rows, queue_outbox


@dataclass(frozen=True)
class SignupEntry:
    """One sign-up of a batch: who, under what name, VK's ``sex`` (1 female, 2 male, 0
    unknown) and whether the community may write to them, as ``signup_create`` takes them."""

    vk_user_id: int
    name: str
    sex: int = 0
    pm_allowed: bool | None = None

    @property
    def seat_name(self) -> str:
        """The name the seat gets (without one, «id43», as a mention in the board reads)."""
        return (self.name or f"id{self.vk_user_id}").strip()[:200]


@dataclass(frozen=True)
class Refused:
    """The first entry of a batch refused, with the refusal ``signup_create`` gives it there,
    and (when they are listed already) the name they are listed under."""

    entry: SignupEntry
    error: InvalidCommand
    listed: str = ""


def signup_open_check(*, game: Game, reserve: bool) -> None:
    """Refuse a sign-up the game's state does not allow (into the game only while it
    recruits; into the reserve until the end)."""
    if game.status not in (GameStatus.RECRUITING, GameStatus.DEALT, GameStatus.RUNNING):
        raise SignupClosed()
    if not reserve and game.status != GameStatus.RECRUITING:
        raise RecruitmentClosed()


def signups_refused(*, game: Game, entries: Sequence[SignupEntry], reserve: bool) -> Refused | None:
    """The first of ``entries`` that signing them up one by one, in order, would refuse (the
    game locked; None: none). The game's state refuses the first; a VK user among the players
    or the reserve already, or earlier in ``entries``, is refused as signed up already. One
    query."""
    if not entries:
        return None
    try:
        signup_open_check(game=game, reserve=reserve)
    except InvalidCommand as refusal:
        return Refused(entries[0], refusal)
    listed = {
        vk: (name, status == SeatStatus.RESERVE)
        for vk, name, status in Seat.objects.filter(
            game=game,
            vk_user_id__in={e.vk_user_id for e in entries},
            status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE],
        ).values_list("vk_user_id", "name", "status")
    }
    for entry in entries:
        if entry.vk_user_id in listed:
            name, in_reserve = listed[entry.vk_user_id]
            return Refused(entry, AlreadySignedUp(reserve=in_reserve), listed=name)
        listed[entry.vk_user_id] = (entry.seat_name, reserve)
    return None


def signups_seat(
    *, game: Game, entries: Sequence[SignupEntry], reserve: bool, by: Actor | None = None
) -> list[Seat]:
    """Write the sign-ups of ``entries`` (the game locked, :func:`signups_refused` refusing
    none), in order: the seats, their SIGNUP events (each by ``by`` or the player) and the
    players' messages, an insert each."""
    seats = [
        Seat(
            game=game,
            vk_user_id=e.vk_user_id,
            name=e.seat_name,
            sex=e.sex if e.sex in (1, 2) else 0,
            status=SeatStatus.RESERVE if reserve else SeatStatus.PLAYER,
            pm_allowed=e.pm_allowed,
        )
        for e in entries
    ]
    dbrows.insert(seats)
    _signed_up_in_order(seats)
    log_events(
        game=game,
        kind=EventKind.SIGNUP,
        events=[
            (
                by or Actor.player(s.vk_user_id),
                {"vk_user_id": s.vk_user_id, "name": s.name, "reserve": reserve},
            )
            for s in seats
        ],
    )
    text = render("player/signed_up", game=game.name, reserve=reserve)
    queue_outbox(
        rows=[
            row
            for s in seats
            for row in message_rows(game=game, peer_ids=[s.vk_user_id], text=text, kind="signup")
        ]
    )
    return seats


def _signed_up_in_order(seats: list[Seat]) -> None:
    """Make the seats' ``signed_up_at`` strictly increasing, as sign-ups one by one have them
    (seats are listed by it before the deal): one insert may stamp two rows in the same
    microsecond."""
    tied = []
    for before, seat in pairwise(seats):
        if seat.signed_up_at <= before.signed_up_at:
            seat.signed_up_at = before.signed_up_at + timedelta(microseconds=1)
            tied.append(seat)
    dbrows.update_each(tied, ["signed_up_at"])


@transaction.atomic
def signups_create(
    *, game_id: int, entries: Sequence[SignupEntry], reserve: bool = False, by: Actor | None = None
) -> list[Seat]:
    """Sign ``entries`` up as players (during recruitment) or as reserves (any time), as
    ``signup_create`` for each in turn would, or refuse (nothing written) with the refusal it
    would give the first one it refuses."""
    if not entries:
        return []
    game = lock_game(game_id=game_id)
    refused = signups_refused(game=game, entries=entries, reserve=reserve)
    if refused is not None:
        raise refused.error
    return signups_seat(game=game, entries=entries, reserve=reserve, by=by)
