"""A small pure game simulator and reference models of RULES.md, for the property tests.

The simulator plays a whole game through the public rules API only (``validate_vote``,
``early_close_reached``, ``close_day``, ``validate_action``, ``NightInput.from_submissions``,
``resolve_night``, ``validate_modkill``, ``validate_replacement``, ``decide_winner``) and carries
the state between phases the way the services must: deaths, strikes, spent items, the last heal
target, the spent role strike and the penalty votes carried into the next day.

Every choice (who votes for whom, who acts, which refused junk is sent, when the GM modkills)
comes from ``rng``: in the property tests a ``random.Random`` Hypothesis builds from its own
data. At every step the simulator checks the implementation against the ``reference_*``
functions below, which are written from RULES.md and share no code with ``gameplay.rules``; a
mismatch raises ``AssertionError`` describing the phase.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import cast

from gameplay.rules import (
    Act,
    Ballot,
    DayInput,
    DayResult,
    EarlyClose,
    Item,
    NightContext,
    NightInput,
    NightResolution,
    Role,
    RoleCounts,
    RuleViolation,
    SeatState,
    Submission,
    Table,
    Winner,
    close_day,
    deal,
    decide_winner,
    early_close_reached,
    resolve_night,
    validate_action,
    validate_modkill,
    validate_replacement,
    validate_vote,
)
from gameplay.rules.errors import DeadCannotAct

# --- RULES.md, restated -----------------------------------------------------------------------

#: §1/§4: the night actions of each role (items are separate).
ROLE_ACTIONS: dict[Role, frozenset[Act]] = {
    Role.MAFIA: frozenset({Act.MAFIA_SHOT, Act.ROLE_STRIKE}),
    Role.COMMISSAR: frozenset({Act.CHECK, Act.COMMISSAR_SHOT}),
    Role.DOCTOR: frozenset({Act.HEAL}),
    Role.MANIAC: frozenset({Act.MANIAC_SHOT}),
    Role.CIVILIAN: frozenset(),
}
ITEM_OF: dict[Act, Item] = {
    Act.CLOCK: Item.CLOCK,
    Act.RED_BUTTON: Item.RED_BUTTON,
    Act.BOOK: Item.BOOK,
}
#: §4: targets may be the actor only for these.
SELF_ALLOWED = frozenset({Act.MAFIA_SHOT, Act.HEAL, Act.BOOK})
#: §4: what a role strike may name.
GUESSES = frozenset({Role.COMMISSAR, Role.DOCTOR, Role.MANIAC})
#: P1: who must act every night.
DUTY = frozenset({Role.COMMISSAR, Role.DOCTOR, Role.MANIAC})
EARLY_FROM_DAY = 3  # V6
PENALTY = 2  # P2


def reference_winner(table: Table) -> Winner | None:
    """§7: the first of the four conditions that holds, with M, K, T counted afresh."""
    roles = [s.role for s in table.seats if s.alive]
    m = roles.count(Role.MAFIA)
    k = roles.count(Role.MANIAC)
    t = len(roles) - m - k
    conditions = (
        (len(roles) == 0, Winner.DRAW),
        (m == 0 and k == 0, Winner.TOWN),
        (k == 1 and m + t <= 1, Winner.MANIAC),
        (m > 0 and m >= t + k, Winner.MAFIA),
    )
    for holds, winner in conditions:
        if holds:
            return winner
    return None


def _alive(table: Table, n: int) -> bool:
    seat = table.get(n)
    return seat is not None and seat.alive


def reference_vote_ok(
    table: Table, day: int, voter: int, target: int, current: Ballot | None
) -> bool:
    """V1, V6, V7 and P7: may ``voter`` now vote for ``target``?"""
    if not _alive(table, voter) or not _alive(table, target) or voter == target:
        return False
    locked = current is not None and current.early and day >= EARLY_FROM_DAY
    # V7: an early vote for a player removed during the day is unlocked.
    return not (locked and _alive(table, cast(Ballot, current).target))  # locked: a ballot


def reference_action_ok(
    table: Table, ctx: NightContext, actor: int, act: Act, target: int, guess: Role | None
) -> bool:
    """§4 and P7: is this night action allowed?"""
    if not _alive(table, actor):
        return False
    seat = table.seat(actor)
    if act in ITEM_OF:
        if seat.item is not ITEM_OF[act] or seat.item_used:
            return False
    elif act not in ROLE_ACTIONS[seat.role]:
        return False
    if act is Act.ROLE_STRIKE and (ctx.role_strike_used or guess not in GUESSES):
        return False
    if not _alive(table, target):
        return False
    if target == actor and act not in SELF_ALLOWED:
        return False
    return not (act is Act.HEAL and target == ctx.last_heal_target)


@dataclass(frozen=True)
class DayOutcome:
    strikes: dict[int, int]  # seat -> strike count after it
    modkilled: frozenset[int]
    tally: dict[int, int]
    executed: int | None
    winner: Winner | None


def reference_close_day(table: Table, day: DayInput) -> DayOutcome:
    """V4, V5, V7, P2, P3 and §7 at a day's close."""
    living = {s.number for s in table.seats if s.alive}
    missing = [n for n in living if n not in day.ballots and n not in day.excused]
    strikes = {n: table.seat(n).strikes + 1 for n in missing}
    modkilled = frozenset(n for n, count in strikes.items() if count >= 2)
    remaining = living - modkilled
    tally: Counter[int] = Counter()
    for b in day.ballots.values():
        if b.voter in remaining and b.target in remaining:
            tally[b.target] += 1
    for n, votes in day.carried_penalties.items():
        if n in remaining and votes:
            tally[n] += votes
    for n, count in strikes.items():
        if count == 1:
            tally[n] += PENALTY
    after = table.without(modkilled)
    winner = reference_winner(after) if modkilled else None
    executed = None
    if winner is None and tally:
        top = max(tally.values())
        leaders = [n for n, v in tally.items() if v == top]
        if len(leaders) == 1:
            executed = leaders[0]
            winner = reference_winner(after.without([executed]))
    return DayOutcome(strikes, modkilled, dict(tally), executed, winner)


@dataclass(frozen=True)
class NightOutcome:
    step1_deaths: frozenset[int]
    step4_deaths: frozenset[int]
    blocked: frozenset[int]
    healed: frozenset[int]
    saved: frozenset[int]
    checks: tuple[tuple[int, int, bool], ...]
    spent_items: frozenset[Item]
    role_strike_spent: bool
    heal_target: int | None
    no_mafia_shot: bool
    strikes: dict[int, int]
    modkilled: frozenset[int]
    winner: Winner | None


def reference_night(table: Table, night: NightInput) -> NightOutcome:
    """§5 in five steps, then P1–P3 at dawn and §7.

    Where the rules are silent this follows the interpretations of docs/rules.md (and of
    docs/scenario-format.md): the state passed in is the one at the night's close, submissions
    of a player removed during the night are void, actions aimed at such a player do nothing but
    count as sent, a clock whose holder survives step 1 reports its target as blocked, the
    doctor's standing heal is the one not to repeat, and nobody is struck at dawn once the game
    is won.
    """
    living = {s.number for s in table.seats if s.alive}
    role = {s.number: s.role for s in table.seats}

    def standing(sub: Submission | None) -> Submission | None:
        return sub if sub is not None and sub.actor in living else None

    def role_action(who: Role, act: Act) -> Submission | None:
        for actor, sub in night.role_actions.items():
            if actor in living and role[actor] is who and sub.act is act:
                return sub
        return None

    # 1. Role strike: the target if the guess is right, else the sender.
    strike = standing(night.role_strike)
    step1: set[int] = set()
    if strike is not None and strike.target in living:
        step1.add(strike.target if role[strike.target] is strike.guess else strike.actor)

    # 2. Clock, if its holder survived step 1.
    clock = standing(night.items.get(Item.CLOCK))
    blocked: set[int] = set()
    if clock is not None and clock.actor not in step1 and clock.target in living:
        blocked.add(clock.target)

    def happens(sub: Submission | None) -> bool:
        return (
            sub is not None
            and sub.actor in living
            and sub.actor not in step1
            and sub.actor not in blocked
            and sub.target in living
            and sub.target not in step1
        )

    # 3. Heals.
    heal = role_action(Role.DOCTOR, Act.HEAL)
    book = standing(night.items.get(Item.BOOK))
    healed = {s.target for s in (heal, book) if s is not None and happens(s)}

    # 4. Kills, all at once.
    kills = (
        standing(night.mafia_shot),
        role_action(Role.MANIAC, Act.MANIAC_SHOT),
        role_action(Role.COMMISSAR, Act.COMMISSAR_SHOT),
        standing(night.items.get(Item.RED_BUTTON)),
    )
    hit = {s.target for s in kills if s is not None and happens(s)}
    step4 = hit - healed
    dead = step1 | step4

    # 5. Check, if the commissar is alive and not blocked.
    check = role_action(Role.COMMISSAR, Act.CHECK)
    checks: tuple[tuple[int, int, bool], ...] = ()
    if (
        check is not None
        and check.actor not in dead
        and check.actor not in blocked
        and check.target in living
    ):
        checks = ((check.actor, check.target, role[check.target] is Role.MAFIA),)

    # Dawn: P1–P3 for the living duty roles that sent nothing, then §7.
    sent = {a for a in night.role_actions if a in living}
    after = table.without(dead)
    winner = reference_winner(after)
    strikes: dict[int, int] = {}
    if winner is None:
        for s in after.seats:
            if s.alive and s.role in DUTY and s.number not in sent:
                strikes[s.number] = s.strikes + 1
    modkilled = frozenset(n for n, c in strikes.items() if c >= 2)
    if modkilled:
        winner = reference_winner(after.without(modkilled))
    return NightOutcome(
        step1_deaths=frozenset(step1),
        step4_deaths=frozenset(step4),
        blocked=frozenset(blocked),
        healed=frozenset(healed),
        saved=frozenset(hit & healed),
        checks=checks,
        spent_items=frozenset(i for i, s in night.items.items() if s.actor in living),
        role_strike_spent=strike is not None,
        heal_target=heal.target if heal is not None else None,
        no_mafia_shot=standing(night.mafia_shot) is None,
        strikes=strikes,
        modkilled=modkilled,
        winner=winner,
    )


def observed_day(result: DayResult) -> DayOutcome:
    return DayOutcome(
        strikes={s.seat: s.count for s in result.strikes},
        modkilled=frozenset(result.modkilled),
        tally=dict(result.tally),
        executed=result.executed,
        winner=result.winner,
    )


def observed_night(res: NightResolution) -> NightOutcome:
    return NightOutcome(
        step1_deaths=frozenset(res.step1_deaths),
        step4_deaths=frozenset(res.step4_deaths),
        blocked=frozenset(res.blocked),
        healed=frozenset(res.healed),
        saved=frozenset(res.saved),
        checks=tuple((c.commissar, c.target, c.is_mafia) for c in res.checks),
        spent_items=frozenset(res.spent_items),
        role_strike_spent=res.role_strike_spent,
        heal_target=res.heal_target,
        no_mafia_shot=res.no_mafia_shot,
        strikes={s.seat: s.count for s in res.strikes},
        modkilled=frozenset(res.modkilled),
        winner=res.winner,
    )


def without_actors(night: NightInput, actors: Iterable[int]) -> NightInput:
    """The standing submissions minus those sent by ``actors``."""
    gone = set(actors)

    def keep(sub: Submission | None) -> Submission | None:
        return sub if sub is not None and sub.actor not in gone else None

    return NightInput(
        number=night.number,
        role_actions={a: s for a, s in night.role_actions.items() if a not in gone},
        mafia_shot=keep(night.mafia_shot),
        role_strike=keep(night.role_strike),
        items={i: s for i, s in night.items.items() if s.actor not in gone},
    )


def effects(res: NightResolution) -> dict[str, object]:
    """Everything a resolution decides, without the wording of its explanation."""
    d = res.as_dict()
    del d["steps"]
    return d


# --- the simulator --------------------------------------------------------------------------


@dataclass(frozen=True)
class Knobs:
    """How a simulated table behaves; each a probability."""

    miss_vote: float = 0.05
    herd: float = 0.6  # a vote goes to the day's favourite
    early: float = 0.3
    junk: float = 0.3  # an extra, probably refused, attempt per player
    miss_action: float = 0.1
    use_item: float = 0.3
    role_strike: float = 0.2
    gm_modkill: float = 0.05  # per phase
    replace: float = 0.05  # per phase


@dataclass
class PhaseLog:
    kind: str
    number: int
    accepted: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    deaths: tuple[int, ...] = ()
    gm_modkills: list[int] = field(default_factory=list)
    winner: Winner | None = None


ALL_ACTS = tuple(Act)
ALL_GUESSES: tuple[Role | None, ...] = (*Role, None)


class GameSim:
    def __init__(
        self,
        counts: RoleCounts,
        seed: str,
        rng: random.Random,
        knobs: Knobs = Knobs(),
        early_close: EarlyClose = EarlyClose.MAJORITY,
    ) -> None:
        dealt = deal(seed, counts)
        items = dealt.item_by_seat
        self.table = Table.of(
            SeatState(number=n, role=r, item=items.get(n))
            for n, r in enumerate(dealt.roles, start=1)
        )
        assert reference_winner(self.table) is None, "a valid deal must not be decided"
        self.rng = rng
        self.knobs = knobs
        self.early_close = early_close
        self.day = 0
        self.night = 0
        self.role_strike_used = False
        self.last_heal_target: int | None = None
        self.carried: dict[int, int] = {}
        self.winner: Winner | None = None
        self.log: list[PhaseLog] = []

    # -- helpers ---------------------------------------------------------------------------

    @property
    def living(self) -> list[int]:
        return sorted(self.table.alive_numbers)

    def any_seat(self) -> int:
        """A seat number that may be dead or not in the game at all."""
        return self.rng.randint(0, len(self.table) + 1)

    def end_if_won(self, log: PhaseLog) -> bool:
        self.winner = decide_winner(self.table)
        assert self.winner == reference_winner(self.table)
        log.winner = self.winner
        return self.winner is not None

    def gm_modkill(self, log: PhaseLog) -> int:
        seat = self.rng.choice(self.living)
        validate_modkill(self.table, seat)
        self.table = self.table.without([seat])
        log.gm_modkills.append(seat)
        return seat

    def maybe_replace(self) -> None:
        if self.rng.random() < self.knobs.replace:
            seat = self.rng.choice(self.living)
            validate_replacement(self.table, seat)
            # P6: the seat keeps role, items and announced penalties; strikes reset.
            self.table = self.table.updated(replace(self.table.seat(seat), strikes=0))

    def refuse(self, log: PhaseLog, err: RuleViolation, actor: int) -> None:
        assert isinstance(err.reason, str) and err.reason, err
        if not _alive(self.table, actor) and actor in self.table:
            assert isinstance(err, DeadCannotAct), f"dead seat {actor} refused with {err.code}"
        log.refused[err.code] += 1

    def apply_strikes(self, counts: Mapping[int, int]) -> None:
        changed = []
        for seat, count in counts.items():
            old = self.table.seat(seat)
            assert count == old.strikes + 1, (seat, old.strikes, count)
            changed.append(replace(old, strikes=count))
        self.table = self.table.updated(*changed)

    # -- a game ----------------------------------------------------------------------------

    def play(self, max_phases: int) -> Winner | None:
        for _ in range(max_phases):
            self.maybe_replace()
            if self.day == self.night:
                self.play_day()
            else:
                self.play_night()
            if self.winner is not None:
                break
        self.check_consistent()
        return self.winner

    def check_consistent(self) -> None:
        assert self.winner == reference_winner(self.table), (self.winner, self.table)
        if self.winner is None:
            assert len(self.living) >= 2
        assert self.day - self.night in (0, 1)
        for s in self.table.seats:
            assert 0 <= s.strikes <= 1 or not s.alive, s

    # -- day -------------------------------------------------------------------------------

    def play_day(self) -> None:
        self.day += 1
        day, rng, knobs = self.day, self.rng, self.knobs
        log = PhaseLog("day", day)
        self.log.append(log)
        favourite = rng.choice(self.living)
        attempts: list[tuple[int, int, bool] | None] = []
        for voter in self.living:
            if rng.random() < knobs.miss_vote:
                continue
            for _ in range(rng.randint(1, 2)):
                target = favourite if rng.random() < knobs.herd else rng.choice(self.living)
                attempts.append((voter, target, rng.random() < knobs.early))
            if rng.random() < knobs.junk:
                attempts.append((voter, self.any_seat(), rng.random() < knobs.early))
        for _ in range(int(knobs.junk * 4)):
            attempts.append((self.any_seat(), self.any_seat(), rng.random() < knobs.early))
        if rng.random() < knobs.gm_modkill:
            attempts.append(None)
        rng.shuffle(attempts)

        ballots: dict[int, Ballot] = {}
        excused: set[int] = set()
        for attempt in attempts:
            if attempt is None:  # the GM modkills someone mid-day (P5, V7)
                gone: int | set[int]  # a seat here, the day's leavers below
                gone = self.gm_modkill(log)
                ballots.pop(gone, None)
                for voter, ballot in list(ballots.items()):
                    if ballot.target == gone:
                        del ballots[voter]
                        excused.add(voter)
                if self.end_if_won(log):
                    return
                continue
            voter, target, early = attempt
            current = ballots.get(voter)
            expected = reference_vote_ok(self.table, day, voter, target, current)
            try:
                accepted = validate_vote(
                    self.table, day, voter, target, early=early, current=current
                )
            except RuleViolation as err:
                assert not expected, f"day {day}: vote {attempt} refused: {err.code}"
                self.refuse(log, err, voter)
                continue
            assert expected, f"day {day}: vote {attempt} accepted against the rules"
            assert accepted.ballot == Ballot(voter, target, early and day >= EARLY_FROM_DAY)
            assert accepted.early_ignored == (early and day < EARLY_FROM_DAY)
            assert accepted.replaced == current
            ballots[voter] = accepted.ballot
            excused.discard(voter)
            log.accepted += 1
            reached = early_close_reached(self.table, day, ballots, self.early_close)
            assert reached == self._early_close_expected(ballots), (day, ballots)
            if reached:
                break

        day_input = DayInput(day, ballots, dict(self.carried), frozenset(excused))
        result = close_day(self.table, day_input)
        expected_outcome = reference_close_day(self.table, day_input)
        assert observed_day(result) == expected_outcome, (day, result, expected_outcome)
        if result.executed is not None:
            assert result.tally[result.executed] == max(result.tally.values())

        self.apply_strikes({s.seat: s.count for s in result.strikes})
        gone = set(result.modkilled) | ({result.executed} if result.executed else set())
        self.table = self.table.without(gone)
        log.deaths = tuple(sorted(gone))
        self.carried = {}
        self.winner = result.winner
        log.winner = result.winner
        assert result.winner == reference_winner(self.table), (day, result.winner)

    def _early_close_expected(self, ballots: Mapping[int, Ballot]) -> bool:
        if self.day < EARLY_FROM_DAY:
            return False
        living = self.table.alive_numbers
        early = [
            b for b in ballots.values() if b.early and b.voter in living and b.target in living
        ]
        if self.early_close is EarlyClose.ALL:
            return len(early) == len(living)
        return 2 * len(early) > len(living)

    # -- night -----------------------------------------------------------------------------

    def night_attempts(self) -> list[tuple[int, Act, int, Role | None] | None]:
        rng, knobs, table = self.rng, self.knobs, self.table
        living = self.living
        attempts: list[tuple[int, Act, int, Role | None] | None] = []
        mafia = [n for n in living if table.seat(n).role is Role.MAFIA]
        for _ in range(rng.randint(0, 2)):
            if mafia:
                attempts.append((rng.choice(mafia), Act.MAFIA_SHOT, rng.choice(living), None))
        if mafia and rng.random() < knobs.role_strike:
            guess = rng.choice([Role.COMMISSAR, Role.DOCTOR, Role.MANIAC, Role.CIVILIAN])
            attempts.append((rng.choice(mafia), Act.ROLE_STRIKE, rng.choice(living), guess))
        for n in living:
            seat = table.seat(n)
            if seat.role in DUTY and rng.random() >= knobs.miss_action:
                for _ in range(rng.randint(1, 2)):
                    act = rng.choice(sorted(ROLE_ACTIONS[seat.role]))
                    attempts.append((n, act, rng.choice(living), None))
            if seat.usable_item is not None and rng.random() < knobs.use_item:
                attempts.append((n, Act(seat.usable_item.value), rng.choice(living), None))
            if rng.random() < knobs.junk:
                attempts.append((n, rng.choice(ALL_ACTS), self.any_seat(), rng.choice(ALL_GUESSES)))
        for _ in range(int(knobs.junk * 4)):
            attempts.append(
                (self.any_seat(), rng.choice(ALL_ACTS), self.any_seat(), rng.choice(ALL_GUESSES))
            )
        if rng.random() < knobs.gm_modkill:
            attempts.append(None)
        rng.shuffle(attempts)
        return attempts

    def play_night(self) -> None:
        self.night += 1
        number = self.night
        log = PhaseLog("night", number)
        self.log.append(log)
        ctx = NightContext(number, self.role_strike_used, self.last_heal_target)
        subs: list[Submission] = []
        for attempt in self.night_attempts():
            if attempt is None:  # the GM modkills someone mid-night (P5, V7)
                self.gm_modkill(log)
                if self.end_if_won(log):
                    return
                continue
            actor, act, target, guess = attempt
            expected = reference_action_ok(self.table, ctx, actor, act, target, guess)
            try:
                sub = validate_action(self.table, ctx, actor, act, target, guess)
            except RuleViolation as err:
                assert not expected, f"night {number}: {attempt} refused: {err.code}"
                self.refuse(log, err, actor)
                continue
            assert expected, f"night {number}: {attempt} accepted against the rules"
            assert sub == Submission(actor, act, target, guess if act is Act.ROLE_STRIKE else None)
            subs.append(sub)
            log.accepted += 1

        table = self.table  # the state at the close
        night = NightInput.from_submissions(number, subs)
        res = resolve_night(table, night)
        expected_outcome = reference_night(table, night)
        assert observed_night(res) == expected_outcome, (number, res, expected_outcome)
        assert [s.number for s in res.steps] == [1, 2, 3, 4, 5]
        # P7 and V7: a standing submission of a player removed during the night is as if
        # nothing stood in its slot (an earlier one it replaced does not come back).
        removed = {s.actor for s in subs if not table.seat(s.actor).alive}
        if removed:
            clean = resolve_night(table, without_actors(night, removed))
            assert effects(clean) == effects(res), number

        self.apply_strikes({s.seat: s.count for s in res.strikes})
        spent = [replace(self.table.seat(h.number), item_used=True) for h in self._holders(res)]
        self.table = self.table.updated(*spent)
        self.table = self.table.without([*res.deaths, *res.modkilled])
        log.deaths = res.deaths
        self.role_strike_used = self.role_strike_used or res.role_strike_spent
        self.last_heal_target = res.heal_target
        self.carried = {s.seat: s.penalty_votes for s in res.strikes if not s.modkill}
        self.winner = res.winner
        log.winner = res.winner
        assert res.winner == reference_winner(self.table), (number, res.winner)

    def _holders(self, res: NightResolution) -> Iterable[SeatState]:
        for item in res.spent_items:
            holder = self.table.holder_of(item)
            assert holder is not None and holder.usable_item is item, (item, holder)
            yield holder
