"""Signing up for a game and leaving it before the start: from VK (the player's «+», a board
post) or on the GM's behalf (one, a list, a removal), into the game or its reserve."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from gameplay import unit_of_work
from gameplay.messages import render
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    GameStatus,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Seat,
    SeatStatus,
)
from gameplay.refusals import (
    AlreadySignedUp,
    DiscardNotConfirmed,
    NobodyAdded,
    NoSuchSignup,
    NotSignedUp,
    PlayerAlreadyListed,
    PlayerLineBad,
    PlayerLineDuplicate,
    PlayerListEmpty,
    PlayerListTooLong,
    RemovalWhileRunning,
    WithdrawTooLate,
)
from gameplay.rules.errors import InvalidCommand

from .common import lock_game, log_event, queue_outbox, send_message
from .deal import discard_deal
from .signup_batch import SignupEntry, signup_open_check, signups_refused, signups_seat
from .vkrefs import parse_vk_user


def _check_signup(game: Game, vk_user_id: int, *, reserve: bool) -> None:
    """Refuse a sign-up the game's state does not allow, or one already made."""
    signup_open_check(game=game, reserve=reserve)
    existing = Seat.objects.filter(
        game=game, vk_user_id=vk_user_id, status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE]
    ).first()
    if existing is not None:
        raise AlreadySignedUp(reserve=existing.status == SeatStatus.RESERVE)


def _unnamed(vk_user_id: int) -> str:
    """The name of a player the GM adds without one (the bot's sign-up without VK's name is
    «id43», the text of a mention in the board)."""
    return f"VK id {vk_user_id}"


@transaction.atomic
def signup_create(
    *,
    game_id: int,
    vk_user_id: int,
    name: str,
    reserve: bool = False,
    by: Actor | None = None,
    sex: int = 0,
    pm_allowed: bool | None = None,
    topic_id: int | None = None,
    mention: str | None = None,
) -> Seat:
    """Sign a VK user up as a player (during recruitment) or as a reserve (any time).
    ``sex`` is VK's (1 female, 2 male, 0 unknown): the texts' grammar follows it;
    ``pm_allowed`` whether the community may write to them (the bot asks VK). A sign-up in
    the board (``topic_id``, the author's ``mention``) is answered there, with how to allow
    messages when the bot cannot write: in the running list of the topic's sign-ups."""
    game = lock_game(game_id=game_id)
    _check_signup(game, vk_user_id, reserve=reserve)
    seat = Seat.objects.create(
        game=game,
        vk_user_id=vk_user_id,
        name=(name or f"id{vk_user_id}").strip()[:200],
        sex=sex if sex in (1, 2) else 0,
        status=SeatStatus.RESERVE if reserve else SeatStatus.PLAYER,
        pm_allowed=pm_allowed,
    )
    log_event(
        game,
        EventKind.SIGNUP,
        by=by or Actor.player(vk_user_id),
        vk_user_id=vk_user_id,
        name=seat.name,
        reserve=reserve,
    )
    send_message(
        game=game,
        peer_ids=[vk_user_id],
        text=render("player/signed_up", game=game.name, reserve=reserve),
        kind="signup",
    )
    if topic_id is not None:
        entry = {
            "mention": mention or f"[id{vk_user_id}|{seat.name}]",
            "reserve": reserve,
            "pm_allowed": pm_allowed,
        }
        _acknowledge_in_topic(game, topic_id, entry)
    return seat


# --- the running list of sign-ups in a topic ----------------------------------------------------

#: The Outbox kind of the list of sign-ups acknowledged in a topic.
SIGNUP_LIST_KIND = "signup_list"


def _acknowledge_in_topic(game: Game, topic_id: int, entry: dict[str, Any]) -> Outbox:
    """Acknowledge a sign-up in the topic it was made in, in one running list rather than a
    comment per player: it joins the list waiting to go out there (not yet taken by the
    delivery), or starts a new one, posted at once or, if the last list went out less than
    ``settings.SIGNUP_LIST_SECONDS`` ago, that long after it (the sign-ups meanwhile join it).
    A busy recruitment makes a comment per batch, not per player (VK.md: the user token's
    3 requests a second, the board's flood control)."""
    now = timezone.now()
    unit_of_work.flush()  # a list queued earlier in this transaction is a row to find
    lists = Outbox.objects.filter(
        game=game, channel=OutboxChannel.BOARD, topic_id=topic_id, kind=SIGNUP_LIST_KIND
    )
    waiting = lists.filter(status=OutboxStatus.PENDING, result__isnull=True).last()
    if waiting is not None:
        entries = [*(waiting.payload or {}).get("signups", []), entry]
        joined = (
            lists.filter(pk=waiting.pk, status=OutboxStatus.PENDING, result__isnull=True)
            .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
            .update(text=_signup_list_text(game, entries), payload={"signups": entries})
        )
        if joined:
            waiting.refresh_from_db()
            return waiting
    every = timedelta(seconds=settings.SIGNUP_LIST_SECONDS)
    last = lists.order_by("-id").values_list("created_at", flat=True).first()
    [row] = queue_outbox(
        rows=[
            Outbox(
                game=game,
                channel=OutboxChannel.BOARD,
                topic_id=topic_id,
                text=_signup_list_text(game, [entry]),
                payload={"signups": [entry]},
                kind=SIGNUP_LIST_KIND,
                next_attempt_at=last + every if last is not None and now < last + every else None,
            )
        ]
    )
    return row


def _signup_list_text(game: Game, entries: list[dict[str, Any]]) -> str:
    counts = dict(
        Seat.objects.filter(game=game, status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE])
        .values("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return render(
        "board/signups",
        game=game.name,
        players=[e["mention"] for e in entries if not e["reserve"]],
        reserves=[e["mention"] for e in entries if e["reserve"]],
        blocked=[e["mention"] for e in entries if e["pm_allowed"] is False],
        unknown=[e["mention"] for e in entries if e["pm_allowed"] is None],
        total=counts.get(SeatStatus.PLAYER, 0),
        reserve_total=counts.get(SeatStatus.RESERVE, 0),
    )


@transaction.atomic
def signup_withdraw(*, game_id: int, vk_user_id: int, by: Actor | None = None) -> Seat:
    """Withdraw a sign-up before the start (a reserve may withdraw any time).

    Withdrawing from a dealt game discards the deal (an override, listed at the end): the GM
    deals again, from the same round's seed, for the new roster.
    """
    game = lock_game(game_id=game_id)
    seat = Seat.objects.filter(
        game=game, vk_user_id=vk_user_id, status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE]
    ).first()
    if seat is None:
        raise NotSignedUp()
    if seat.status == SeatStatus.PLAYER and game.status not in (
        GameStatus.RECRUITING,
        GameStatus.DEALT,
    ):
        raise WithdrawTooLate()
    if seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT:
        by_player = by is None or by == Actor.player(vk_user_id)
        discard_deal(
            game=game,
            by=by or Actor.player(vk_user_id),
            cause="player" if by_player else "gm",
            vk_user_id=vk_user_id,
        )
    seat.status = SeatStatus.WITHDRAWN
    seat.number = None
    seat.role = ""
    seat.item = ""
    seat.save()
    log_event(game, EventKind.WITHDRAW, by=by or Actor.player(vk_user_id), vk_user_id=vk_user_id)
    send_message(
        game=game,
        peer_ids=[vk_user_id],
        text=render("player/withdrawn", game=game.name),
        kind="withdraw",
    )
    return seat


@dataclass(frozen=True)
class PlayerLine:
    vk_user_id: int
    name: str


#: Lines a GM's list may hold: more than any game seats with its reserve, and a bound on what
#: one pasted text makes the panel do (it is signed up in one batch).
MOST_PLAYER_LINES = 200


def parse_player_lines(*, text: str) -> list[PlayerLine]:
    """Lines «ссылка или id [имя]» (a tab, ``;`` or spaces between them), at most
    :data:`MOST_PLAYER_LINES`. Raises ``InvalidCommand`` naming the first bad line; duplicates
    are refused too."""
    out: list[PlayerLine] = []
    seen: dict[int, int] = {}
    for n, line in enumerate((text or "").splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if len(out) == MOST_PLAYER_LINES:
            raise PlayerListTooLong(most=MOST_PLAYER_LINES)
        parts = re.split(r"[\t;]|\s+", line, maxsplit=1)
        ref, name = parts[0], parts[1] if len(parts) > 1 else ""
        try:
            vk_id = parse_vk_user(text=ref)
        except InvalidCommand as e:
            raise PlayerLineBad(line=n, why=e.reason) from None
        if vk_id in seen:
            raise PlayerLineDuplicate(line=n, vk_user_id=vk_id, first=seen[vk_id])
        seen[vk_id] = n
        out.append(PlayerLine(vk_id, name.strip(" \t;")[:200]))
    if not out:
        raise PlayerListEmpty()
    return out


@transaction.atomic
def player_add(
    *, game_id: int, by: Actor, vk: str | int, name: str = "", reserve: bool = False
) -> Seat:
    """Sign a VK user up (or put them in the reserve) on the GM's behalf."""
    vk_id = vk if isinstance(vk, int) else parse_vk_user(text=vk)
    try:
        return signup_create(
            game_id=game_id,
            vk_user_id=vk_id,
            name=(name or "").strip() or _unnamed(vk_id),
            reserve=reserve,
            by=by,
        )
    except AlreadySignedUp as e:  # the player's own wording («Вы уже записаны») is not the GM's
        listed = Seat.objects.filter(
            game_id=game_id,
            vk_user_id=vk_id,
            status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE],
        ).first()
        raise PlayerAlreadyListed(
            player=listed.name if listed else _unnamed(vk_id), reserve=e.params.get("reserve")
        ) from None


@transaction.atomic
def players_add_bulk(*, game_id: int, by: Actor, text: str, reserve: bool = False) -> list[Seat]:
    """Add many players at once, as ``player_add`` line by line: all of them, or (on any
    refusal) none, the first line refused named (``NobodyAdded``)."""
    lines = parse_player_lines(text=text)
    entries = [SignupEntry(x.vk_user_id, x.name.strip() or _unnamed(x.vk_user_id)) for x in lines]
    try:
        game = lock_game(game_id=game_id)
    except InvalidCommand as e:
        raise NobodyAdded(vk_user_id=entries[0].vk_user_id, why=e.reason) from None
    refused = signups_refused(game=game, entries=entries, reserve=reserve)
    if refused is not None:
        error = refused.error
        if isinstance(error, AlreadySignedUp):  # in the GM's words, as player_add's
            error = PlayerAlreadyListed(player=refused.listed, reserve=error.params.get("reserve"))
        raise NobodyAdded(vk_user_id=refused.entry.vk_user_id, why=error.reason)
    return signups_seat(game=game, entries=entries, reserve=reserve, by=by)


@transaction.atomic
def player_remove(*, game_id: int, by: Actor, seat_id: int, discard: bool = True) -> Seat:
    """Withdraw a sign-up or a reserve entry on the GM's behalf (see ``signup_withdraw``).

    ``discard=False``: refuse (``DiscardNotConfirmed``, nothing changes) if the removal would
    discard the deal, checked under the game's lock, so a deal made after the GM confirmed a
    plain removal is not discarded unseen."""
    game = lock_game(game_id=game_id)
    seat = Seat.objects.filter(pk=seat_id, game_id=game_id).first()
    if seat is None or seat.status == SeatStatus.WITHDRAWN:
        raise NoSuchSignup()
    if seat.status == SeatStatus.PLAYER and seat.number is not None:
        if game.status == GameStatus.RUNNING:
            raise RemovalWhileRunning()
    if not discard and seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT:
        raise DiscardNotConfirmed()
    return signup_withdraw(game_id=game_id, vk_user_id=seat.vk_user_id, by=by)
