"""The GM's game page: seats, votes, actions, strikes, the tally and who has not voted or
acted yet (the open phase's part: :mod:`.open_phase`).

``game_page`` costs a fixed number of queries whatever the number of players, phases and votes:
each table is read once and joined in Python.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from django.db.models import Max

from gameplay.messages import Person
from gameplay.models import (
    Draw,
    FlagStatus,
    Game,
    GameStatus,
    ItemUse,
    ModerationFlag,
    NightAction,
    Phase,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.rules import Act, DayResult, Role, Slot
from gameplay.rules.roles import ACT_TITLES, ITEM_TITLES, ROLE_TITLES, Item
from gameplay.rules.spectators import may_watch

from .open_phase import Pending, TallyRow, day_tally, pending
from .record import died_in, retryable_outbox

# --- the game page -----------------------------------------------------------------------------


@dataclass
class VoteCell:
    target: int | None
    target_name: str
    early: bool
    current: bool
    void: bool


@dataclass
class DayVotes:
    day: int
    votes: list[VoteCell]


@dataclass
class ActionCell:
    act: str
    title: str
    target: int | None
    guess: str
    current: bool


@dataclass
class SeatRow:
    seat: Seat
    role_title: str
    item_title: str
    #: Where the item stands (None without one): «у игрока», «использована в ночь 2»…
    item_state: ItemState | None
    #: The phase the player left the game in (None if alive); how: ``seat.death_cause``.
    died_in: Phase | None
    strikes: int
    #: Penalty votes announced and not yet tallied (they count in the current/next day).
    penalty_pending: int
    vote_history: list[DayVotes]
    #: The current phase: the voter's standing vote, or the actor's submissions this night.
    current_vote: VoteCell | None = None
    night_actions: list[ActionCell] = field(default_factory=list)
    replaced_from: list[str] = field(default_factory=list)
    spectator_eligible: bool = False


@dataclass(frozen=True)
class ItemState:
    """Where a seat's item stands: held, ``used`` (on night ``night``; ``blocked``: its holder
    was under the clock, so it did not work) or ``lost`` with its holder. The panel words it
    (templates/panel/_item_state.html)."""

    item: str
    used: bool = False
    night: int | None = None
    blocked: bool = False
    lost: bool = False


@dataclass(frozen=True)
class PhaseOutcome:
    """What a phase came to, for the game page's list of phases; the panel words it
    (templates/panel/_phase_outcome.html)."""

    kind: str
    #: "interrupted" (the game ended during it), "open" (votes or actions being taken),
    #: "review" (a night under the GM's review) or "done".
    stage: str
    executed: Person | None = None
    #: Removed at the close for their strikes.
    modkilled: list[Person] = field(default_factory=list)
    #: A day closed early (RULES.md V6).
    early: bool = False
    #: Who died in the night.
    deaths: list[Person] = field(default_factory=list)
    #: The GM edited the night's outcome.
    edited: bool = False


@dataclass
class PhaseSummary:
    phase: Phase
    title: str
    outcome: PhaseOutcome


@dataclass
class GamePage:
    game: Game
    phase: Phase | None
    phases: list[PhaseSummary]
    seats: list[SeatRow]
    signups: list[Seat]
    reserves: list[Seat]
    gms: list[str]
    strikes: list[Strike]
    draws: list[Draw]
    open_flags: int
    failed_outbox: int
    tally: list[TallyRow] = field(default_factory=list)
    projection: DayResult | None = None
    early_votes: list[tuple[int, int]] = field(default_factory=list)
    pending: Pending = field(default_factory=Pending)
    mafia_shot: ActionCell | None = None
    mafia_shooter: int | None = None
    draft: dict[str, Any] | None = None
    living: list[Seat] = field(default_factory=list)

    @property
    def by_number(self) -> dict[int, Seat]:
        return {r.seat.number: r.seat for r in self.seats if r.seat.number is not None}


def _item_state(seat: Seat, use: ItemUse | None, night: int | None) -> ItemState | None:
    """Where a seat's item stands: held, used on night N, or lost with its holder."""
    if not seat.item:
        return None
    if use is not None or seat.item_used:
        return ItemState(seat.item, used=True, night=night, blocked=use is not None and use.blocked)
    return ItemState(seat.item, lost=not seat.alive)


def item_states(game: Game, seats: Iterable[Seat]) -> dict[int, ItemState | None]:
    """``_item_state`` of each seat holding an item, by seat pk (one query)."""
    uses = {u.seat_id: u for u in ItemUse.objects.filter(game=game).select_related("phase")}
    return {
        s.pk: _item_state(s, uses.get(s.pk), uses[s.pk].phase.number if s.pk in uses else None)
        for s in seats
        if s.item
    }


def _outcome(phase: Phase, people: dict[int, Person]) -> PhaseOutcome:
    def who(n: int) -> Person:
        return people.get(n) or Person(n, "")

    result = phase.result or {}
    kind = phase.kind
    if phase.status == PhaseStatus.DONE and "executed" not in result and "final" not in result:
        return PhaseOutcome(kind, "interrupted")
    if kind == PhaseKind.DAY:
        if phase.status != PhaseStatus.DONE:
            return PhaseOutcome(kind, "open")
        executed = result.get("executed")
        return PhaseOutcome(
            kind,
            "done",
            executed=who(executed) if executed else None,
            modkilled=[who(n) for n in result.get("modkilled", [])],
            early=phase.closed_early,
        )
    final = result.get("final")
    if final is None:
        return PhaseOutcome(kind, "review" if phase.status == PhaseStatus.REVIEW else "open")
    return PhaseOutcome(
        kind,
        "done",
        deaths=[who(n) for n in final.get("deaths", [])],
        modkilled=[who(n) for n in final.get("modkilled", [])],
        edited=bool(final.get("gm_edits")),
    )


@dataclass
class _Rows:
    """The game's rows the page is made of, each table read once."""

    seats: list[Seat]
    phases: list[Phase]
    votes: list[Vote]
    actions: list[NightAction]
    strikes: list[Strike]
    replacements: list[Replacement]
    uses: dict[int, ItemUse]
    gms: list[str]
    draws: list[Draw]
    open_flags: int
    failed: int
    by_pk: dict[int, Seat] = field(default_factory=dict)
    phase_by_pk: dict[int, Phase] = field(default_factory=dict)

    def vcell(self, v: Vote) -> VoteCell:
        target = self.by_pk.get(v.target_id)
        return VoteCell(
            target.number if target else None,
            target.name if target else "",
            v.early,
            v.current,
            v.void,
        )

    def acell(self, a: NightAction) -> ActionCell:
        target = self.by_pk.get(a.target_id)
        return ActionCell(
            a.act,
            ACT_TITLES[Act(a.act)],
            target.number if target else None,
            ROLE_TITLES[Role(a.guess)].lower() if a.guess else "",
            a.current,
        )


def _read(game: Game) -> _Rows:
    rows = _Rows(
        seats=list(Seat.objects.filter(game=game).order_by("number", "signed_up_at", "id")),
        phases=list(Phase.objects.filter(game=game).order_by("opened_at", "id")),
        votes=list(Vote.objects.filter(phase__game=game).order_by("created_at", "id")),
        actions=list(NightAction.objects.filter(phase__game=game).order_by("created_at", "id")),
        strikes=list(Strike.objects.filter(seat__game=game).order_by("created_at", "id")),
        replacements=list(Replacement.objects.filter(seat__game=game).order_by("created_at")),
        uses={u.seat_id: u for u in ItemUse.objects.filter(game=game)},
        gms=list(game.gms.order_by("username").values_list("username", flat=True)),
        draws=list(
            Draw.objects.filter(
                game=game,
                deal_round=Draw.objects.filter(game=game)
                .values("game")
                .annotate(m=Max("deal_round"))
                .values("m")[:1],
            )
        ),
        open_flags=ModerationFlag.objects.filter(game=game, status=FlagStatus.OPEN).count(),
        failed=retryable_outbox(game).count(),
    )
    rows.by_pk = {s.pk: s for s in rows.seats}
    rows.phase_by_pk = {p.pk: p for p in rows.phases}
    return rows


def _seat_rows(
    game: Game, rows: _Rows, players: list[Seat], current: Phase | None
) -> list[SeatRow]:
    """A row per seated player: role, item, state, strikes, votes and this phase's actions."""
    history: dict[int, dict[int, list[VoteCell]]] = defaultdict(lambda: defaultdict(list))
    for v in rows.votes:
        phase = rows.phase_by_pk.get(v.phase_id)
        if phase is not None:
            history[v.voter_id][phase.number].append(rows.vcell(v))
    night_actions: dict[int, list[ActionCell]] = defaultdict(list)
    current_votes: dict[int, VoteCell] = {}
    for a in rows.actions:
        if current and a.phase_id == current.pk:
            night_actions[a.actor_id].append(rows.acell(a))
    for v in rows.votes:
        if current and v.phase_id == current.pk and v.current:
            current_votes[v.voter_id] = rows.vcell(v)
    penalty_day = None
    if current is not None:
        penalty_day = current.number if current.kind == PhaseKind.DAY else current.number + 1
    pending_penalty: dict[int, int] = defaultdict(int)
    for s in rows.strikes:
        if not s.forgiven and s.penalty_day is not None and s.penalty_day == penalty_day:
            pending_penalty[s.seat_id] += s.penalty_votes
    repl: dict[int, list[str]] = defaultdict(list)
    for r in rows.replacements:
        repl[r.seat_id].append(f"{r.old_name} (id{r.old_vk_user_id})")
    over = game.status == GameStatus.FINISHED  # G6: then every player of the game may watch
    uses, phase_by_pk = rows.uses, rows.phase_by_pk
    return [
        SeatRow(
            seat=s,
            role_title=ROLE_TITLES[Role(s.role)] if s.role else "",
            item_title=ITEM_TITLES[Item(s.item)] if s.item else "",
            item_state=_item_state(
                s, uses.get(s.pk), phase_by_pk[uses[s.pk].phase_id].number if s.pk in uses else None
            ),
            died_in=died_in(s, phase_by_pk),
            strikes=s.strikes,
            penalty_pending=pending_penalty.get(s.pk, 0),
            vote_history=[DayVotes(day, cells) for day, cells in sorted(history[s.pk].items())],
            current_vote=current_votes.get(s.pk),
            night_actions=night_actions.get(s.pk, []),
            replaced_from=repl.get(s.pk, []),
            spectator_eligible=may_watch(alive=s.alive, role=s.role, game_over=over),
        )
        for s in players
    ]


def game_page(game: Game) -> GamePage:
    """Everything the game page shows, in a fixed number of queries."""
    rows = _read(game)
    seats, phases = rows.seats, rows.phases
    players = [s for s in seats if s.status == SeatStatus.PLAYER and s.number is not None]
    people = {cast(int, s.number): Person.of(s) for s in players}
    current = next(
        (p for p in reversed(phases) if p.status in (PhaseStatus.OPEN, PhaseStatus.REVIEW)), None
    )
    page = GamePage(
        game=game,
        phase=current,
        phases=[PhaseSummary(p, str(p), _outcome(p, people)) for p in phases],
        seats=_seat_rows(game, rows, players, current),
        signups=[s for s in seats if s.status == SeatStatus.PLAYER and s.number is None],
        reserves=[s for s in seats if s.status == SeatStatus.RESERVE],
        gms=rows.gms,
        strikes=rows.strikes,
        draws=rows.draws,
        open_flags=rows.open_flags,
        failed_outbox=rows.failed,
        living=[s for s in players if s.alive],
    )
    if current is None or game.status != GameStatus.RUNNING:
        return page
    cur_votes = [v for v in rows.votes if v.phase_id == current.pk]
    cur_actions = [a for a in rows.actions if a.phase_id == current.pk]
    page.pending = pending(current, players, cur_votes, cur_actions)
    if current.kind == PhaseKind.DAY:
        day = day_tally(current, players, cur_votes, rows.strikes)
        page.tally, page.early_votes, page.projection = day.tally, day.early_votes, day.projection
    else:
        shot = next((a for a in cur_actions if a.current and a.slot == Slot.MAFIA_SHOT), None)
        if shot is not None:
            page.mafia_shot = rows.acell(shot)
            page.mafia_shooter = rows.by_pk[shot.actor_id].number
        if current.status == PhaseStatus.REVIEW and current.result:
            page.draft = current.result.get("draft")
    return page
