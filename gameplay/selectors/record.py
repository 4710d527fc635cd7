"""The game's record for the panel: the roster, the item draws, the event log and the names it
refers to, the deliveries and the moderation flags."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from gameplay.models import (
    Actor,
    DealRound,
    Draw,
    FlagStatus,
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Phase,
    Replacement,
    Seat,
    SeatStatus,
    Strike,
)


def died_in(seat: Seat, phases: Mapping[int, Phase | None]) -> Phase | None:
    """The phase a seat left the game in (``phases``: the phases by pk); None if alive. How
    it left is ``seat.death_cause``; the panel words both (``panel_tags.state``)."""
    if seat.alive or not seat.died_in_id:
        return None
    return phases.get(seat.died_in_id)


def strikes_of(game: Game) -> list[Strike]:
    """Every strike of the game, newest first, with its seat and phase."""
    return list(
        Strike.objects.filter(seat__game=game)
        .select_related("seat", "phase")
        .order_by("-created_at", "-id")
    )


def phases_of(game: Game) -> list[Phase]:
    """The game's phases in the order they opened."""
    return list(Phase.objects.filter(game=game).order_by("opened_at"))


def deal_rounds(game: Game) -> list[DealRound]:
    """The game's deal rounds (their seeds are for the end of the game only)."""
    return list(DealRound.objects.filter(game=game))


# --- smaller pages -----------------------------------------------------------------------------


@dataclass
class RosterRow:
    seat: Seat
    #: The phase the player left the game in (None if alive): «казнена (День 2)».
    died_in: Phase | None


@dataclass
class Roster:
    rows: list[RosterRow]
    alive: int
    killed: int
    executed: int
    modkilled: int


def roster(game: Game) -> Roster:
    """The seated players with whether each is alive or how and when they left the game."""
    seats = list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False)
        .select_related("died_in")
        .order_by("number")
    )
    rows = [
        RosterRow(s, died_in(s, {s.died_in_id: s.died_in} if s.died_in_id else {})) for s in seats
    ]

    def dead(cause: str) -> int:
        return sum(1 for s in seats if not s.alive and s.death_cause == cause)

    return Roster(
        rows=rows,
        alive=sum(1 for s in seats if s.alive),
        killed=dead("night"),
        executed=dead("executed"),
        modkilled=dead("modkill"),
    )


def draw_rounds(game: Game) -> list[tuple[int, list[Draw]]]:
    """Every item draw of the game, grouped by deal round (newest round first)."""
    rounds: dict[int, list[Draw]] = defaultdict(list)
    for d in Draw.objects.filter(game=game).order_by("-deal_round", "attempt"):
        rounds[d.deal_round].append(d)
    return list(rounds.items())


def event_log(
    game: Game,
    *,
    kind: str = "",
    phase_id: int | None = None,
    actors: Collection[str] | None = None,
    overrides: bool = False,
    seat: int | None = None,
) -> QuerySet[GameEvent]:
    """The game's event log, newest first, filtered (``actors``: the entries of these actors
    only, e.g. ``actors_matching``'s)."""
    qs = GameEvent.objects.filter(game=game).select_related("phase").order_by("-seq")
    if kind:
        qs = qs.filter(kind=kind)
    if phase_id:
        qs = qs.filter(phase_id=phase_id)
    if actors is not None:
        qs = qs.filter(actor__in=actors)
    if overrides:
        qs = qs.filter(override=True)
    if seat:
        qs = qs.filter(
            Q(actor=Actor.seat(seat))
            | Q(data__seat=seat)
            | Q(data__voter=seat)
            | Q(data__actor=seat)
            | Q(data__target=seat)
        )
    return qs


@dataclass
class PeopleNames:
    #: Seat number → the name of its player now.
    seats: dict[int, str]
    #: VK user id → the name they signed up or took a seat with in this game.
    vk: dict[int, str]
    #: GM username → the name they go by (full name, else the username).
    gms: dict[str, str]


def people_names(game: Game, actors: Iterable[str] = ()) -> PeopleNames:
    """The names the event log's entries of this game refer to (three queries)."""
    seats = Seat.objects.filter(game=game).values_list("number", "vk_user_id", "name", "status")
    vk: dict[int, str] = {}
    numbers: dict[int, str] = {}
    for r in Replacement.objects.filter(seat__game=game).values_list(
        "old_vk_user_id", "old_name", "new_vk_user_id", "new_name"
    ):
        vk[r[0]], vk[r[2]] = r[1], r[3]
    for number, vk_id, name, status in seats:
        vk[vk_id] = name
        if number is not None and status == SeatStatus.PLAYER:
            numbers[number] = name
    usernames = {Actor(a).ref for a in actors if Actor(a).kind == "gm"}
    users = get_user_model().objects.filter(username__in=usernames) if usernames else []
    gms = {u.get_username(): (u.get_full_name() or u.get_username()) for u in users}
    return PeopleNames(seats=numbers, vk=vk, gms=gms)


def actors_matching(game: Game, text: str, shown: Callable[[str, PeopleNames], str]) -> list[str]:
    """The log's actors a GM means by «Кто»: a seat number, or part of what the log shows for
    an actor (``shown``: the panel's words, «№15 Юлия Анисимова», «ведущий Анна», «по сроку»)
    or of the actor's own id («gm:anna»)."""
    text = " ".join(text.lower().split()).removeprefix("№").strip()
    actors = set(GameEvent.objects.filter(game=game).values_list("actor", flat=True))
    names = people_names(game, actors)
    if text.isdigit():
        return [a for a in actors if a == Actor.seat(text)]
    return [a for a in actors if text and (text in shown(a, names).lower() or text in a.lower())]


def event_kinds(game: Game) -> list[str]:
    """The kinds the game's log has, each once (the database's DISTINCT, not every event)."""
    kinds = GameEvent.objects.filter(game=game).order_by().values_list("kind", flat=True)
    return sorted(set(kinds.distinct()))


def retryable_q() -> Q:
    """Deliveries the GM may retry: failed, or sent to some of their recipients only."""
    return Q(status=OutboxStatus.FAILED) | Q(status=OutboxStatus.SENT, result__has_key="failed")


def retryable_outbox(game: Game | int) -> QuerySet[Outbox]:
    """The game's deliveries the GM may retry (``_retryable``)."""
    return Outbox.objects.filter(game=game).filter(retryable_q())


def outbox_rows(game: Game, status: str = "") -> QuerySet[Outbox]:
    """The game's deliveries, newest first; ``failed`` includes the partly delivered."""
    if status == OutboxStatus.FAILED:
        return retryable_outbox(game).order_by("-id")
    qs = Outbox.objects.filter(game=game).order_by("-id")
    return qs.filter(status=status) if status else qs


def outbox_totals(game: Game) -> dict[str, int]:
    """How many of the game's deliveries are in each status; ``failed`` counts the partly
    delivered too (``retryable_outbox``)."""
    totals = {s.value: Outbox.objects.filter(game=game, status=s).count() for s in OutboxStatus}
    totals[OutboxStatus.FAILED] = retryable_outbox(game).count()
    return totals


def flags_of(game: Game, *, open_only: bool = False) -> list[ModerationFlag]:
    qs = ModerationFlag.objects.filter(game=game).select_related("seat", "phase")
    if open_only:
        qs = qs.filter(status=FlagStatus.OPEN)
    return list(qs.order_by("status", "-created_at"))
