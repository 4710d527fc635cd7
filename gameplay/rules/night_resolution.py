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

    def who(self, n: int) -> str:
        return _who(self.table, n)

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

    def skipped(self, sub: Submission, what: str) -> str:
        """Why ``sub`` did nothing, as a line of the explanation."""
        if sub.actor in self.dead:
            return f"{what} {self.who(sub.actor)}: погиб раньше, действие не выполняется."
        if sub.actor in self.blocked:
            return f"{what} {self.who(sub.actor)}: заблокирован часами."
        return f"{what} {self.who(sub.actor)}: цель №{sub.target} выбыла, без последствий."


def _who(table: Table, n: int) -> str:
    s = table.get(n)
    return f"№{n} ({s.role.title})" if s else f"№{n}"


def _role_strike(r: _Resolving) -> NightStep:
    """Step 1: the role strike — neither healed nor blocked."""
    rs = r.standing(r.night.role_strike)
    r.role_strike_spent = rs is not None
    who = r.who
    if rs is None:
        line = "Ролевого удара не было."
    elif rs.target not in r.living:
        line = f"Ролевой удар {who(rs.actor)} по выбывшему №{rs.target}: без последствий."
    else:
        guess = rs.guess.title.lower() if rs.guess else "?"
        if r.table.seat(rs.target).role is rs.guess:
            r.step1.append(rs.target)
            line = (
                f"{who(rs.actor)} назвал №{rs.target} ролью «{guess}» — угадал: "
                f"{who(rs.target)} погибает."
            )
        else:
            r.step1.append(rs.actor)
            line = (
                f"{who(rs.actor)} назвал №{rs.target} ролью «{guess}» — не угадал: "
                f"{who(rs.actor)} погибает."
            )
    r.dead.update(r.step1)
    return NightStep(1, "Ролевой удар", (line,))


def _clock(r: _Resolving) -> NightStep:
    """Step 2: the clock blocks its target's role action, mafia shot and item use."""
    clock = r.standing(r.night.items.get(Item.CLOCK))
    if clock is None:
        line = "Часы не использовались."
    elif clock.actor in r.dead:
        line = f"Владелец часов {r.who(clock.actor)} погиб на шаге 1: часы не сработали."
    elif clock.target not in r.living:
        line = f"Часы направлены на выбывшего №{clock.target}: без последствий."
    else:
        r.blocked.add(clock.target)
        line = f"{r.who(clock.actor)} использует часы: {r.who(clock.target)} заблокирован."
    return NightStep(2, "Часы", (line,))


def _heals(r: _Resolving) -> NightStep:
    """Step 3: heals protect for step 4."""
    lines: list[str] = []
    heals: list[tuple[str, Submission | None]] = [
        ("Лечение доктора", r.role_action(Role.DOCTOR)),
        ("Книга из будущего", r.standing(r.night.items.get(Item.BOOK))),
    ]
    for what, sub in heals:
        if sub is None:
            continue
        if sub.act is Act.HEAL:
            r.heal_target = sub.target
        if r.lands(sub):
            r.healed.add(sub.target)
            lines.append(f"{what}: {r.who(sub.actor)} защищает {r.who(sub.target)}.")
        else:
            lines.append(r.skipped(sub, what))
    if not lines:
        lines.append("Лечения не было.")
    return NightStep(3, "Лечение", tuple(lines))


def _shots(r: _Resolving) -> NightStep:
    """Step 4: the kills, all at once; a healed target survives."""
    lines: list[str] = []
    hits: dict[int, list[str]] = {}
    shooter = r.standing(r.night.mafia_shot)
    r.no_mafia_shot = shooter is None
    kills: list[tuple[str, Submission | None]] = [
        ("Выстрел мафии", shooter),
        ("Выстрел маньяка", r.role_action(Role.MANIAC, Act.MANIAC_SHOT)),
        ("Выстрел комиссара", r.role_action(Role.COMMISSAR, Act.COMMISSAR_SHOT)),
        ("Красная кнопка", r.standing(r.night.items.get(Item.RED_BUTTON))),
    ]
    for what, sub in kills:
        if sub is None:
            continue
        if r.lands(sub):
            hits.setdefault(sub.target, []).append(what)
            lines.append(f"{what}: {r.who(sub.actor)} стреляет в {r.who(sub.target)}.")
        else:
            lines.append(r.skipped(sub, what))
    for target in sorted(hits):
        if target in r.healed:
            r.saved.append(target)
            lines.append(f"{r.who(target)} вылечен и выживает.")
        else:
            r.step4.append(target)
            lines.append(f"{r.who(target)} погибает.")
    if not lines:
        lines.append("Выстрелов не было.")
    r.dead.update(r.step4)
    return NightStep(4, "Выстрелы", tuple(lines))


def _check(r: _Resolving) -> NightStep:
    """Step 5: the check, if the commissar is alive and not blocked (its answer is delivered
    at dawn, if the commissar is still alive then)."""
    check = r.role_action(Role.COMMISSAR, Act.CHECK)
    if check is not None and check.actor not in r.blocked and check.target in r.living:
        r.pending = CheckResult(check.actor, check.target, r.table.seat(check.target).is_mafia)
    if check is None:
        line = "Проверки не было."
    elif r.pending is not None and r.performs(check.actor):
        answer = "мафия" if r.pending.is_mafia else "не мафия"
        line = f"{r.who(check.actor)} проверяет №{check.target}: «{answer}»."
    else:
        line = r.skipped(check, "Проверка")
    return NightStep(5, "Проверка", (line,))


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
    added = sorted(wanted - before)
    removed = sorted(before - wanted)
    parts = []
    if added:
        parts.append("погибают " + ", ".join(_who(table, n) for n in added))
    if removed:
        parts.append("выживают " + ", ".join(_who(table, n) for n in removed))
    note = "Ведущий: " + ("; ".join(parts) if parts else "без изменений") + f". Причина: {reason}"
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
