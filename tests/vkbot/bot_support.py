"""Games built through the services, raw VK updates as VK sends them, and the check that no
message to a player says more than their role entitles them to (RULES.md).

Seats are dealt with a fixed deal (``game_deal_fixed``) so a test knows who is who: in the
7-player table seats 1–2 are the mafia, 3 the commissar, 4 the doctor, 5 the maniac, 6–7
civilians; the clock is with seat 1, the red button with 6, the book with 7. Seat ``n`` of a
game made with ``vk_base=B`` is VK user ``B + n``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any, cast

from django.db import transaction

from bench.games import day_votes
from gameplay import services, unit_of_work
from gameplay.models import (
    Actor,
    DeathCause,
    Game,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
)
from gameplay.rules import Item, Role, RoleCounts
from tests.gameplay.factories import community_id
from vkbot.handlers import VkFacts, dispatch
from vkbot.keyboards import labels_of

GROUP_ID = 77
CHAT_PEER = 2_000_000_005

NAMES_7 = ["Аня Петрова", "Борис", "Вера", "Глеб", "Дарья", "Аня Смирнова", "Фёдор"]

ROLES_7: dict[int, tuple[Role, Item | None]] = {
    1: (Role.MAFIA, Item.CLOCK),
    2: (Role.MAFIA, None),
    3: (Role.COMMISSAR, None),
    4: (Role.DOCTOR, None),
    5: (Role.MANIAC, None),
    6: (Role.CIVILIAN, Item.RED_BUTTON),
    7: (Role.CIVILIAN, Item.BOOK),
}

_topics = itertools.count(500_001)
_events = itertools.count(1)
_posts = itertools.count(9_000_001)


def roles_26() -> dict[int, tuple[Role, Item | None]]:
    roles: dict[int, tuple[Role, Item | None]] = {}
    for n in range(1, 27):
        role = (
            Role.MAFIA
            if n <= 6
            else {7: Role.COMMISSAR, 8: Role.DOCTOR, 9: Role.MANIAC}.get(n, Role.CIVILIAN)
        )
        roles[n] = (role, None)
    roles[1] = (Role.MAFIA, Item.CLOCK)
    roles[10] = (Role.CIVILIAN, Item.RED_BUTTON)
    roles[11] = (Role.CIVILIAN, Item.BOOK)
    return roles


def make_game(
    roles: dict[int, tuple[Role, Item | None]] | None = None,
    *,
    vk_base: int = 1000,
    names: list[str] | None = None,
    start: bool = True,
    **settings: Any,
) -> Game:
    roles = roles or ROLES_7
    n = len(roles)
    names = names or (NAMES_7 if n == 7 else [f"Игрок {i}" for i in range(1, n + 1)])
    counted = [r for r, _ in roles.values()]
    counts = RoleCounts(**{r.value: counted.count(r) for r in Role})
    settings.setdefault("topic_id", next(_topics))
    settings.setdefault("recruit_topic_id", next(_topics))
    settings["vk_group_id"] = community_id(settings.get("vk_group_id"))
    game = services.game_create(
        name="Машина времени", counts=counts, by=Actor.gm("test"), **settings
    )
    entries = [services.SignupEntry(vk_base + i, names[i - 1]) for i in range(1, n + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    if start:
        services.game_deal_fixed(game_id=game.pk, assignment=roles, by=Actor.gm("test"))
        services.game_start(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    return game


def seat(game: Game, number: int) -> Seat:
    return Seat.objects.get(game=game, number=number, status=SeatStatus.PLAYER)


def phase(game: Game) -> Phase:
    return Phase.objects.filter(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]).get()


def tie_day(game: Game) -> None:
    """Everyone votes so that Day ends in a tie without strikes; the day closes."""
    living = cast(
        "list[int]",  # the players' seats have their numbers
        list(
            Seat.objects.filter(game=game, status=SeatStatus.PLAYER, alive=True)
            .order_by("number")
            .values_list("number", flat=True)
        ),
    )
    # One transaction with the unit of work kept, as the pipeline applies a burst of votes
    # (the same outcome, tests/vkbot/test_pipeline_batches.py): a fraction of the queries.
    with transaction.atomic(), unit_of_work.kept():
        for voter, target in day_votes(living).items():
            services.vote_submit(game_id=game.pk, voter=voter, target=target)
    services.day_close(game_id=game.pk, by=Actor.gm("test"))


def to_night(game: Game) -> Phase:
    tie_day(game)
    return phase(game)


def kill(game: Game, number: int) -> None:
    """A GM modkill (the simplest way to make a player dead)."""
    services.seat_modkill(game_id=game.pk, seat=number, by=Actor.gm("test"), reason="тест")


# --- raw VK updates --------------------------------------------------------------------------


def _update(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": kind,
        "event_id": f"ev{next(_events)}",
        "v": "5.199",
        "object": obj,
        "group_id": GROUP_ID,
    }


def pm(from_id: int, text: str = "", payload: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": next(_events),
        "date": 1,
        "from_id": from_id,
        "peer_id": from_id,
        "out": 0,
        "text": text,
        "conversation_message_id": 1,
        "attachments": [],
    }
    if payload is not None:
        message["payload"] = payload
    return _update(
        "message_new",
        {
            "message": message,
            "client_info": {
                "button_actions": ["text", "callback"],
                "keyboard": True,
                "inline_keyboard": True,
            },
        },
    )


def press(user_id: int, payload: Any) -> dict[str, Any]:
    return _update(
        "message_event",
        {
            "user_id": user_id,
            "peer_id": user_id,
            "event_id": f"cb{next(_events)}",
            "payload": payload,
            "conversation_message_id": 3,
        },
    )


def board_post(topic_id: int, from_id: int, text: str, post_id: int | None = None) -> dict:
    return _update(
        "board_post_new",
        {
            "id": post_id or next(_posts),
            "from_id": from_id,
            "date": 1,
            "text": text,
            "topic_id": topic_id,
            "topic_owner_id": -GROUP_ID,
        },
    )


def board_edit(topic_id: int, from_id: int, post_id: int, text: str) -> dict[str, Any]:
    return _update(
        "board_post_edit",
        {
            "id": post_id,
            "from_id": from_id,
            "date": 1,
            "text": text,
            "topic_id": topic_id,
            "topic_owner_id": -GROUP_ID,
        },
    )


def board_delete(topic_id: int, post_id: int) -> dict[str, Any]:
    return _update(
        "board_post_delete", {"id": post_id, "topic_id": topic_id, "topic_owner_id": -GROUP_ID}
    )


def chat_action(peer_id: int, member_id: int, kind: str, from_id: int | None = None) -> dict:
    message = {
        "id": 0,
        "date": 1,
        "from_id": from_id or member_id,
        "peer_id": peer_id,
        "out": 0,
        "text": "",
        "action": {"type": kind, "member_id": member_id},
        "conversation_message_id": 9,
    }
    return _update("message_new", {"message": message, "client_info": {}})


def chat_text(peer_id: int, from_id: int, text: str) -> dict[str, Any]:
    """An ordinary message in a chat."""
    message = {
        "id": 0,
        "date": 1,
        "from_id": from_id,
        "peer_id": peer_id,
        "out": 0,
        "text": text,
        "conversation_message_id": 10,
    }
    return _update("message_new", {"message": message, "client_info": {}})


def run(update: dict[str, Any], facts: VkFacts | None = None) -> list[Outbox]:
    """Dispatch as the pipeline does (inside a transaction); the Outbox rows it wrote."""
    last = Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with transaction.atomic():
        dispatch(update, facts)
    return list(Outbox.objects.filter(pk__gt=last).order_by("id"))


def to_user(rows: Iterable[Outbox], vk_user_id: int) -> list[Outbox]:
    return [r for r in rows if r.channel == OutboxChannel.MESSAGE and vk_user_id in r.peer_ids]


def texts_to(rows: Iterable[Outbox], vk_user_id: int) -> str:
    return "\n---\n".join(r.text for r in to_user(rows, vk_user_id))


def board_rows(rows: Iterable[Outbox]) -> list[Outbox]:
    return [r for r in rows if r.channel == OutboxChannel.BOARD]


# --- what a player may learn -----------------------------------------------------------------

_ROLE_WORD: dict[str, re.Pattern[str]] = {
    Role.MAFIA: re.compile(r"(?<!\w)мафи", re.I),
    Role.COMMISSAR: re.compile(r"(?<!\w)комиссар", re.I),
    Role.DOCTOR: re.compile(r"(?<!\w)доктор", re.I),
    Role.MANIAC: re.compile(r"(?<!\w)маньяк", re.I),
    Role.CIVILIAN: re.compile(r"(?<!\w)мирн", re.I),
}
#: «(отправил №3 Аня)», «(отправитель — №3 Саша)», «№3 Аня назвала №5 …»: who sent a team
#: action.
_ACTION_OF_OTHER = re.compile(r"отправ(?:ил\w*|итель —) №|(?:назвал\w*|называет) №", re.I)
_PUBLIC_DEATHS = (DeathCause.EXECUTED, DeathCause.MODKILL)


def leaks(game: Game) -> list[str]:
    """Every private message of the game (text and button labels) that tells its reader
    another player's role or who sent a night action, beyond what RULES.md entitles them to.

    A line naming seat S together with S's actual role is a leak unless the reader is S,
    both are mafia (the team knows itself), S's role was made public (executed or modkilled,
    or the game is over), the line is about the mafia's own role strike (its guess, read by
    the mafia), or it is the commissar's check result. A line saying who sent an action
    («отправил №3») is a leak unless the reader is mafia (only team actions are told so)."""
    seats = {s.vk_user_id: s for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER)}
    by_number = {s.number: s for s in seats.values()}
    finished = Game.objects.get(pk=game.pk).status == "finished"
    found = []
    rows = Outbox.objects.filter(game=game, channel=OutboxChannel.MESSAGE).order_by("id")
    for row in rows:
        if row.kind in ("game_over", "check_result"):
            continue
        lines = row.text.splitlines() + labels_of(row.keyboard)
        for peer in row.peer_ids:
            reader = seats.get(peer)
            if reader is None:
                continue
            mafia_reader = reader.role == Role.MAFIA
            for line in lines:
                for m in re.finditer(r"№(\d+)", line):
                    other = by_number.get(int(m.group(1)))
                    if other is None or other.pk == reader.pk:
                        continue
                    team = mafia_reader and other.role == Role.MAFIA
                    public = finished or other.death_cause in _PUBLIC_DEATHS
                    strike = mafia_reader and "удар" in line.lower()
                    if _ROLE_WORD[Role(other.role)].search(line) and not (team or public or strike):
                        found.append(f"to №{reader.number} ({row.kind}): {line}")
                    if _ACTION_OF_OTHER.search(line) and not mafia_reader:
                        found.append(f"to №{reader.number} ({row.kind}): {line}")
    return found


def assert_no_leaks(game: Game) -> None:
    bad = leaks(game)
    assert not bad, "\n".join(bad)
