"""Writes the VK bot needs around the core services: replies, sign-up from VK, night actions and
votes by VK user, the vote count, the mafia's relay, the spectator chat, moderation flags.

Each function is one transaction (nested in the bot's event transaction) and, where it acts on
a game, locks the game row first, so the VK user → seat mapping cannot change under it (a
replacement). Refusals are ``RuleViolation`` subclasses with a Russian reason.

Outbox rows this module writes besides ordinary messages (see ``OutboxChannel``):

- channel ``event_answer``: answer a callback button (``messages.sendMessageEventAnswer``);
  ``payload`` holds ``{"event_id", "user_id", "peer_id"}`` and ``"event_data"`` when a
  snackbar should show; ``text`` is a note for the GM only.
- channel ``invite`` (``kind="spectator_invite"``): ``messages.getInviteLink`` for
  ``payload["chat_peer_id"]``, then ``text`` with the link in place of ``{link}`` to
  ``peer_ids``.
- channel ``kick`` (``kind="intruder_removed"``): ``messages.removeChatUser`` with
  ``payload = {"chat_id", "member_id"}``; ``text`` is a note for the GM.
- channel ``board`` with ``kind="board_reply"`` posts in ``topic_id``, which may be the
  recruitment topic.
- channel ``chat`` (``chat_reply``): the bot's answer in a chat, e.g. its number for the panel
  when the community is added to a chat.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from gameplay.messages import Person, render
from gameplay.models import (
    FlagKind,
    FlagStatus,
    Game,
    GameStatus,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
    Source,
    SpectatorMember,
    SpectatorStatus,
)
from gameplay.rules import Act, Role, RuleViolation
from gameplay.rules.errors import DeadCannotAct, InvalidCommand, NotInGame
from gameplay.rules.spectators import spectator_bar
from gameplay.selectors import bot as sel
from outbox import unit_of_work
from outbox.results import EDIT

from . import setup
from .common import (
    current_phase,
    hot_game,
    lock_game,
    log_event,
    players,
    post_board,
    post_chat,
    queue_outbox,
    send_message,
)
from .day import VoteOutcome, vote_submit_locked
from .night import ActionOutcome, night_action_submit_locked

CHAT_PEER_BASE = 2_000_000_000
#: A vote count is posted in the topic after every this many votes of a day.
COUNT_EVERY = 10
#: Longest relayed text (VK's limit is 9000; the sender's name goes in front).
RELAY_MAX = 4000
SNACKBAR_MAX = 90
#: Where the invite's text takes the chat's link: the delivery puts the current link there
#: (``messages.getInviteLink`` at send time; vkbot.delivery.rows.LINK_MARKER).
INVITE_LINK = "{link}"


class StaleButton(RuleViolation):
    rule = "V7"
    default_reason = "Эта кнопка устарела: фаза, к которой она относится, уже закончилась."

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or render("player/refused", why="stale_button"))


class NotMafia(RuleViolation):
    rule = "G5"
    default_reason = "Сообщения с «!» пересылаются только внутри мафии."

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or render("player/refused", why="not_mafia"))


class SpectatorRefused(RuleViolation):
    rule = "G6"
    default_reason = "Беседа зрителей — только для выбывших игроков, не состоявших в мафии."


# --- replies ---------------------------------------------------------------------------------


def _game_id(game: Game | int | None) -> int | None:
    return game.pk if isinstance(game, Game) else game


def reply(
    *,
    vk_user_id: int,
    text: str,
    game: Game | int | None = None,
    keyboard: dict[str, Any] | None = None,
    kind: str = "reply",
    edit: int | None = None,
) -> Outbox:
    """Queue a private message to one user (the bot's answer to what they sent). With
    ``edit`` (the ``conversation_message_id`` of a message the bot sent them: a page of
    buttons turned) the delivery edits that message instead (``messages.edit``), or sends a
    new one if VK refuses the edit."""
    [row] = queue_outbox([Outbox(
        game_id=_game_id(game),
        channel=OutboxChannel.MESSAGE,
        peer_ids=[int(vk_user_id)],
        text=text[:9000],
        keyboard=keyboard,
        kind=kind,
        payload={EDIT: {"peer_id": int(vk_user_id), "conversation_message_id": int(edit)}}
        if edit else None,
    )])
    return row


def chat_reply(
    *, peer_id: int, text: str, game: Game | int | None = None, kind: str = "chat_reply"
) -> Outbox:
    """Queue the bot's message in a chat (``peer_id`` = 2000000000 + the chat's id)."""
    if peer_id <= CHAT_PEER_BASE:
        raise InvalidCommand("Это не беседа.")
    return post_chat(_game_id(game), peer_id, text[:9000], kind=kind)


def answer_event(
    *,
    event_id: str,
    user_id: int,
    peer_id: int,
    game: Game | int | None = None,
    snackbar: str | None = None,
) -> Outbox:
    """Queue the answer to a pressed callback button (VK wants one within a minute)."""
    params: dict[str, Any] = {"event_id": event_id, "user_id": user_id, "peer_id": peer_id}
    if snackbar:
        params["event_data"] = {"type": "show_snackbar", "text": snackbar[:SNACKBAR_MAX]}
    [row] = queue_outbox([Outbox(
        game_id=_game_id(game),
        channel=OutboxChannel.EVENT_ANSWER,
        peer_ids=[peer_id],
        text=snackbar or render("player/button_answered"),
        payload=params,
        kind="event_answer",
    )])
    return row


def board_reply(*, game_id: int, topic_id: int, text: str, kind: str = "board_reply") -> Outbox:
    """Queue a short answer in one of the game's topics (game or recruitment topic)."""
    [row] = queue_outbox([Outbox(
        game_id=game_id, channel=OutboxChannel.BOARD, topic_id=topic_id, text=text[:9000],
        kind=kind,
    )])
    return row


# --- sign-up ---------------------------------------------------------------------------------


@transaction.atomic
def signup(
    *,
    game_id: int,
    vk_user_id: int,
    name: str,
    sex: int = 0,
    reserve: bool = False,
    pm_allowed: bool | None = None,
    topic_id: int | None = None,
    mention: str | None = None,
) -> Seat:
    """Sign up from VK: records whether the community may write to the player; a sign-up in
    the board is answered there (with how to allow messages when the bot cannot write)."""
    seat = setup.signup_create(
        game_id=game_id, vk_user_id=vk_user_id, name=name, sex=sex, reserve=reserve
    )
    seat.pm_allowed = pm_allowed
    seat.save(update_fields=["pm_allowed"])
    if topic_id is not None:
        board_reply(
            game_id=game_id,
            topic_id=topic_id,
            text=render("board/signed_up", mention=mention or f"[id{vk_user_id}|{seat.name}]",
                        game=seat.game.name, reserve=reserve, pm_allowed=pm_allowed),
        )
    return seat


# --- night actions and votes -----------------------------------------------------------------


def _seat_for(game: Game, vk_user_id: int, seats: list[Seat] | None = None) -> Seat:
    """The user's living seat in the game (``seats``: its players, if already read)."""
    if seats is None:
        seat = (
            Seat.objects.filter(game=game, vk_user_id=vk_user_id, status=SeatStatus.PLAYER)
            .exclude(number__isnull=True)
            .first()
        )
    else:
        seat = next((s for s in seats if s.vk_user_id == vk_user_id), None)
    if seat is None:
        raise NotInGame()
    if not seat.alive:
        raise DeadCannotAct()
    return seat


def _check_phase(
    phase: Phase | None, phase_id: int | None, seat: Seat | None = None
) -> Phase | None:
    """A button names its phase: it must be the game's current (``phase``), open phase (open
    to ``seat``: a night re-opened for the mafia's shot is closed to everyone else)."""
    if phase_id is not None and (
        phase is None
        or phase.pk != phase_id
        or phase.status != PhaseStatus.OPEN
        or (seat is not None and sel.night_closed_to(phase, seat))
    ):
        raise StaleButton()
    return phase


def night_act(
    *,
    game_id: int,
    vk_user_id: int,
    act: Act | str,
    target: int,
    guess: Role | str | None = None,
    phase_id: int | None = None,
) -> ActionOutcome:
    """A night action sent from VK (text or a button naming ``phase_id``). The mafia sees the
    team's role strike and who sent it, as it sees the team's shot."""
    with hot_game(game_id) as locked:
        game, seats = locked.game, locked.seats
        seat = _seat_for(game, vk_user_id, seats)
        phase = _check_phase(locked.phase, phase_id, seat)
        outcome = night_action_submit_locked(
            game, phase, seats, actor=seat.number, act=act, target=target, guess=guess,
            source=Source.PM,
        )
        _mafia_strike_update(game, seats, seat, outcome)
    return outcome


def _mafia_strike_update(game: Game, seats: list[Seat], seat: Seat, outcome: ActionOutcome) -> None:
    action = outcome.action
    if action.act == Act.ROLE_STRIKE:
        team = [s.vk_user_id for s in seats if s.alive and s.role == Role.MAFIA
                and s.pk != seat.pk]
        if team:
            send_message(
                game,
                team,
                render("player/role_strike_update", sender=Person.of(seat),
                       target=Person.of(action.target), guess=action.guess),
                kind="mafia_strike",
            )


def vote_cast(
    *,
    game_id: int,
    vk_user_id: int,
    target: int,
    early: bool = False,
    source: str = Source.PM,
    vk_post_id: int | None = None,
    phase_id: int | None = None,
) -> VoteOutcome:
    """A vote from VK: by buttons or message (``source="pm"``: the vote is posted in the topic)
    or a board post (``source="board"`` with its ``vk_post_id``). A count follows every
    ``COUNT_EVERY`` votes of the day."""
    with hot_game(game_id) as locked:
        game, seats = locked.game, locked.seats
        seat = _seat_for(game, vk_user_id, seats)
        phase = _check_phase(locked.phase, phase_id)
        outcome = vote_submit_locked(
            game, phase, seats, voter=seat.number, target=target, early=early, source=source,
            vk_post_id=vk_post_id,
        )
        if outcome.day_result is None and phase is not None:
            if sel.votes_cast(phase) % COUNT_EVERY == 0:
                _post_count(game, phase)
    if outcome.day_result is not None:
        unit_of_work.forget(game_id)  # the day closed: its phase, seats and game changed
    return outcome


def _post_count(game: Game, phase: Phase, topic_id: int | None = None) -> Outbox | None:
    count = sel.vote_count(phase)
    text = _count_text(count)
    if topic_id is not None and topic_id != game.topic_id:
        return board_reply(game_id=game.pk, topic_id=topic_id, text=text, kind="vote_count")
    return post_board(game, text, kind="vote_count")


def _open_day(game: Game) -> Phase:
    phase = current_phase(game)
    if game.status != GameStatus.RUNNING or phase is None or phase.kind != PhaseKind.DAY:
        raise InvalidCommand(render("player/refused", why="count_not_day"))
    return phase


@transaction.atomic
def vote_count_post(*, game_id: int) -> Outbox | None:
    """«подсчёт» in the topic: the current count, posted there."""
    game = lock_game(game_id)
    return _post_count(game, _open_day(game))


def vote_count_text(*, game_id: int) -> str:
    """The current count as text (for «подсчёт» by private message)."""
    game = Game.objects.get(pk=game_id)
    count = sel.vote_count(_open_day(game))
    return _count_text(count)


def _count_text(count: sel.VoteCount) -> str:
    return render(
        "board/vote_count",
        day=count.day,
        rows=[{"person": Person.of(s), "total": v + p, "penalty": p} for s, v, p in count.rows],
        voted=count.voted,
        living=count.living,
        missing=[s.number for s in count.missing],
    )


# --- the mafia's channel (RULES.md G5) -------------------------------------------------------


@transaction.atomic
def mafia_relay(*, game_id: int, vk_user_id: int, text: str) -> int:
    """A living mafia member's «!» message to the other living mafia, with the sender's name.
    Returns how many received it (the sender is told)."""
    game = lock_game(game_id)
    if game.status != GameStatus.RUNNING:
        raise InvalidCommand("Игра сейчас не идёт.")
    seat = _seat_for(game, vk_user_id)
    if seat.role != Role.MAFIA:
        raise NotMafia()
    body = text.strip()[:RELAY_MAX]
    if not body:
        raise InvalidCommand("Напишите текст после «!», например: «!стреляем в 5».")
    team = [s.vk_user_id for s in players(game) if s.alive and s.role == Role.MAFIA
            and s.pk != seat.pk]
    if team:
        send_message(game, team, render("player/relay", sender=Person.of(seat), text=body),
                     kind="mafia_relay")
        reply(vk_user_id=vk_user_id, game=game, text=render("player/relay_sent", count=len(team)),
              kind="mafia_relay_sent")
    else:
        reply(vk_user_id=vk_user_id, game=game, text=render("player/relay_alone"),
              kind="mafia_relay_sent")
    log_event(game, "mafia_relay", by=f"seat:{seat.number}", seat=seat.number,
              recipients=len(team), text=body)
    return len(team)


# --- the spectator chat (RULES.md G6) --------------------------------------------------------


def spectator_eligible(game: Game, seat: Seat | None) -> str | None:
    """None when this seat may be in the spectator chat (RULES.md G6:
    :func:`gameplay.rules.spectators.spectator_bar`), else the refusal."""
    bar = spectator_bar(
        seated=seat is not None,
        alive=bool(seat and seat.alive),
        role=seat.role if seat else None,
        game_over=game.status == GameStatus.FINISHED,
    )
    return None if bar is None else render("player/spectator_refused", bar=bar.value)


@transaction.atomic
def spectator_request(*, game_id: int, vk_user_id: int) -> SpectatorMember:
    """«в ЗЗ»: an eligible player gets the invite link (queued; the delivery fetches it)."""
    game = lock_game(game_id)
    if not game.spectator_chat_open or not game.spectator_chat_id:
        raise SpectatorRefused(render("player/spectator_refused", bar="closed"))
    seat = sel.seat_in_game(game.pk, vk_user_id)
    refusal = spectator_eligible(game, seat)
    if refusal:
        raise SpectatorRefused(refusal)
    member, _ = SpectatorMember.objects.update_or_create(
        game=game, vk_user_id=vk_user_id,
        defaults={"seat": seat, "status": SpectatorStatus.INVITED, "reason": ""},
    )
    queue_outbox([Outbox(
        game=game, channel=OutboxChannel.INVITE, peer_ids=[vk_user_id],
        text=render("player/spectator_invite", game=game.name, link=INVITE_LINK),
        payload={"chat_peer_id": int(game.spectator_chat_id)}, kind="spectator_invite",
    )])
    log_event(game, "spectator_invited", by=f"vk:{vk_user_id}", vk_user_id=vk_user_id)
    return member


@transaction.atomic
def spectator_joined(*, game_id: int, member_id: int) -> bool:
    """Someone joined the spectator chat: an eligible player is recorded; anyone else is
    removed (queued ``removeChatUser``) and the GM is told by a flag. Returns whether they may
    stay."""
    game = lock_game(game_id)
    seat = sel.seat_in_game(game.pk, member_id)
    # The GMs' own VK accounts are always welcome (they are no player's team).
    is_gm = member_id in {int(x) for x in game.gm_vk_ids or [] if str(x).lstrip("-").isdigit()}
    refusal = None if is_gm else spectator_eligible(game, seat)
    status = SpectatorStatus.REMOVED if refusal else SpectatorStatus.JOINED
    SpectatorMember.objects.update_or_create(
        game=game, vk_user_id=member_id,
        defaults={"seat": seat, "status": status, "reason": refusal or ""},
    )
    if refusal is None:
        log_event(game, "spectator_joined", vk_user_id=member_id)
        return True
    chat = int(game.spectator_chat_id or 0)
    note = render("spectators/intruder_removed", member=f"id{member_id}", why=refusal)
    queue_outbox([Outbox(
        game=game, channel=OutboxChannel.KICK, peer_ids=[chat], text=note,
        payload={"chat_id": chat - CHAT_PEER_BASE, "member_id": member_id},
        kind="intruder_removed",
    )])
    ModerationFlag.objects.create(
        game=game, seat=seat, vk_user_id=member_id, kind=FlagKind.INTRUDER, text=note,
        phase=current_phase(game),
    )
    log_event(game, "spectator_removed", vk_user_id=member_id, reason=refusal)
    return False


@transaction.atomic
def spectator_left(*, game_id: int, member_id: int) -> None:
    """Someone left (or was removed from) the spectator chat."""
    SpectatorMember.objects.filter(
        game_id=game_id, vk_user_id=member_id,
        status__in=[SpectatorStatus.INVITED, SpectatorStatus.JOINED],
    ).update(status=SpectatorStatus.LEFT)


# --- moderation flags (RULES.md G2–G4) -------------------------------------------------------


@transaction.atomic
def flag(
    *,
    game_id: int,
    kind: str,
    vk_user_id: int | None,
    text: str = "",
    topic_id: int | None = None,
    vk_post_id: int | None = None,
    note: str = "",
) -> ModerationFlag | None:
    """Flag something for the GM (never a punishment). A post flagged once for a reason is not
    flagged again for it: a later edit or deletion updates the open flag's text and note."""
    kind = FlagKind(kind).value
    seat = (
        Seat.objects.filter(game_id=game_id, vk_user_id=vk_user_id, status=SeatStatus.PLAYER)
        .first()
        if vk_user_id is not None
        else None
    )
    if vk_post_id is not None:
        existing = ModerationFlag.objects.filter(
            game_id=game_id, kind=kind, topic_id=topic_id, vk_post_id=vk_post_id
        ).first()
        if existing is not None:
            changed = []
            if text and existing.text != text:
                existing.text = text[:5000]
                changed.append("text")
            if note and note not in existing.note:
                existing.note = f"{existing.note}\n{note}".strip()
                changed.append("note")
            if changed and existing.status == FlagStatus.OPEN:
                existing.save(update_fields=changed)
            return None
    return ModerationFlag.objects.create(
        game_id=game_id,
        seat=seat,
        vk_user_id=vk_user_id,
        kind=kind,
        text=text[:5000],
        topic_id=topic_id,
        vk_post_id=vk_post_id,
        phase=current_phase(game_id),
        note=note,
    )
