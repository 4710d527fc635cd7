"""The GM's commands the other service modules do not cover (issue 5, the GM panel).

Same contract as every service: one transaction per command, the game row locked, a GameEvent
for each change (actor ``gm:<username>``), messages as Outbox rows, and a ``RuleViolation``
with a Russian reason for a refusal (nothing changes then).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from gameplay.messages import render, when
from gameplay.models import (
    FlagStatus,
    Game,
    GameStatus,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
)
from gameplay.rules import DayResult, EarlyClose, NightResolution, RoleCounts
from gameplay.rules.errors import InvalidCommand, SetupError
from gameplay.rules.spectators import may_watch
from gameplay.selectors.close import close_preview
from gameplay.selectors.record import retryable_outbox
from gameplay.themes import THEMES
from outbox.flags import add_flag_line
from outbox.queue import request_delivery
from outbox.results import board_group

from .common import current_phase, lock_game, log_event, now_or, players, post_board, send_message
from .day import day_close
from .discipline import seat_modkill, strike_give
from .night import night_close
from .retries import outbox_retry
from .setup import (
    announce_round,
    check_vk_tenancy,
    game_create,
    round_was_dealt,
    signup_create,
    signup_withdraw,
    tenancy_refusal,
)

#: VK peer ids of chats start here (peer_id = 2000000000 + chat_id).
CHAT_PEER_BASE = 2_000_000_000
#: The longest extension of a deadline the panel accepts at once (30 days).
MAX_EXTENSION = timedelta(days=30)

_VK_ID = re.compile(
    r"^(?:(?:https?://)?(?:m\.|www\.)?vk\.(?:com|ru)/)?(?:id)?(\d{1,15})/?$", re.IGNORECASE
)
_VK_SCREEN = re.compile(
    r"^(?:(?:https?://)?(?:m\.|www\.)?vk\.(?:com|ru)/)?@?([a-z0-9_.]{2,64})/?$", re.IGNORECASE
)
_MENTION = re.compile(r"^\[id(\d{1,15})\|[^\]]*\]$")


# --- VK user references ----------------------------------------------------------------------


def parse_vk_user(text: str) -> int:
    """A VK user id from ``123``, ``id123``, ``vk.com/id123``, ``https://vk.com/id123`` or a
    mention ``[id123|Имя]``. A screen name (``vk.com/durov``) needs VK to resolve: refused."""
    raw = (text or "").strip()
    if not raw:
        raise InvalidCommand("Укажите VK id или ссылку на страницу игрока.")
    match = _VK_ID.match(raw) or _MENTION.match(raw)
    if match:
        vk_id = int(match.group(1))
        if vk_id < 1 or vk_id >= CHAT_PEER_BASE:
            raise InvalidCommand(f"«{raw}» — не id пользователя VK.")
        return vk_id
    screen = _VK_SCREEN.match(raw)
    if screen:
        raise InvalidCommand(
            f"Короткое имя «{screen.group(1)}» нельзя распознать без запроса к VK. "
            "Укажите числовой id: vk.com/id123 или просто 123 (его видно в адресе фотографии "
            "или в настройках страницы)."
        )
    raise InvalidCommand(f"Не понял «{raw}»: укажите VK id (123), id123 или vk.com/id123.")


# --- creating and configuring a game -----------------------------------------------------------

#: Game fields the panel may change with ``game_settings_update``.
SETTINGS_FIELDS = (
    "name",
    "vk_group_id",
    "recruit_topic_id",
    "topic_id",
    "day_length",
    "night_length",
    "reminders",
    "early_close",
    "reveal_on_night_death",
    "auto_publish",
    "time_zone",
    "gm_vk_ids",
    "theme",
)
COUNT_FIELDS = ("mafia_count", "commissar_count", "doctor_count", "maniac_count",
                "civilian_count")


def _check_settings(values: dict[str, Any]) -> None:
    if "name" in values and not str(values["name"] or "").strip():
        raise SetupError("У игры должно быть название.")
    for key in ("day_length", "night_length"):
        length = values.get(key)
        if length is not None and (length < timedelta(minutes=5) or length > MAX_EXTENSION):
            raise SetupError("Длина фазы — от 5 минут до 30 дней.")
    if "reminders" in values:
        reminders = values["reminders"]
        if not isinstance(reminders, list) or any(
            isinstance(m, bool) or not isinstance(m, int) or m < 1 or m > 7 * 24 * 60
            for m in reminders
        ):
            raise SetupError("Напоминания — минуты до срока, от 1 до 10080.")
    if "gm_vk_ids" in values:
        ids = values["gm_vk_ids"]
        if not isinstance(ids, list) or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 < i < CHAT_PEER_BASE
            for i in ids
        ):
            raise SetupError("VK-страницы ведущих — список id пользователей VK.")
    if "early_close" in values and values["early_close"] not in {e.value for e in EarlyClose}:
        raise SetupError("Правило досрочного закрытия: «большинство» или «все».")
    if "theme" in values and values["theme"] not in THEMES:
        raise SetupError("Нет такой темы оформления.")
    if "time_zone" in values:
        try:
            ZoneInfo(str(values["time_zone"]))
        except (ZoneInfoNotFoundError, ValueError):
            raise SetupError(f"Неизвестный часовой пояс «{values['time_zone']}».") from None


def _gm_users(usernames: Iterable[Any]) -> list[Any]:
    users = list(usernames)
    for user in users:
        if not (user.is_active and user.is_staff):
            raise SetupError(f"{user.get_username()} не может быть ведущим: нет доступа к панели.")
    return users


@transaction.atomic
def game_open(
    *,
    name: str,
    counts: RoleCounts,
    gm: Any,
    co_gms: Sequence[Any] = (),
    **settings: Any,
) -> Game:
    """Create a game from the panel: ``gm`` and ``co_gms`` become its GMs."""
    _check_settings({"name": name, **settings})
    game = game_create(name=name, counts=counts, gm=gm, by=f"gm:{gm.get_username()}", **settings)
    extra = [u for u in _gm_users(co_gms) if u.pk != gm.pk]
    if extra:
        game.gms.add(*extra)
        log_event(game, "gms_changed", by=f"gm:{gm.get_username()}",
                  gms=sorted(u.get_username() for u in [gm, *extra]))
    return game


@transaction.atomic
def game_settings_update(
    *,
    game_id: int,
    by: str,
    counts: RoleCounts | None = None,
    gms: Sequence[Any] | None = None,
    **values: Any,
) -> Game:
    """Change a game's settings. Role counts only during recruitment; nothing once finished."""
    game = lock_game(game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise InvalidCommand("Игра завершена: настройки больше не меняются.")
    unknown = set(values) - set(SETTINGS_FIELDS)
    if unknown:
        raise InvalidCommand(f"Нельзя изменить: {', '.join(sorted(unknown))}.")
    _check_settings(values)
    changed: dict[str, Any] = {}
    if counts is not None:
        current = RoleCounts(
            game.mafia_count, game.commissar_count, game.doctor_count, game.maniac_count,
            game.civilian_count,
        )
        if counts != current:
            if game.status != GameStatus.RECRUITING:
                raise SetupError("Состав ролей меняется только до раздачи.")
            if round_was_dealt(game):
                # Other counts would give the same roster another deal from the same seed.
                raise SetupError(render("gm/counts_after_deal"))
            counts.validate()
            for role, value in counts.as_dict().items():
                setattr(game, f"{role}_count", value)
            changed["counts"] = counts.as_dict()
    for key, value in values.items():
        if key == "name":
            value = str(value).strip()[:200]
        if getattr(game, key) != value:
            setattr(game, key, value)
            changed[key] = str(value) if isinstance(value, timedelta) else value
    if changed:
        check_vk_tenancy(game)
        try:
            with transaction.atomic():
                game.save()
        except IntegrityError as error:
            raise SetupError(tenancy_refusal(error)) from None
        log_event(game, "settings_changed", by=by, changed=changed)
        if {"topic_id", "recruit_topic_id"} & set(changed):
            announce_round(game)
    if gms is not None:
        users = _gm_users(gms)
        if not users:
            raise SetupError("У игры должен быть хотя бы один ведущий.")
        before = {u.pk for u in game.gms.all()}
        if before != {u.pk for u in users}:
            game.gms.set(users)
            log_event(game, "gms_changed", by=by,
                      gms=sorted(u.get_username() for u in users))
    return game


def staff_users() -> Any:
    """Accounts that may be made GMs (active staff)."""
    return get_user_model().objects.filter(is_active=True, is_staff=True).order_by("username")


# --- players and reserves --------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerLine:
    vk_user_id: int
    name: str


def parse_player_lines(text: str) -> list[PlayerLine]:
    """Lines «ссылка или id [имя]» (a tab, ``;`` or spaces between them). Raises
    ``InvalidCommand`` naming the first bad line; duplicates are refused too."""
    out: list[PlayerLine] = []
    seen: dict[int, int] = {}
    for n, line in enumerate((text or "").splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        parts = re.split(r"[\t;]|\s+", line, maxsplit=1)
        ref, name = parts[0], parts[1] if len(parts) > 1 else ""
        try:
            vk_id = parse_vk_user(ref)
        except InvalidCommand as e:
            raise InvalidCommand(f"Строка {n}: {e.reason}") from None
        if vk_id in seen:
            raise InvalidCommand(f"Строка {n}: id{vk_id} уже есть в строке {seen[vk_id]}.")
        seen[vk_id] = n
        out.append(PlayerLine(vk_id, name.strip(" \t;")[:200]))
    if not out:
        raise InvalidCommand("Список пуст: по одной ссылке или id на строку.")
    return out


@transaction.atomic
def player_add(
    *, game_id: int, by: str, vk: str | int, name: str = "", reserve: bool = False
) -> Seat:
    """Sign a VK user up (or put them in the reserve) on the GM's behalf."""
    vk_id = vk if isinstance(vk, int) else parse_vk_user(vk)
    return signup_create(
        game_id=game_id, vk_user_id=vk_id, name=(name or "").strip() or f"id{vk_id}",
        reserve=reserve, by=by,
    )


@transaction.atomic
def players_add_bulk(
    *, game_id: int, by: str, text: str, reserve: bool = False
) -> list[Seat]:
    """Add many players at once: all of them, or (on any refusal) none."""
    lines = parse_player_lines(text)
    seats = []
    for line in lines:
        try:
            seats.append(player_add(game_id=game_id, by=by, vk=line.vk_user_id, name=line.name,
                                    reserve=reserve))
        except InvalidCommand as e:
            raise InvalidCommand(f"id{line.vk_user_id}: {e.reason} Никто не добавлен.") from None
    return seats


class DiscardNotConfirmed(InvalidCommand):
    """Removing this player would discard the deal, which the GM did not confirm."""

    default_reason = "Роли уже розданы: снятие игрока сбросит раздачу. Подтвердите это."


@transaction.atomic
def player_remove(*, game_id: int, by: str, seat_id: int, discard: bool = True) -> Seat:
    """Withdraw a sign-up or a reserve entry on the GM's behalf (see ``signup_withdraw``).

    ``discard=False``: refuse (``DiscardNotConfirmed``, nothing changes) if the removal would
    discard the deal, checked under the game's lock, so a deal made after the GM confirmed a
    plain removal is not discarded unseen."""
    game = lock_game(game_id)
    seat = Seat.objects.filter(pk=seat_id, game_id=game_id).first()
    if seat is None or seat.status == SeatStatus.WITHDRAWN:
        raise InvalidCommand("Такого игрока нет в списках этой игры.")
    if seat.status == SeatStatus.PLAYER and seat.number is not None:
        if game.status == GameStatus.RUNNING:
            raise InvalidCommand("Игра идёт: вместо снятия используйте замену или модкилл.")
    if not discard and seat.status == SeatStatus.PLAYER and game.status == GameStatus.DEALT:
        raise DiscardNotConfirmed()
    return signup_withdraw(game_id=game_id, vk_user_id=seat.vk_user_id, by=by)


# --- phases ------------------------------------------------------------------------------------


class OutcomeChanged(InvalidCommand):
    """The close the GM confirmed would now do something else (a vote or an action came in)."""

    default_reason = "Пока страница была открыта, итог изменился: проверьте его ещё раз."


@transaction.atomic
def phase_close_confirmed(
    *, game_id: int, by: str, phase_id: int, fingerprint: str, now: datetime | None = None
) -> DayResult | NightResolution:
    """«Закрыть день/ночь сейчас» as confirmed on its page: under the game's lock, only while
    phase ``phase_id`` is still open and closing it would still do what the page showed (its
    ``close_preview`` fingerprint); else ``OutcomeChanged`` / ``InvalidCommand``, and nothing
    changes. Checked here, not in the view, so a vote arriving between the check and the close
    cannot slip in."""
    game = lock_game(game_id)
    preview = close_preview(game)
    if preview is None or preview.phase.pk != phase_id:
        raise InvalidCommand("Фаза уже сменилась: обновите страницу.")
    if preview.fingerprint != fingerprint:
        raise OutcomeChanged()
    if preview.phase.kind == PhaseKind.DAY:
        return day_close(game_id=game_id, by=by, now=now)
    return night_close(game_id=game_id, by=by, now=now)



@transaction.atomic
def phase_extend(
    *, game_id: int, by: str, minutes: int, now: datetime | None = None
) -> datetime:
    """Move the open phase's deadline later by ``minutes`` (from now if it has passed or
    there was none). Reminders whose time is again ahead will be sent again."""
    now = now_or(now)
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1:
        raise InvalidCommand("Продлить можно на целое число минут, не меньше одной.")
    delta = timedelta(minutes=minutes)
    if delta > MAX_EXTENSION:
        raise InvalidCommand("Продлить можно не больше чем на 30 дней за раз.")
    game = lock_game(game_id)
    if game.status != GameStatus.RUNNING:
        raise InvalidCommand("Игра сейчас не идёт.")
    phase = current_phase(game)
    if phase is None or phase.status != PhaseStatus.OPEN:
        raise InvalidCommand("Продлить можно только открытую фазу.")
    before = phase.deadline
    base = before if before is not None and before > now else now
    phase.deadline = base + delta
    phase.reminded = [m for m in phase.reminded or []
                      if phase.deadline - timedelta(minutes=int(m)) <= now]
    phase.save(update_fields=["deadline", "reminded"])
    log_event(
        game, "deadline_extended", by=by, phase=phase, minutes=minutes,
        before=before.isoformat() if before else None, deadline=phase.deadline.isoformat(),
    )
    post_board(game, render("board/deadline_extended", kind=phase.kind, number=phase.number,
                            deadline=when(phase.deadline, game.time_zone)),
               kind="deadline_extended")
    return phase.deadline


# --- spectator chat (RULES.md G6) ------------------------------------------------------------


def chat_peer_id(value: int) -> int:
    """A chat's peer id from its peer id (2000000005) or its number in the community (5)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidCommand("Укажите номер беседы или её peer_id.")
    peer = value if value > CHAT_PEER_BASE else CHAT_PEER_BASE + value
    if peer - CHAT_PEER_BASE > 100_000_000:
        raise InvalidCommand("Такого номера беседы не бывает.")
    return peer


@transaction.atomic
def spectator_chat_link(*, game_id: int, by: str, chat: int) -> Game:
    """Link the game to an existing VK chat (the community must be its admin)."""
    game = lock_game(game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise InvalidCommand("Игра завершена.")
    peer = chat_peer_id(chat)
    before = game.spectator_chat_id
    game.spectator_chat_id = peer
    check_vk_tenancy(game)
    try:
        with transaction.atomic():
            game.save(update_fields=["spectator_chat_id"])
    except IntegrityError as error:
        raise SetupError(tenancy_refusal(error)) from None
    log_event(game, "spectator_chat_linked", by=by, peer_id=peer, before=before)
    return game


@transaction.atomic
def spectator_chat_create(*, game_id: int, by: str) -> Outbox:
    """Ask the community to create the spectator chat itself (``messages.createChat``, group
    token: the community is then the chat's owner and admin). The GMs' own VK accounts
    (``gm_vk_ids``) are put in it, as far as VK lets the community add them. The delivery sends
    the request at most once; when VK answers, :func:`spectator_chat_created` links the chat.

    Refused while the game is over, while its spectator chat is open (players hold links to
    it), or while an earlier request is still waiting for VK. A linked but closed chat is
    replaced when the new one is created."""
    game = lock_game(game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise InvalidCommand("Игра завершена.")
    if game.spectator_chat_open:
        raise InvalidCommand(
            "Беседа зрителей открыта: игроки уже получили ссылки на неё. Новую беседу можно "
            "создать, только пока беседа закрыта."
        )
    waiting = Outbox.objects.filter(
        game=game, channel=OutboxChannel.CREATE_CHAT, status=OutboxStatus.PENDING
    )
    if waiting.exists():
        raise InvalidCommand("Беседа уже создаётся: дождитесь ответа VK.")
    title = render("spectators/chat_title", game=game.name)
    users = sorted({int(x) for x in game.gm_vk_ids or [] if str(x).isdigit()} - {0})
    row = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.CREATE_CHAT,
        text=title,
        payload={"title": title, "user_ids": users, "by": by},
        kind="spectator_chat_create",
    )
    request_delivery()
    log_event(game, "spectator_chat_create_requested", by=by, title=title, outbox=row.pk,
              user_ids=users, before=game.spectator_chat_id)
    return row


def spectator_chat_created(*, outbox: Outbox, peer_id: int, added: Sequence[int]) -> bool:
    """VK created the chat of a ``create_chat`` row: log it and link it to the row's game
    (``spectator_chat_link``, as the GM who asked). Called by ``settle.delivery_settle`` inside
    its transaction, after it locked the game. A game that ended or opened its spectator chat
    meanwhile keeps its chat: the GM gets a flag with the new chat's number instead. Returns
    whether the chat was linked."""
    game = lock_game(int(outbox.game_id))
    payload = outbox.payload or {}
    log_event(game, "spectator_chat_created", peer_id=peer_id, outbox=outbox.pk,
              title=payload.get("title", outbox.text), added=sorted(int(a) for a in added))
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED) or game.spectator_chat_open:
        line = render("gm/chat_created_not_linked", id=outbox.pk, chat=peer_id - CHAT_PEER_BASE,
                      open_chat=game.spectator_chat_open)
        add_flag_line(outbox, line)
        return False
    try:
        with transaction.atomic():
            spectator_chat_link(
                game_id=game.pk, by=str(payload.get("by") or "system"), chat=peer_id
            )
    except SetupError as refusal:  # another unfinished game holds that chat (never seen)
        add_flag_line(outbox, refusal.reason)
        return False
    return True


@transaction.atomic
def spectator_chat_set_open(*, game_id: int, by: str, open: bool) -> Game:
    """Open or close the spectator chat. Opening tells the eligible dead (G6) how to join."""
    game = lock_game(game_id)
    if open and game.status != GameStatus.RUNNING:
        raise InvalidCommand("Открыть беседу зрителей можно только в идущей игре.")
    if open and game.spectator_chat_id is None:
        raise InvalidCommand("Сначала привяжите беседу: укажите её номер или peer_id.")
    if game.spectator_chat_open == open:
        raise InvalidCommand("Беседа уже открыта." if open else "Беседа уже закрыта.")
    game.spectator_chat_open = open
    game.save(update_fields=["spectator_chat_open"])
    log_event(game, "spectator_chat_opened" if open else "spectator_chat_closed", by=by)
    if open:
        eligible = [s.vk_user_id for s in players(game) if spectator_eligible(s)]
        if eligible:
            send_message(game, eligible, render("player/spectators_opened"), kind="spectators")
        post_board(game, render("board/spectators_opened"), kind="spectators")
    else:
        post_board(game, render("board/spectators_closed"), kind="spectators")
    return game


def spectator_eligible(seat: Seat) -> bool:
    """G6 (:func:`gameplay.rules.spectators.may_watch`) for a seated player of a running game."""
    return (
        seat.status == SeatStatus.PLAYER
        and seat.number is not None
        and may_watch(alive=seat.alive, role=seat.role)
    )


# --- moderation flags and deliveries -----------------------------------------------------------


@transaction.atomic
def flag_resolve(
    *, game_id: int, flag_id: int, by: str, acted: bool, note: str = "",
    punish: str = "", seat: int | None = None, now: datetime | None = None,
) -> ModerationFlag:
    """Dismiss a moderation flag, or mark it acted on (the GM's decision, with a note).

    ``punish`` acts on it in the same transaction: ``"penalty"`` gives seat ``seat`` a strike
    (``strike_give``), ``"modkill"`` removes the player (``seat_modkill``)."""
    game = lock_game(game_id)
    flag = ModerationFlag.objects.filter(pk=flag_id, game=game).first()
    if flag is None:
        raise InvalidCommand("Такой отметки нет в этой игре.")
    if flag.status != FlagStatus.OPEN:
        raise InvalidCommand("Эта отметка уже рассмотрена.")
    if punish:
        if punish not in ("penalty", "modkill") or seat is None:
            raise InvalidCommand("Неизвестное решение по отметке.")
        acted = True
        if punish == "penalty":
            strike_give(game_id=game_id, seat=seat, by=by, reason=note, now=now)
        else:
            seat_modkill(game_id=game_id, seat=seat, by=by, reason=note, now=now)
        game.refresh_from_db()
    flag.status = FlagStatus.ACTED if acted else FlagStatus.DISMISSED
    flag.note = (f"{_PUNISH_NOTES[punish]}. " if punish else "") + (note or "").strip()
    flag.resolved_by = by
    flag.resolved_at = now_or(now)
    flag.save(update_fields=["status", "note", "resolved_by", "resolved_at"])
    log_event(game, "flag_resolved", by=by, flag=flag.pk, flag_kind=flag.kind,
              status=flag.status, note=flag.note, seat=seat)
    return flag


_PUNISH_NOTES = {"penalty": "Штраф", "modkill": "Модкилл"}


def outbox_retry_all(*, game_id: int, by: str) -> int:
    """Queue again every delivery of the game that failed, wholly or for some recipients
    (``retries.outbox_retry`` for each, in one transaction); returns how many rows."""
    with transaction.atomic():
        lock_game(game_id)
        ids = list(
            retryable_outbox(game_id)
            .exclude(channel=OutboxChannel.CREATE_CHAT)  # asked for anew, never re-sent
            .order_by("id")
            .values_list("pk", flat=True)
        )
        if not ids:
            raise InvalidCommand("Недоставленных сообщений нет.")
        done: set[int] = set()
        for pk in ids:
            if pk in done:
                continue  # queued with a board post it was merged with
            row = outbox_retry(game_id=game_id, outbox_id=pk, by=by)
            done.add(row.pk)
            done.update(board_group(row))
    return len(ids)
