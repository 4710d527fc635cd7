"""The spectator chat (RULES.md G6): the GM links or creates the chat and opens it; an eligible
player asks for it («в ЗЗ») and gets an invite link; whoever joins who may not is removed.

Outbox rows this module writes besides ordinary messages (see ``OutboxChannel``):

- channel ``invite`` (``kind="spectator_invite"``): ``messages.getInviteLink`` for
  ``payload["chat_peer_id"]``, then ``text`` with the link in place of ``{link}`` to
  ``peer_ids``.
- channel ``kick`` (``kind="intruder_removed"``): ``messages.removeChatUser`` with
  ``payload = {"chat_id", "member_id"}``; ``text`` is a note for the GM.
- channel ``create_chat``: ``messages.createChat`` (:func:`spectator_chat_create`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from django.db import IntegrityError, transaction

from gameplay import unit_of_work
from gameplay.messages import render
from gameplay.models import (
    Actor,
    EventKind,
    FlagKind,
    Game,
    GameStatus,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Seat,
    SpectatorMember,
    SpectatorStatus,
)
from gameplay.refusals import (
    ChatAlreadyClosed,
    ChatAlreadyOpen,
    ChatBeingCreated,
    ChatNotLinked,
    ChatOpenNoNewChat,
    ChatOpensInRunningGame,
    GameFinished,
    SpectatorRefused,
)
from gameplay.rules.errors import SetupError
from gameplay.rules.spectators import SpectatorBar, spectator_bar
from gameplay.selectors import bot as sel
from outbox.flags import add_flag_line

from .common import (
    current_phase,
    lock_game,
    log_event,
    players,
    post_board,
    queue_outbox,
    send_message,
)
from .setup import check_vk_tenancy, tenancy_refusal
from .vkrefs import CHAT_PEER_BASE, chat_peer_id

#: Where the invite's text takes the chat's link: the delivery puts the current link there
#: (``messages.getInviteLink`` at send time; vkbot.delivery.plan.LINK_MARKER).
INVITE_LINK = "{link}"


def spectator_refusal(*, game: Game, seat: Seat | None) -> str | None:
    """None when this seat (None: no seat in the game) may be in the spectator chat, else the
    refusal: RULES.md G6 as :func:`gameplay.rules.spectators.spectator_bar` decides it, the one
    answer the invitations, the chat's guard and the panel share."""
    bar = _bar(game, seat)
    return None if bar is None else SpectatorRefused(bar=bar.value).reason


def _bar(game: Game, seat: Seat | None) -> SpectatorBar | None:
    return spectator_bar(
        seated=seat is not None,
        alive=bool(seat and seat.alive),
        role=seat.role if seat else None,
        game_over=game.status == GameStatus.FINISHED,
    )


@transaction.atomic
def spectator_request(*, game_id: int, vk_user_id: int) -> SpectatorMember:
    """«в ЗЗ»: an eligible player gets the invite link (queued; the delivery fetches it)."""
    game = lock_game(game_id=game_id)
    if not game.spectator_chat_open or not game.spectator_chat_id:
        raise SpectatorRefused(bar="closed")
    seat = sel.seat_in_game(game.pk, vk_user_id)
    bar = _bar(game, seat)
    if bar is not None:
        raise SpectatorRefused(bar=bar.value)
    member, _ = SpectatorMember.objects.update_or_create(
        game=game,
        vk_user_id=vk_user_id,
        defaults={"seat": seat, "status": SpectatorStatus.INVITED, "reason": ""},
    )
    queue_outbox(
        rows=[
            Outbox(
                game=game,
                channel=OutboxChannel.INVITE,
                peer_ids=[vk_user_id],
                text=render("player/spectator_invite", game=game.name, link=INVITE_LINK),
                payload={"chat_peer_id": int(game.spectator_chat_id)},
                kind="spectator_invite",
            )
        ]
    )
    log_event(game, EventKind.SPECTATOR_INVITED, by=Actor.player(vk_user_id), vk_user_id=vk_user_id)
    return member


@transaction.atomic
def spectator_joined(*, game_id: int, member_id: int) -> bool:
    """Someone joined the spectator chat: an eligible player is recorded; anyone else is
    removed (queued ``removeChatUser``) and the GM is told by a flag. Returns whether they may
    stay."""
    game = lock_game(game_id=game_id)
    seat = sel.seat_in_game(game.pk, member_id)
    # The GMs' own VK accounts are always welcome (they are no player's team).
    is_gm = member_id in {int(x) for x in game.gm_vk_ids or [] if str(x).lstrip("-").isdigit()}
    refusal = None if is_gm else spectator_refusal(game=game, seat=seat)
    status = SpectatorStatus.REMOVED if refusal else SpectatorStatus.JOINED
    SpectatorMember.objects.update_or_create(
        game=game,
        vk_user_id=member_id,
        defaults={"seat": seat, "status": status, "reason": refusal or ""},
    )
    if refusal is None:
        log_event(game, EventKind.SPECTATOR_JOINED, vk_user_id=member_id)
        return True
    chat = int(game.spectator_chat_id or 0)
    note = render("spectators/intruder_removed", member=f"id{member_id}", why=refusal)
    queue_outbox(
        rows=[
            Outbox(
                game=game,
                channel=OutboxChannel.KICK,
                peer_ids=[chat],
                text=note,
                payload={"chat_id": chat - CHAT_PEER_BASE, "member_id": member_id},
                kind="intruder_removed",
            )
        ]
    )
    ModerationFlag.objects.create(
        game=game,
        seat=seat,
        vk_user_id=member_id,
        kind=FlagKind.INTRUDER,
        text=note,
        phase=current_phase(game),
    )
    log_event(game, EventKind.SPECTATOR_REMOVED, vk_user_id=member_id, reason=refusal)
    return False


@transaction.atomic
def spectator_left(*, game_id: int, member_id: int) -> None:
    """Someone left (or was removed from) the spectator chat."""
    SpectatorMember.objects.filter(
        game_id=game_id,
        vk_user_id=member_id,
        status__in=[SpectatorStatus.INVITED, SpectatorStatus.JOINED],
    ).update(status=SpectatorStatus.LEFT)


# --- the GM's chat ------------------------------------------------------------------------------


@transaction.atomic
def spectator_chat_link(*, game_id: int, by: Actor, chat: int) -> Game:
    """Link the game to an existing VK chat (the community must be its admin)."""
    game = lock_game(game_id=game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise GameFinished()
    peer = chat_peer_id(value=chat)
    before = game.spectator_chat_id
    game.spectator_chat_id = peer
    check_vk_tenancy(game=game)
    try:
        with transaction.atomic():
            game.save(update_fields=["spectator_chat_id"])
    except IntegrityError as error:
        raise tenancy_refusal(error=error) from None
    log_event(game, EventKind.SPECTATOR_CHAT_LINKED, by=by, peer_id=peer, before=before)
    return game


@transaction.atomic
def spectator_chat_create(*, game_id: int, by: Actor) -> Outbox:
    """Ask the community to create the spectator chat itself (``messages.createChat``, group
    token: the community is then the chat's owner and admin). The GMs' own VK accounts
    (``gm_vk_ids``) are put in it, as far as VK lets the community add them. The delivery sends
    the request at most once; when VK answers, :func:`spectator_chat_created` links the chat.

    Refused while the game is over, while its spectator chat is open (players hold links to
    it), or while an earlier request is still waiting for VK. A linked but closed chat is
    replaced when the new one is created."""
    game = lock_game(game_id=game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise GameFinished()
    if game.spectator_chat_open:
        raise ChatOpenNoNewChat()
    waiting = Outbox.objects.filter(
        game=game, channel=OutboxChannel.CREATE_CHAT, status=OutboxStatus.PENDING
    )
    if waiting.exists():
        raise ChatBeingCreated()
    title = render("spectators/chat_title", game=game.name)
    users = sorted({int(x) for x in game.gm_vk_ids or [] if str(x).isdigit()} - {0})
    [row] = queue_outbox(
        rows=[
            Outbox(
                game=game,
                channel=OutboxChannel.CREATE_CHAT,
                text=title,
                payload={"title": title, "user_ids": users, "by": by},
                kind="spectator_chat_create",
            )
        ]
    )
    unit_of_work.flush()  # the row's id goes in the log (deferred in the pipeline's transaction)
    log_event(
        game,
        EventKind.SPECTATOR_CHAT_CREATE_REQUESTED,
        by=by,
        title=title,
        outbox=row.pk,
        user_ids=users,
        before=game.spectator_chat_id,
    )
    return row


def spectator_chat_created(*, outbox: Outbox, peer_id: int, added: Sequence[int]) -> bool:
    """VK created the chat of a ``create_chat`` row: log it and link it to the row's game
    (``spectator_chat_link``, as the GM who asked). Called by ``settle.delivery_settle`` inside
    its transaction, after it locked the game. A game that ended or opened its spectator chat
    meanwhile keeps its chat: the GM gets a flag with the new chat's number instead. Returns
    whether the chat was linked."""
    game = lock_game(game_id=int(cast(int, outbox.game_id)))  # a create_chat row's game
    payload = outbox.payload or {}
    log_event(
        game,
        EventKind.SPECTATOR_CHAT_CREATED,
        peer_id=peer_id,
        outbox=outbox.pk,
        title=payload.get("title", outbox.text),
        added=sorted(int(a) for a in added),
    )
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED) or game.spectator_chat_open:
        line = render(
            "gm/chat_created_not_linked",
            id=outbox.pk,
            chat=peer_id - CHAT_PEER_BASE,
            open_chat=game.spectator_chat_open,
        )
        add_flag_line(outbox, line)
        return False
    try:
        with transaction.atomic():
            spectator_chat_link(
                game_id=game.pk, by=Actor(payload.get("by") or Actor.BOT), chat=peer_id
            )
    except SetupError as refusal:  # another unfinished game holds that chat (never seen)
        add_flag_line(outbox, refusal.reason)
        return False
    return True


@transaction.atomic
def spectator_chat_set_open(*, game_id: int, by: Actor, open: bool) -> Game:
    """Open or close the spectator chat. Opening tells the eligible dead (G6) how to join."""
    game = lock_game(game_id=game_id)
    if open and game.status != GameStatus.RUNNING:
        raise ChatOpensInRunningGame()
    if open and game.spectator_chat_id is None:
        raise ChatNotLinked()
    if game.spectator_chat_open == open:
        raise ChatAlreadyOpen() if open else ChatAlreadyClosed()
    game.spectator_chat_open = open
    game.save(update_fields=["spectator_chat_open"])
    log_event(
        game, EventKind.SPECTATOR_CHAT_OPENED if open else EventKind.SPECTATOR_CHAT_CLOSED, by=by
    )
    if open:
        eligible = [
            s.vk_user_id for s in players(game) if spectator_refusal(game=game, seat=s) is None
        ]
        if eligible:
            send_message(
                game=game,
                peer_ids=eligible,
                text=render("player/spectators_opened"),
                kind="spectators",
            )
        post_board(game=game, text=render("board/spectators_opened"), kind="spectators")
    else:
        post_board(game=game, text=render("board/spectators_closed"), kind="spectators")
    return game
