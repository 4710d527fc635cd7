"""Reads for the GM panel: the game page, who has not voted or acted, vote histories, the night
draft, the event log and a player's history across games.

``game_page`` costs a fixed number of queries whatever the number of players, phases and votes:
each table is read once and joined in Python.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max, Q, QuerySet

from gameplay.models import (
    Draw,
    FlagStatus,
    Game,
    GameEvent,
    GameStatus,
    ItemUse,
    ModerationFlag,
    NightAction,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
    SpectatorMember,
    Strike,
    Vote,
)
from gameplay.rules import (
    Act,
    Ballot,
    DayInput,
    DayResult,
    NightInput,
    NightResolution,
    Role,
    Slot,
    Table,
    Winner,
    close_day,
    resolve_night,
)
from gameplay.rules.roles import ACT_TITLES, DUTY_ROLES, ITEM_TITLES, ROLE_TITLES, Item
from gameplay.rules.spectators import may_watch
from gameplay.selectors.table import standing_submissions, table_of

# --- access ------------------------------------------------------------------------------------


def games_for(user: Any) -> QuerySet[Game]:
    """The games a user may see and run: their own, or all for a superuser."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Game.objects.none()
    if user.is_superuser:
        return Game.objects.all()
    return Game.objects.filter(gms=user)


# --- who has not voted / acted -----------------------------------------------------------------


@dataclass(frozen=True)
class Pending:
    not_voted: list[Seat] = field(default_factory=list)
    not_acted: list[Seat] = field(default_factory=list)
    mafia_shot_missing: bool = False
    #: Living mafia members a reminder would reach while the team has no shot.
    mafia_waiting: int = 0

    @property
    def to_remind(self) -> int:
        """How many players a reminder now would reach (as ``deadlines.phase_remind``)."""
        return len(self.not_voted) + len(self.not_acted) + self.mafia_waiting


def _pending(
    phase: Phase, seats: Sequence[Seat], votes: Iterable[Vote], actions: Iterable[NightAction]
) -> Pending:
    """Living players who have not voted (day) or sent their role action (night), and whether
    the mafia has no shot yet (the same people ``selectors.deadlines.pending_actors`` finds,
    from rows already loaded)."""
    living = [s for s in seats if s.alive and s.number is not None]
    if phase.kind == PhaseKind.DAY:
        voted = {v.voter_id for v in votes if v.current and not v.void}
        return Pending(not_voted=[s for s in living if s.pk not in voted])
    standing = [a for a in actions if a.current]
    acted = {a.actor_id for a in standing if a.slot == Slot.ROLE}
    shot = any(a.slot == Slot.MAFIA_SHOT for a in standing)
    mafia = sum(1 for s in living if s.role == Role.MAFIA)
    missing = mafia > 0 and not shot
    waiting = mafia if missing else 0
    if phase.reopened_for == Slot.MAFIA_SHOT:
        return Pending(mafia_shot_missing=missing, mafia_waiting=waiting)
    duty = [s for s in living if s.role in DUTY_ROLES and s.pk not in acted]
    return Pending(not_acted=duty, mafia_shot_missing=missing, mafia_waiting=waiting)


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
    #: «у игрока», «использована в ночь 2», «пропала (владелец выбыл)».
    item_state: str
    state: str
    strikes: int
    #: Penalty votes announced and not yet tallied (they count in the current/next day).
    penalty_pending: int
    vote_history: list[DayVotes]
    #: The current phase: the voter's standing vote, or the actor's submissions this night.
    current_vote: VoteCell | None = None
    night_actions: list[ActionCell] = field(default_factory=list)
    replaced_from: list[str] = field(default_factory=list)
    spectator_eligible: bool = False


@dataclass
class TallyRow:
    number: int
    name: str
    votes: int
    penalty: int
    voters: list[int]

    @property
    def total(self) -> int:
        return self.votes + self.penalty


@dataclass
class PhaseSummary:
    phase: Phase
    title: str
    lines: list[str]


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


#: «использована в ночь 2» / «пропала»: the verb agrees with the item's name.
_ITEM_USED = {Item.CLOCK: "использованы", Item.RED_BUTTON: "использована",
              Item.BOOK: "использована"}
_ITEM_LOST = {Item.CLOCK: "пропали", Item.RED_BUTTON: "пропала", Item.BOOK: "пропала"}


def _item_text(seat: Seat, use: ItemUse | None, night: int | None) -> str:
    """Where a seat's item stands: held, used on night N, or lost with its holder."""
    if not seat.item:
        return ""
    item = Item(seat.item)
    if use is not None or seat.item_used:
        when = f" в ночь {night}" if night else ""
        blocked = " (игрок был под часами: не сработала)" if use is not None and use.blocked else ""
        return f"{_ITEM_USED[item]}{when}{blocked}"
    if not seat.alive:
        return f"{_ITEM_LOST[item]} (владелец выбыл)"
    return "у игрока"


def item_states(game: Game, seats: Iterable[Seat]) -> dict[int, str]:
    """``_item_text`` of each seat holding an item, by seat pk (one query)."""
    uses = {u.seat_id: u for u in ItemUse.objects.filter(game=game).select_related("phase")}
    return {s.pk: _item_text(s, uses.get(s.pk), uses[s.pk].phase.number if s.pk in uses
                             else None) for s in seats if s.item}


def _state_text(seat: Seat, phases: dict[int, Phase]) -> str:
    if seat.alive:
        return "жив"
    phase = phases.get(seat.died_in_id) if seat.died_in_id else None
    when = f" ({phase})" if phase else ""
    return f"{seat.get_death_cause_display().lower() or 'выбыл'}{when}"


def _phase_lines(phase: Phase, names: dict[int, str]) -> list[str]:
    def label(n: int | None) -> str:
        return f"№{n} {names.get(n, '')}".strip() if n else "—"

    result = phase.result or {}
    lines: list[str] = []
    if phase.status == PhaseStatus.DONE and "executed" not in result and "final" not in result:
        return ["прервана: игра окончена"]
    if phase.kind == PhaseKind.DAY:
        if phase.status != PhaseStatus.DONE:
            return ["идёт голосование"]
        for n in result.get("modkilled", []):
            lines.append(f"модкилл за штрафы: {label(n)}")
        executed = result.get("executed")
        lines.append(f"казнён {label(executed)}" if executed else "никто не казнён")
        if phase.closed_early:
            lines.append("закрыт досрочно")
        return lines
    final = result.get("final")
    if final is None:
        return ["на проверке у ведущего" if phase.status == PhaseStatus.REVIEW
                else "идёт приём действий"]
    deaths = final.get("deaths", [])
    lines.append("погибли: " + ", ".join(label(n) for n in deaths) if deaths
                 else "никто не погиб")
    for n in final.get("modkilled", []):
        lines.append(f"модкилл за штрафы: {label(n)}")
    if final.get("gm_edits"):
        lines.append("правка ведущего")
    return lines


def game_page(game: Game) -> GamePage:
    """Everything the game page shows, in a fixed number of queries."""
    seats = list(Seat.objects.filter(game=game).order_by("number", "signed_up_at", "id"))
    phases = list(Phase.objects.filter(game=game).order_by("opened_at", "id"))
    votes = list(Vote.objects.filter(phase__game=game).order_by("created_at", "id"))
    actions = list(NightAction.objects.filter(phase__game=game).order_by("created_at", "id"))
    strikes = list(Strike.objects.filter(seat__game=game).order_by("created_at", "id"))
    replacements = list(Replacement.objects.filter(seat__game=game).order_by("created_at"))
    uses = {u.seat_id: u for u in ItemUse.objects.filter(game=game)}
    gms = list(game.gms.order_by("username").values_list("username", flat=True))
    draws = list(Draw.objects.filter(
        game=game, deal_round=Draw.objects.filter(game=game).values("game")
        .annotate(m=Max("deal_round")).values("m")[:1]
    ))
    open_flags = ModerationFlag.objects.filter(game=game, status=FlagStatus.OPEN).count()
    failed = retryable_outbox(game).count()

    by_pk = {s.pk: s for s in seats}
    phase_by_pk = {p.pk: p for p in phases}
    players = [s for s in seats if s.status == SeatStatus.PLAYER and s.number is not None]
    names = {s.number: s.name for s in players}
    current = next((p for p in reversed(phases)
                    if p.status in (PhaseStatus.OPEN, PhaseStatus.REVIEW)), None)

    def vcell(v: Vote) -> VoteCell:
        target = by_pk.get(v.target_id)
        return VoteCell(target.number if target else None, target.name if target else "",
                        v.early, v.current, v.void)

    history: dict[int, dict[int, list[VoteCell]]] = defaultdict(lambda: defaultdict(list))
    for v in votes:
        phase = phase_by_pk.get(v.phase_id)
        if phase is not None:
            history[v.voter_id][phase.number].append(vcell(v))

    def acell(a: NightAction) -> ActionCell:
        target = by_pk.get(a.target_id)
        return ActionCell(a.act, ACT_TITLES[Act(a.act)], target.number if target else None,
                          ROLE_TITLES[Role(a.guess)].lower() if a.guess else "", a.current)

    night_actions: dict[int, list[ActionCell]] = defaultdict(list)
    current_votes: dict[int, VoteCell] = {}
    cur_votes = [v for v in votes if current and v.phase_id == current.pk]
    cur_actions = [a for a in actions if current and a.phase_id == current.pk]
    for a in cur_actions:
        night_actions[a.actor_id].append(acell(a))
    for v in cur_votes:
        if v.current:
            current_votes[v.voter_id] = vcell(v)

    penalty_day = None
    if current is not None:
        penalty_day = current.number if current.kind == PhaseKind.DAY else current.number + 1
    pending_penalty: dict[int, int] = defaultdict(int)
    for s in strikes:
        if not s.forgiven and s.penalty_day is not None and s.penalty_day == penalty_day:
            pending_penalty[s.seat_id] += s.penalty_votes
    repl: dict[int, list[str]] = defaultdict(list)
    for r in replacements:
        repl[r.seat_id].append(f"{r.old_name} (id{r.old_vk_user_id})")

    rows = [
        SeatRow(
            seat=s,
            role_title=ROLE_TITLES[Role(s.role)] if s.role else "",
            item_title=ITEM_TITLES[Item(s.item)] if s.item else "",
            item_state=_item_text(s, uses.get(s.pk), phase_by_pk[uses[s.pk].phase_id].number
                                  if s.pk in uses else None),
            state=_state_text(s, phase_by_pk),
            strikes=s.strikes,
            penalty_pending=pending_penalty.get(s.pk, 0),
            vote_history=[DayVotes(day, cells) for day, cells in sorted(history[s.pk].items())],
            current_vote=current_votes.get(s.pk),
            night_actions=night_actions.get(s.pk, []),
            replaced_from=repl.get(s.pk, []),
            spectator_eligible=may_watch(alive=s.alive, role=s.role),
        )
        for s in players
    ]
    page = GamePage(
        game=game,
        phase=current,
        phases=[PhaseSummary(p, str(p), _phase_lines(p, names)) for p in phases],
        seats=rows,
        signups=[s for s in seats if s.status == SeatStatus.PLAYER and s.number is None],
        reserves=[s for s in seats if s.status == SeatStatus.RESERVE],
        gms=gms,
        strikes=strikes,
        draws=draws,
        open_flags=open_flags,
        failed_outbox=failed,
        living=[s for s in players if s.alive],
    )
    if current is None or game.status != GameStatus.RUNNING:
        return page
    page.pending = _pending(current, players, cur_votes, cur_actions)
    if current.kind == PhaseKind.DAY:
        _fill_day(page, current, players, cur_votes, strikes)
    else:
        shot = next((a for a in cur_actions if a.current and a.slot == Slot.MAFIA_SHOT), None)
        if shot is not None:
            page.mafia_shot = acell(shot)
            page.mafia_shooter = by_pk[shot.actor_id].number
        if current.status == PhaseStatus.REVIEW and current.result:
            page.draft = current.result.get("draft")
    return page


def _fill_day(
    page: GamePage, phase: Phase, players: list[Seat], votes: list[Vote], strikes: list[Strike]
) -> None:
    table, day = _day_input(phase, players, votes, strikes)
    ballots, carried = day.ballots, day.carried_penalties
    living = table.alive_numbers
    rows: dict[int, TallyRow] = {}
    names = {s.number: s.name for s in players}
    for b in ballots.values():
        if b.voter in living and b.target in living:
            row = rows.setdefault(b.target, TallyRow(b.target, names[b.target], 0, 0, []))
            row.votes += 1
            row.voters.append(b.voter)
    for number, votes_ in carried.items():
        if votes_ and number in living:
            row = rows.setdefault(number, TallyRow(number, names[number], 0, 0, []))
            row.penalty += votes_
    page.tally = sorted(rows.values(), key=lambda r: (-r.total, r.number))
    for row in page.tally:
        row.voters.sort()
    page.early_votes = sorted((b.voter, b.target) for b in ballots.values() if b.early)
    page.projection = close_day(table, day)


def _day_input(
    phase: Phase, players: list[Seat], votes: Iterable[Vote], strikes: Iterable[Strike]
) -> tuple[Table, DayInput]:
    """The rules' input of closing this day now, from rows already loaded (what
    ``services.day._close`` reads from the database)."""
    by_pk = {s.pk: s for s in players}
    votes = list(votes)
    standing = [v for v in votes if v.current and not v.void
                and v.voter_id in by_pk and v.target_id in by_pk]
    ballots = {
        by_pk[v.voter_id].number: Ballot(by_pk[v.voter_id].number, by_pk[v.target_id].number,
                                         v.early)
        for v in standing
    }
    carried: dict[int, int] = defaultdict(int)
    for s in strikes:
        if not s.forgiven and s.penalty_day == phase.number and s.seat_id in by_pk:
            carried[by_pk[s.seat_id].number] += s.penalty_votes
    excused = frozenset(
        by_pk[v.voter_id].number for v in votes
        if v.current and v.void and v.voter_id in by_pk
    ) - set(ballots)
    day = DayInput(number=phase.number, ballots=ballots,
                   carried_penalties={n: v for n, v in carried.items() if v}, excused=excused)
    return table_of(players), day


# --- what closing the open phase now would do ---------------------------------------------------


@dataclass
class ClosePreview:
    """What «Закрыть день/ночь сейчас» would do, computed by the rules from the phase's rows as
    the closing service reads them. ``fingerprint`` changes whenever the outcome would: the
    confirmation page carries it, and a close confirmed on an outdated page is shown again."""

    phase: Phase
    day: DayResult | None
    night: NightResolution | None
    names: dict[int, str]
    roles: dict[int, str]
    #: The night is published at its close (no review): its deaths are final at once.
    publishes: bool
    fingerprint: str

    @property
    def winner(self) -> Winner | None:
        result = self.day or self.night
        return Winner(result.winner) if result and result.winner else None


def close_preview(game: Game) -> ClosePreview | None:
    """What closing the game's open phase now would do; None when no phase is open."""
    phase = (Phase.objects.filter(game=game, status=PhaseStatus.OPEN).order_by("-id").first()
             if game.status == GameStatus.RUNNING else None)
    if phase is None:
        return None
    seats = list(Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False)
                 .order_by("number"))
    day = night = None
    if phase.kind == PhaseKind.DAY:
        votes = Vote.objects.filter(phase=phase)
        strikes = Strike.objects.filter(seat__game=game, penalty_day=phase.number)
        table, day_input = _day_input(phase, seats, votes, strikes)
        day = close_day(table, day_input)
        outcome: dict[str, Any] = day.as_dict()
    else:
        night = resolve_night(table_of(seats), NightInput.from_submissions(
            phase.number, standing_submissions(phase)))
        outcome = night.as_dict()
    digest = hashlib.sha256(json.dumps([phase.pk, outcome], sort_keys=True, default=str)
                            .encode()).hexdigest()[:16]
    return ClosePreview(
        phase=phase, day=day, night=night,
        names={s.number: s.name for s in seats},
        roles={s.number: s.role for s in seats},
        publishes=phase.kind == PhaseKind.NIGHT and game.auto_publish,
        fingerprint=digest,
    )


# --- smaller pages -----------------------------------------------------------------------------


@dataclass
class RosterRow:
    seat: Seat
    #: «жив», «казнён (День 2)», «убит ночью (Ночь 1)», «модкилл (День 3)».
    state: str


@dataclass
class Roster:
    rows: list[RosterRow]
    alive: int
    killed: int
    executed: int
    modkilled: int


def roster(game: Game) -> Roster:
    """The seated players with whether each is alive or how and when they left the game."""
    seats = list(Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False)
                 .select_related("died_in").order_by("number"))
    rows = [RosterRow(s, _state_text(s, {s.died_in_id: s.died_in} if s.died_in_id else {}))
            for s in seats]

    def dead(cause: str) -> int:
        return sum(1 for s in seats if not s.alive and s.death_cause == cause)

    return Roster(rows=rows, alive=sum(1 for s in seats if s.alive), killed=dead("night"),
                  executed=dead("executed"), modkilled=dead("modkill"))


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
    actor: str = "",
    overrides: bool = False,
    seat: int | None = None,
) -> QuerySet[GameEvent]:
    """The game's event log, newest first, filtered."""
    qs = GameEvent.objects.filter(game=game).select_related("phase").order_by("-seq")
    if kind:
        qs = qs.filter(kind=kind)
    if phase_id:
        qs = qs.filter(phase_id=phase_id)
    if actor:
        qs = qs.filter(actor__in=actors_matching(game, actor))
    if overrides:
        qs = qs.filter(override=True)
    if seat:
        qs = qs.filter(
            Q(actor=f"seat:{seat}") | Q(data__seat=seat) | Q(data__voter=seat)
            | Q(data__actor=seat) | Q(data__target=seat)
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
    from django.contrib.auth import get_user_model

    seats = Seat.objects.filter(game=game).values_list("number", "vk_user_id", "name", "status")
    vk: dict[int, str] = {}
    numbers: dict[int, str] = {}
    for r in Replacement.objects.filter(seat__game=game).values_list(
            "old_vk_user_id", "old_name", "new_vk_user_id", "new_name"):
        vk[r[0]], vk[r[2]] = r[1], r[3]
    for number, vk_id, name, status in seats:
        vk[vk_id] = name
        if number is not None and status == SeatStatus.PLAYER:
            numbers[number] = name
    usernames = {a[3:] for a in actors if a.startswith("gm:")}
    users = get_user_model().objects.filter(username__in=usernames) if usernames else []
    gms = {u.get_username(): (u.get_full_name() or u.get_username()) for u in users}
    return PeopleNames(seats=numbers, vk=vk, gms=gms)


def actors_matching(game: Game, text: str) -> list[str]:
    """The log's actors a GM means by «Кто»: a seat number or a player's name, a GM's name,
    «по сроку», «бот» — as the log shows them (``panel.labels.actor_label``)."""
    text = text.strip().lower().removeprefix("№").removeprefix("ведущий").strip()
    actors = set(GameEvent.objects.filter(game=game).values_list("actor", flat=True))
    names = people_names(game, actors)
    fixed = {"system": "бот", "deadline": "по сроку", "replay": "сценарий"}
    found = []
    for a in actors:
        kind, _, value = a.partition(":")
        said = fixed.get(a, "")
        if kind == "seat" and value.isdigit():
            said = f"{value} {names.seats.get(int(value), '')}"
        elif kind == "gm":
            said = f"{value} {names.gms.get(value, '')}"
        elif kind == "vk" and value.isdigit():
            said = names.vk.get(int(value), "")
        if text.isdigit():
            if kind == "seat" and value == text:
                found.append(a)
        elif text and (text in said.lower() or text in a.lower()):
            found.append(a)
    return found


def event_kinds(game: Game) -> list[str]:
    return sorted(set(GameEvent.objects.filter(game=game).values_list("kind", flat=True)))


def _retryable() -> Q:
    """Deliveries the GM may retry: failed, or sent to some of their recipients only."""
    return Q(status=OutboxStatus.FAILED) | Q(status=OutboxStatus.SENT, result__has_key="failed")


def retryable_outbox(game: Game | int) -> QuerySet[Outbox]:
    """The game's deliveries the GM may retry (``_retryable``)."""
    return Outbox.objects.filter(game=game).filter(_retryable())


def outbox_rows(game: Game, status: str = "") -> QuerySet[Outbox]:
    """The game's deliveries, newest first; ``failed`` includes the partly delivered."""
    if status == OutboxStatus.FAILED:
        return retryable_outbox(game).order_by("-id")
    qs = Outbox.objects.filter(game=game).order_by("-id")
    return qs.filter(status=status) if status else qs


def flags_of(game: Game, *, open_only: bool = False) -> list[ModerationFlag]:
    qs = ModerationFlag.objects.filter(game=game).select_related("seat", "phase")
    if open_only:
        qs = qs.filter(status=FlagStatus.OPEN)
    return list(qs.order_by("status", "-created_at"))


@dataclass
class SpectatorPage:
    eligible: list[Seat]
    members: list[SpectatorMember]
    joined: int
    removed: int
    #: The latest request to create the chat (``create_chat``), if any.
    creation: Outbox | None = None
    #: The linked chat's title, when the community created it (VK does not tell it otherwise).
    chat_title: str = ""


def spectator_page(game: Game) -> SpectatorPage:
    seats = [s for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER,
                                            number__isnull=False).order_by("number")
             if may_watch(alive=s.alive, role=s.role)]
    members = list(SpectatorMember.objects.filter(game=game).select_related("seat")
                   .order_by("status", "-updated_at"))
    creation = (Outbox.objects.filter(game=game, channel=OutboxChannel.CREATE_CHAT)
                .order_by("-id").first())
    title = ""
    if (creation is not None and game.spectator_chat_id
            and (creation.result or {}).get("peer_id") == game.spectator_chat_id):
        title = creation.text
    return SpectatorPage(
        chat_title=title,
        eligible=list(seats),
        members=members,
        joined=sum(1 for m in members if m.status == "joined"),
        removed=sum(1 for m in members if m.status == "removed"),
        creation=creation,
    )


# --- «Мои игры» ---------------------------------------------------------------------------------


@dataclass
class MyGame:
    game: Game
    phase: Phase | None
    players: int
    #: Seats the game's role table needs.
    needed: int
    open_flags: int
    failed_outbox: int

    @property
    def draft_waiting(self) -> bool:
        return self.phase is not None and self.phase.status == PhaseStatus.REVIEW

    @property
    def needs_attention(self) -> bool:
        return bool(self.draft_waiting or self.open_flags or self.failed_outbox)


#: How many ended games «Мои игры» lists below the active ones.
RECENT_ENDED = 5


def my_games(user: Any) -> tuple[list[MyGame], list[Game]]:
    """The user's active games (recruiting, dealt, running: what each needs from its GM now)
    and their latest ended ones; a fixed number of queries."""
    visible = games_for(user)
    active = list(visible.filter(status__in=[GameStatus.RECRUITING, GameStatus.DEALT,
                                             GameStatus.RUNNING]).order_by("-created_at"))
    ended = list(visible.exclude(pk__in=[g.pk for g in active])
                 .order_by("-created_at")[:RECENT_ENDED])
    ids = [g.pk for g in active]
    phases = {p.game_id: p for p in Phase.objects.filter(
        game_id__in=ids, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])}

    def per_game(qs: QuerySet[Any]) -> dict[int, int]:
        return dict(qs.values("game").annotate(n=Count("id")).values_list("game", "n"))

    seats = per_game(Seat.objects.filter(game_id__in=ids, status=SeatStatus.PLAYER))
    flags = per_game(ModerationFlag.objects.filter(game_id__in=ids, status=FlagStatus.OPEN))
    failed = per_game(Outbox.objects.filter(game_id__in=ids).filter(_retryable()))
    rows = [
        MyGame(
            game=g, phase=phases.get(g.pk), players=seats.get(g.pk, 0),
            needed=g.mafia_count + g.commissar_count + g.doctor_count + g.maniac_count
            + g.civilian_count,
            open_flags=flags.get(g.pk, 0), failed_outbox=failed.get(g.pk, 0),
        )
        for g in active
    ]
    # What needs the GM first, then the nearest deadline.
    rows.sort(key=lambda r: (not r.needs_attention, r.phase is None,
                             r.phase.deadline.timestamp() if r.phase and r.phase.deadline
                             else float("inf")))
    return rows, ended
