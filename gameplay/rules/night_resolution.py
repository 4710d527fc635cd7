"""Night resolution: a night's standing submissions resolved in RULES.md §5's five steps (one
function each), then dawn (the check, strikes, the winner), and the GM's edits of the draft.

Interpretations decided here (the rules leave them open; docs/rules.md lists them; the GM can
still override by hand):
- The table passed to ``resolve_night`` is the state at the night's close: a player modkilled
  during the night is already dead there. Their own submissions are void, and submissions aimed
  at them do nothing but count as sent (V7), so they are not missed and items are still spent.
- The clock works when its holder survives step 1; its target is then reported as blocked even
  if the target itself died in step 1 (docs/scenario-format.md: ``blocked`` is empty only when
  the clock was not used or its holder died in step 1).
- A duty role (commissar, doctor, maniac) that sent nothing is struck at dawn only if it
  survived the night: a dead player carries no strikes. A blocked action is not a missed one.
- The doctor's "accepted heal the night before" is the heal that stood at the previous night's
  close, whether or not it took effect (blocked, or the doctor died in step 1): ``heal_target``.
- If the deaths of the night decide the game, nobody is struck or modkilled at dawn (§7).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .discipline import StrikeGiven, StrikeReason, give_strike
from .facts import Fact, GmEdit, Why
from .night import NightInput, Submission
from .night_result import CheckResult, NightResolution, NightStep
from .roles import DUTY_ROLES, Act, Item, Role
from .state import Table
from .winner import decide_winner


def resolve_night(table: Table, night: NightInput) -> NightResolution:
    """Resolve a night in RULES.md §5's five steps. ``table`` is the state at the close."""
    r = _Resolving(table, night, table.alive_numbers)
    steps = (_role_strike(r), _clock(r), _heals(r), _shots(r), _check(r))
    living = r.living
    spent = tuple(item for item, sub in sorted(night.items.items()) if sub.actor in living)
    acted = {a for a in night.role_actions if a in living}
    missed = tuple(s.number for s in table.alive if s.role in DUTY_ROLES and s.number not in acted)
    base = NightResolution(
        number=night.number,
        step1_deaths=tuple(sorted(r.step1)),
        step4_deaths=tuple(r.step4),
        blocked=tuple(sorted(r.blocked)),
        healed=tuple(sorted(r.healed)),
        saved=tuple(r.saved),
        checks=(),
        spent_items=spent,
        role_strike_spent=r.role_strike_spent,
        heal_target=r.heal_target,
        no_mafia_shot=r.no_mafia_shot,
        missed=missed,
        strikes=(),
        modkilled=(),
        winner=None,
        steps=steps,
        pending_check=r.pending,
    )
    return dawn(table, base)


@dataclass(slots=True)
class _Resolving:
    """A night as its steps resolve it: the table at the close, the standing submissions, and
    what the steps so far decided (each step reads the ones before it)."""

    table: Table
    night: NightInput
    living: frozenset[int]
    dead: set[int] = field(default_factory=set)
    step1: list[int] = field(default_factory=list)
    role_strike_spent: bool = False
    blocked: set[int] = field(default_factory=set)
    healed: set[int] = field(default_factory=set)
    heal_target: int | None = None
    step4: list[int] = field(default_factory=list)
    saved: list[int] = field(default_factory=list)
    no_mafia_shot: bool = True
    pending: CheckResult | None = None

    def standing(self, sub: Submission | None) -> Submission | None:
        """Void if the actor was removed during the night (their submissions go with them)."""
        return sub if sub is not None and sub.actor in self.living else None

    def role_action(self, role: Role, act: Act | None = None) -> Submission | None:
        """The standing role action of the living player of ``role`` (of this ``act``)."""
        for actor, sub in sorted(self.night.role_actions.items()):
            if (
                actor in self.living
                and self.table.seat(actor).role is role
                and (act is None or sub.act is act)
            ):
                return sub
        return None

    def performs(self, actor: int) -> bool:
        return actor in self.living and actor not in self.dead and actor not in self.blocked

    def lands(self, sub: Submission) -> bool:
        """The actor performs and the target is still there to receive it."""
        target = sub.target
        return self.performs(sub.actor) and target in self.living and target not in self.dead

    def skipped(self, sub: Submission, act: Act) -> Fact:
        """Why ``sub`` did nothing, as a line of the explanation."""
        if sub.actor in self.dead:
            why = Why.ACTOR_DEAD
        elif sub.actor in self.blocked:
            why = Why.ACTOR_BLOCKED
        else:
            why = Why.TARGET_GONE
        return Fact(why, act=act, actor=sub.actor, target=sub.target)


def _role_strike(r: _Resolving) -> NightStep:
    """Step 1: the role strike — neither healed nor blocked."""
    rs = r.standing(r.night.role_strike)
    r.role_strike_spent = rs is not None
    if rs is None:
        line = Fact(Why.NO_ROLE_STRIKE)
    else:
        if rs.target not in r.living:
            why = Why.ROLE_STRIKE_GONE
        elif r.table.seat(rs.target).role is rs.guess:
            why = Why.ROLE_STRIKE_HIT
            r.step1.append(rs.target)
        else:
            why = Why.ROLE_STRIKE_MISS
            r.step1.append(rs.actor)
        line = Fact(why, actor=rs.actor, target=rs.target, guess=rs.guess)
    r.dead.update(r.step1)
    return NightStep(1, (line,))


def _clock(r: _Resolving) -> NightStep:
    """Step 2: the clock blocks its target's role action, mafia shot and item use."""
    clock = r.standing(r.night.items.get(Item.CLOCK))
    if clock is None:
        return NightStep(2, (Fact(Why.NO_CLOCK),))
    if clock.actor in r.dead:
        why = Why.CLOCK_HOLDER_DEAD
    elif clock.target not in r.living:
        why = Why.CLOCK_TARGET_GONE
    else:
        why = Why.CLOCK_BLOCKS
        r.blocked.add(clock.target)
    return NightStep(2, (Fact(why, actor=clock.actor, target=clock.target),))


def _heals(r: _Resolving) -> NightStep:
    """Step 3: heals protect for step 4."""
    lines: list[Fact] = []
    heals: list[tuple[Act, Submission | None]] = [
        (Act.HEAL, r.role_action(Role.DOCTOR)),
        (Act.BOOK, r.standing(r.night.items.get(Item.BOOK))),
    ]
    for what, sub in heals:
        if sub is None:
            continue
        if sub.act is Act.HEAL:
            r.heal_target = sub.target
        if r.lands(sub):
            r.healed.add(sub.target)
            lines.append(Fact(Why.HEAL, act=what, actor=sub.actor, target=sub.target))
        else:
            lines.append(r.skipped(sub, what))
    if not lines:
        lines.append(Fact(Why.NO_HEAL))
    return NightStep(3, tuple(lines))


def _shots(r: _Resolving) -> NightStep:
    """Step 4: the kills, all at once; a healed target survives."""
    lines: list[Fact] = []
    hits: dict[int, list[Act]] = {}
    shooter = r.standing(r.night.mafia_shot)
    r.no_mafia_shot = shooter is None
    kills: list[tuple[Act, Submission | None]] = [
        (Act.MAFIA_SHOT, shooter),
        (Act.MANIAC_SHOT, r.role_action(Role.MANIAC, Act.MANIAC_SHOT)),
        (Act.COMMISSAR_SHOT, r.role_action(Role.COMMISSAR, Act.COMMISSAR_SHOT)),
        (Act.RED_BUTTON, r.standing(r.night.items.get(Item.RED_BUTTON))),
    ]
    for what, sub in kills:
        if sub is None:
            continue
        if r.lands(sub):
            hits.setdefault(sub.target, []).append(what)
            lines.append(Fact(Why.SHOT, act=what, actor=sub.actor, target=sub.target))
        else:
            lines.append(r.skipped(sub, what))
    for target in sorted(hits):
        if target in r.healed:
            r.saved.append(target)
            lines.append(Fact(Why.SAVED, seat=target))
        else:
            r.step4.append(target)
            lines.append(Fact(Why.KILLED, seat=target))
    if not lines:
        lines.append(Fact(Why.NO_SHOTS))
    r.dead.update(r.step4)
    return NightStep(4, tuple(lines))


def _check(r: _Resolving) -> NightStep:
    """Step 5: the check, if the commissar is alive and not blocked (its answer is delivered
    at dawn, if the commissar is still alive then)."""
    check = r.role_action(Role.COMMISSAR, Act.CHECK)
    if check is not None and check.actor not in r.blocked and check.target in r.living:
        r.pending = CheckResult(check.actor, check.target, r.table.seat(check.target).is_mafia)
    if check is None:
        line = Fact(Why.NO_CHECK)
    elif r.pending is not None and r.performs(check.actor):
        line = Fact(Why.CHECK, actor=check.actor, target=check.target, is_mafia=r.pending.is_mafia)
    else:
        line = r.skipped(check, Act.CHECK)
    return NightStep(5, (line,))


def dawn(table: Table, res: NightResolution) -> NightResolution:
    """Dawn for this table: the check (step 5), strikes for missed duty actions (P1–P3) and
    the winner (§7), recomputed from the seats as they are now.

    Called at the close and again at publication, so that what the GM did during the review
    (a modkill, a replacement, a manual or forgiven strike, an edit of the deaths) counts.
    """
    after = table.without(res.deaths)
    pc = res.pending_check
    checks = (pc,) if pc is not None and after.seat(pc.commissar).alive else ()
    winner = decide_winner(after)
    strikes: list[StrikeGiven] = []
    if winner is None:
        for n in res.missed:
            seat = after.seat(n)
            if seat.alive:
                strikes.append(give_strike(seat, StrikeReason.MISSED_ACTION))
    modkilled = tuple(s.seat for s in strikes if s.modkill)
    if modkilled:
        winner = decide_winner(after.without(modkilled))
    return replace(res, checks=checks, strikes=tuple(strikes), modkilled=modkilled, winner=winner)


def amend_night(
    table: Table, res: NightResolution, *, deaths: Iterable[int], reason: str
) -> NightResolution:
    """A GM edit of the draft (G1): set who dies this night, with a reason that is logged.

    Seats added to the deaths are counted as step-4 deaths; removed ones survive. Dawn strikes
    and the winner are recomputed for the new outcome.
    """
    wanted = set(deaths)
    for n in wanted:
        if not table.seat(n).alive:
            raise ValueError(f"seat {n} is not alive")
    step1 = tuple(n for n in res.step1_deaths if n in wanted)
    step4 = tuple(sorted(wanted - set(step1)))
    before = set(res.deaths)
    note = GmEdit(
        died=tuple(sorted(wanted - before)), saved=tuple(sorted(before - wanted)), reason=reason
    )
    amended = replace(
        res,
        step1_deaths=step1,
        step4_deaths=step4,
        gm_edits=(*res.gm_edits, note),
        gm_deaths=tuple(sorted(wanted)),
    )
    return dawn(table, amended)


def redraft(table: Table, old: NightResolution, night: NightInput) -> NightResolution:
    """Resolve a night under review again (a player was removed during the review), keeping
    the GM's edits: the deaths the GM set still stand, less anyone no longer alive."""
    new = resolve_night(table, night)
    if old.gm_deaths is None:
        return replace(new, gm_edits=old.gm_edits)
    living = table.alive_numbers
    wanted = {n for n in old.gm_deaths if n in living}
    step1 = tuple(n for n in new.step1_deaths if n in wanted)
    return dawn(
        table,
        replace(
            new,
            step1_deaths=step1,
            step4_deaths=tuple(sorted(wanted - set(step1))),
            gm_edits=old.gm_edits,
            gm_deaths=tuple(sorted(wanted)),
        ),
    )
