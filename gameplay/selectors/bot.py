"""Reads the VK bot needs: who a VK user is in which game, which game a topic or chat belongs
to, who a typed name or mention designates, valid targets and how many votes a day has had
(«статус»: :mod:`gameplay.selectors.status`; the vote count: :mod:`.vote_count`).

Inside the ingestion pipeline's transaction, ``roster``, ``current_phase``, ``game_for_topic``
and ``seats_of_user`` answer from the game rows the transaction holds locked for its hot calls
(:mod:`gameplay.unit_of_work`): the handlers read, before they call the service, the same rows
the service's unit of work holds, and a second read of them would cost a query each.

Every function costs a fixed number of queries, whatever the size of the game or the number of
other games (the bot's hot path is measured in tests).

Under ``gameplay.context.serving`` (the bot applying one community's events) the lookups by a
VK user, a topic, a chat's peer id or a button's game find only that community's games: the
same player, topic id or chat peer id means another game in another community. Outside it
nothing is filtered (the panel, the deadline tick). The filter is a condition on
``Game.vk_group_id`` (indexed) in the query that is made anyway: no query more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Q, QuerySet

from gameplay import names
from gameplay.messages import Person
from gameplay.models import (
    ACTIVE_STATUSES,
    Game,
    GameStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
    Vote,
)
from gameplay.rules import EARLY_VOTE_FROM_DAY, Act, Item, Role, SeatState
from gameplay.rules.errors import RuleViolation, UnknownTarget
from gameplay.rules.targets import night_acts
from gameplay.rules.targets import vote_targets as rules_vote_targets
from gameplay.selectors.communities import in_served_community, of_served_community
from gameplay.unit_of_work import txcache


class AmbiguousTarget(RuleViolation):
    """A name that fits several players: the reason lists their seats (public: the roster)."""

    rule = "V8"

    def __init__(self, seats: Sequence[Seat]) -> None:
        super().__init__(players=[Person.of(s) for s in seats[:10]])
        self.candidates = [s.number for s in seats]


# --- who is who ------------------------------------------------------------------------------


def active_seats(**where: Any) -> QuerySet[Seat]:
    """The seats (players and reserves) in the served communities' active games that also
    match ``where``: whose seat a private message or a button is, for every reader of it."""
    return Seat.objects.filter(
        in_served_community("game__"),
        status__in=[SeatStatus.PLAYER, SeatStatus.RESERVE],
        game__status__in=ACTIVE_STATUSES,
        **where,
    )


def seats_of_user(vk_user_id: int) -> list[Seat]:
    """The user's seats (players and reserves) in active games, with their games; one query
    (the games the bot's transaction keeps locked are not read again:
    :mod:`gameplay.unit_of_work`; a second query reads any other)."""
    kept_seats = txcache.user_seats(vk_user_id)
    if kept_seats is not None:
        return [kept_seat(s) for s in kept_seats]
    seats = active_seats(vk_user_id=vk_user_id).order_by("game_id")
    if not txcache.keeps_any():
        return list(seats.select_related("game"))
    found = list(seats)
    games = {s.game_id: kept.game for s in found if (kept := txcache.get(s.game_id))}
    missing = {s.game_id for s in found} - set(games)
    if missing:
        games.update(Game.objects.in_bulk(missing))
    for s in found:
        s.game = games[s.game_id]
    return found


def kept_seat(seat: Seat) -> Seat:
    """A seat read for the transaction (:func:`keep_seats_of_users`, the hot path's seats of
    a user), or the same seat as the transaction holds it locked when it keeps its game."""
    kept = txcache.get(seat.game_id)
    if kept is None:
        return seat
    held = next((s for s in kept.seats if s.pk == seat.pk), None)
    if held is not None:
        return held
    seat.game = kept.game  # a reserve seat: its game as held
    return seat


def keep_seats_of_users(vk_user_ids: Iterable[int]) -> None:
    """Read the seats of these users in active games (with their games) in one query, for
    :func:`seats_of_user` to answer from for the rest of the bot's transaction
    (:func:`gameplay.unit_of_work.txcache.keep_user_seats`). Nothing happens outside it."""
    users = sorted(set(vk_user_ids))
    if not users or not txcache.active():
        return
    found: dict[int, list[Seat]] = {u: [] for u in users}
    rows = active_seats(vk_user_id__in=users).select_related("game").order_by("game_id", "pk")
    for seat in rows:
        found[seat.vk_user_id].append(seat)
    txcache.keep_user_seats(found)


def active_games_of_users(vk_user_ids: Iterable[int]) -> dict[int, set[int]]:
    """The active games each of these users has a seat in (player or reserve), by user; one
    query (none for no users)."""
    users = sorted(set(vk_user_ids))
    games: dict[int, set[int]] = {u: set() for u in users}
    if users:
        rows = active_seats(vk_user_id__in=users).values_list("vk_user_id", "game_id")
        for user, game in rows:
            games[user].add(game)
    return games


def active_games_of_topics(topic_ids: Iterable[int]) -> dict[int, set[int]]:
    """The active games using each of these topics as their game or recruitment topic, by
    topic; one query (none for no topics)."""
    topics = sorted(set(topic_ids))
    games: dict[int, set[int]] = {t: set() for t in topics}
    if topics:
        rows = Game.objects.filter(
            Q(topic_id__in=topics) | Q(recruit_topic_id__in=topics),
            in_served_community(),
            status__in=ACTIVE_STATUSES,
        ).values_list("pk", "topic_id", "recruit_topic_id")
        for pk, topic, recruit in rows:
            for t in (topic, recruit):
                if t in games:
                    games[t].add(pk)
    return games


def seat_in_game(game_id: int, vk_user_id: int) -> Seat | None:
    """The user's seated place in a game (any status of the game), with the game."""
    return (
        Seat.objects.filter(
            game_id=game_id,
            vk_user_id=vk_user_id,
            status=SeatStatus.PLAYER,
            number__isnull=False,
        )
        .select_related("game")
        .first()
    )


def roster(game: Game | int) -> list[Seat]:
    """The seated players of a game, in seat order (those the bot's transaction holds locked
    when it keeps the game: :mod:`gameplay.unit_of_work.txcache`)."""
    kept = txcache.get(game)
    if kept is not None:
        return list(kept.seats)
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False).order_by(
            "number"
        )
    )


_STATUS_ORDER: dict[str, int] = {
    GameStatus.RUNNING: 0,
    GameStatus.DEALT: 1,
    GameStatus.RECRUITING: 2,
}


def games_for_topic(topic_id: int) -> list[Game]:
    """Active games using this topic as their game topic or recruitment topic (one at most
    since a topic belongs to one unfinished game: ``services.setup.check_vk_tenancy`` and the
    database; games linked before that rule may still share one); running first, then dealt,
    then recruiting, newest first. Posts in the topics of finished games are nobody's
    business."""
    games = list(
        Game.objects.filter(
            Q(topic_id=topic_id) | Q(recruit_topic_id=topic_id),
            in_served_community(),
            status__in=ACTIVE_STATUSES,
        ).order_by("-created_at", "-id")[:20]
    )
    return sorted(games, key=lambda g: _STATUS_ORDER[g.status])


def game_for_topic(topic_id: int) -> Game | None:
    """The active game whose game topic this is (one at most: a database constraint), else
    the first game recruiting in it."""
    kept = txcache.game_with_topic(topic_id)
    if kept is not None and of_served_community(kept):
        return kept
    games = games_for_topic(topic_id)
    return next((g for g in games if g.topic_id == topic_id), games[0] if games else None)


def game_for_chat(peer_id: int) -> Game | None:
    """The game whose spectator chat this is (the latest one, if several ever used it)."""
    return (
        Game.objects.filter(in_served_community(), spectator_chat_id=peer_id)
        .order_by("-created_at", "-id")
        .first()
    )


def game_by_id(game_id: int) -> Game | None:
    """A game a button names (any status; None when there is no such game)."""
    return Game.objects.filter(in_served_community(), pk=game_id).first()


def board_vote(game: Game, post_id: int) -> Vote | None:
    """The vote a post in the game's topic carried, with its voter."""
    return (
        Vote.objects.filter(phase__game=game, vk_post_id=post_id, source="board")
        .select_related("voter")
        .first()
    )


def recruiting_games() -> list[Game]:
    return list(
        Game.objects.filter(in_served_community(), status=GameStatus.RECRUITING).order_by(
            "created_at", "id"
        )
    )


def reserve_games() -> list[Game]:
    """Games that take reserves (any active game)."""
    return list(
        Game.objects.filter(in_served_community(), status__in=ACTIVE_STATUSES).order_by(
            "created_at", "id"
        )
    )


def current_phase(game: Game | int) -> Phase | None:
    kept = txcache.get(game)
    if kept is not None:
        return kept.phase
    return (
        Phase.objects.filter(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])
        .order_by("-id")
        .first()
    )


def night_closed_to(phase: Phase, seat: Seat) -> bool:
    """Whether, to this seat, the night is closed, as when the GM reviews it: under review, or
    re-opened for the mafia's shot alone (G2) and the seat not in the mafia, who must not learn
    of the re-open from any answer (it would tell them the mafia broke a rule)."""
    if phase.kind != PhaseKind.NIGHT:
        return False
    if phase.status == PhaseStatus.REVIEW:
        return True
    return bool(phase.reopened_for) and seat.role != Role.MAFIA


def find_seat(
    seats: Sequence[Seat],
    *,
    number: int | None = None,
    vk_user_id: int | None = None,
    name: str | None = None,
) -> Seat:
    """The seat a seat number, VK id or typed name designates (RULES.md V8), or a refusal:
    ``UnknownTarget``, or ``AmbiguousTarget`` listing the candidates."""
    if number is not None:
        found = [s for s in seats if s.number == number]
    elif vk_user_id is not None:
        found = [s for s in seats if s.vk_user_id == vk_user_id]
    elif name:
        found = names.match(name, ((s, s.name) for s in seats))
    else:
        found = []
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise AmbiguousTarget(sorted(found, key=lambda s: s.number or 0))
    raise UnknownTarget()


# --- targets ---------------------------------------------------------------------------------


def acts_of(seat: Seat, *, role_strike_used: bool) -> list[Act]:
    """What a living seat can send at night: role acts, then the item (the rules' answer,
    :func:`gameplay.rules.targets.night_acts`)."""
    if not seat.alive or not seat.role:
        return []
    item = Item(seat.item) if seat.item else None
    state = SeatState(seat.number or 0, Role(seat.role), item=item, item_used=seat.item_used)
    return night_acts(state, role_strike_used=role_strike_used)


def vote_targets(seats: Sequence[Seat], voter: Seat) -> list[Seat]:
    """Every other living player (:func:`gameplay.rules.targets.vote_targets`, V1)."""
    return rules_vote_targets(seats, voter.number)


def final_vote_target(phase: Phase, seats: Sequence[Seat], voter: Seat) -> Seat | None:
    """The living target of the voter's final early vote this day (RULES.md V6: from Day 3
    it cannot be changed), if they hold one; one query on such a day, none otherwise."""
    if phase.kind != PhaseKind.DAY or phase.number < EARLY_VOTE_FROM_DAY:
        return None
    target = (
        Vote.objects.filter(phase=phase, voter=voter, current=True, void=False, early=True)
        .values_list("target_id", flat=True)
        .first()
    )
    return next((s for s in seats if s.pk == target and s.alive), None)


def last_heal_target(seats: Sequence[Seat]) -> int | None:
    doctor = next((s for s in seats if s.role == Role.DOCTOR), None)
    return doctor.last_heal_target if doctor else None


def spectator_seats(vk_user_id: int) -> list[Seat]:
    """The user's seats in running or finished games whose spectator chat is open."""
    return list(
        Seat.objects.filter(
            in_served_community("game__"),
            vk_user_id=vk_user_id,
            status=SeatStatus.PLAYER,
            number__isnull=False,
            game__status__in=[GameStatus.RUNNING, GameStatus.FINISHED],
            game__spectator_chat_open=True,
            game__spectator_chat_id__isnull=False,
        )
        .select_related("game")
        .order_by("-game_id")
    )
