"""A player's history across games, by VK user id: games, roles, results and wins.

Roles of a game stay secret until its end, so a viewer sees finished games and the games they
run; other GMs' unfinished games are left out without a trace (not even counted: that a player
sits in one is that game's business). History is per community: finished games of a community
the viewer does not belong to are shown only when that community opened its history
(``Community.history_public``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from gameplay.models import Community, Game, GameStatus, Replacement, Seat, SeatStatus
from gameplay.rules import Faction, Role, Winner

from .communities import communities_for
from .games import games_for

#: What a game came to for the player (``HistoryRow.result``); the panel words each
#: (templates/panel/history.html).
RESULTS = ("won", "lost", "draw", "no_winner", "cancelled", "passed", "reserve", "playing")


@dataclass
class HistoryRow:
    game: Game
    number: int | None
    name: str
    #: The role's and the item's codes ("" if none).
    role: str
    item: str
    #: The seat whose state (alive, or how they left) the row shows; None when it shows none
    #: (no role yet, or the seat was handed to someone else).
    seat: Seat | None
    #: One of ``RESULTS``.
    result: str
    won: bool | None
    #: Who took the seat over, when the player handed it on.
    passed_to: str = ""
    #: The viewer runs this game (the panel may link to it).
    mine: bool = False


@dataclass
class PlayerHistory:
    vk_user_id: int
    rows: list[HistoryRow]
    games: int
    wins: int
    #: (role code, games, wins), by role.
    by_role: list[tuple[str, int, int]]
    #: The name the player last played under in a game the viewer may see (None if none).
    name: str | None = None


def _won(role: str, winner: str) -> bool | None:
    if not role or not winner or winner == Winner.DRAW:
        return None
    faction = Role(role).faction
    return {Faction.MAFIA: Winner.MAFIA, Faction.TOWN: Winner.TOWN, Faction.NEUTRAL: Winner.MANIAC}[
        faction
    ] == winner


def _result(game: Game, role: str, replaced_out: bool) -> tuple[str, bool | None]:
    if game.status == GameStatus.CANCELLED:
        return "cancelled", None
    if game.status != GameStatus.FINISHED:
        return "playing", None
    if replaced_out:
        return "passed", None
    if not game.winner:
        return "no_winner", None
    if game.winner == Winner.DRAW:
        return "draw", None
    won = _won(role, game.winner)
    return ("won" if won else "lost"), won


#: A seat the user sat in: the seat, the name they played under, whether they handed it on,
#: and to whom.
_Entry = tuple[Seat, str, bool, str]


def _entries(vk_user_id: int) -> list[_Entry]:
    """Every seat the user signed up for (withdrawals aside), then every seat they handed on,
    each newest first."""
    seats = (
        Seat.objects.filter(vk_user_id=vk_user_id)
        .exclude(status=SeatStatus.WITHDRAWN)
        .select_related("game")
        .order_by("-game__created_at")
    )
    left = (
        Replacement.objects.filter(old_vk_user_id=vk_user_id)
        .select_related("seat__game")
        .order_by("-created_at")
    )
    return [(s, s.name, False, "") for s in seats] + [
        (r.seat, r.old_name, True, r.new_name) for r in left
    ]


def _visible(viewer: Any) -> tuple[set[int], set[int]]:
    """The games the viewer runs (pks), and the communities whose finished games the viewer
    may see (VK ids): their own, and the ones with an open history."""
    mine = set(games_for(viewer).values_list("pk", flat=True))
    seen = set(communities_for(viewer).values_list("vk_id", flat=True)) | set(
        Community.objects.filter(history_public=True).values_list("vk_id", flat=True)
    )
    return mine, seen


def _shown(game: Game, mine: set[int], seen: set[int]) -> bool:
    """Whether the viewer sees ``game`` in a history: one they run, or one finished (or
    cancelled) in a community they may see."""
    if game.pk in mine:
        return True
    public = game.status in (GameStatus.FINISHED, GameStatus.CANCELLED)
    return public and (game.vk_group_id is None or game.vk_group_id in seen)


def _row(entry: _Entry, mine: set[int]) -> HistoryRow:
    seat, name, replaced_out, passed_to = entry
    game = seat.game
    if seat.status == SeatStatus.RESERVE and not replaced_out:
        result, won = "reserve", None
    else:
        result, won = _result(game, seat.role, replaced_out)
    return HistoryRow(
        game=game,
        number=seat.number,
        name=name,
        role=seat.role,
        item=seat.item,
        seat=None if replaced_out or not seat.role else seat,
        result=result,
        won=won,
        passed_to=passed_to,
        mine=game.pk in mine,
    )


def player_history(vk_user_id: int, viewer: Any) -> PlayerHistory:
    """The games of a VK user: finished ones of the viewer's communities and of communities
    with an open history, and any game the viewer runs. Other GMs' unfinished games are left
    out altogether."""
    mine, seen = _visible(viewer)
    rows = [_row(e, mine) for e in _entries(vk_user_id) if _shown(e[0].game, mine, seen)]
    played = [r for r in rows if r.won is not None]
    by_role: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in played:
        by_role[r.role][0] += 1
        by_role[r.role][1] += int(bool(r.won))
    return PlayerHistory(
        vk_user_id=vk_user_id,
        rows=rows,
        games=len({r.game.pk for r in rows if r.number is not None}),
        wins=sum(1 for r in played if r.won),
        by_role=sorted((role, g, w) for role, (g, w) in by_role.items()),
        name=rows[0].name if rows else None,
    )
