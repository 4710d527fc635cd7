"""Night: validation of every action (RULES.md §4) and the five-step resolution (§5).

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
  close, whether or not it took effect (blocked, or the doctor died in step 1).
- If the deaths of the night decide the game, nobody is struck or modkilled at dawn (§7).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from .discipline import StrikeGiven, StrikeReason, give_strike
from .errors import (
    ActionNotAvailable,
    HealRepeat,
    InvalidGuess,
    ItemNotHeld,
    ItemSpent,
    RoleStrikeUsed,
    RuleViolation,
    SelfTargetForbidden,
    TargetNotAlive,
)
from .roles import (
    DUTY_ROLES,
    GUESSABLE_ROLES,
    ROLE_ACTS,
    SELF_TARGET_ALLOWED,
    Act,
    Item,
    Role,
    Winner,
)
from .state import SeatState, Table
from .validation import require_living_actor
from .winner import decide_winner


@dataclass(frozen=True, slots=True)
class Submission:
    """One night action as it stands: who sent what at whom."""

    actor: int
    act: Act
    target: int
    guess: Role | None = None

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"actor": self.actor, "act": self.act.value, "target": self.target}
        if self.guess is not None:
            d["guess"] = self.guess.value
        return d


@dataclass(frozen=True, slots=True)
class NightContext:
    """What validation needs beyond the table."""

    number: int
    role_strike_used: bool = False
    #: The target of the doctor's heal that stood at the previous night's close.
    last_heal_target: int | None = None


def validate_action(
    table: Table,
    ctx: NightContext,
    actor: int,
    act: Act,
    target: int,
    guess: Role | None = None,
) -> Submission:
    """Check one night action against §4 and P7; raise a ``RuleViolation`` or accept it."""
    seat = require_living_actor(table, actor)
    item = act.item
    if item is not None:
        _require_item(seat, item)
    elif act not in ROLE_ACTS[seat.role]:
        raise ActionNotAvailable()
    if act is Act.ROLE_STRIKE:
        if ctx.role_strike_used:
            raise RoleStrikeUsed()
        if guess not in GUESSABLE_ROLES:
            raise InvalidGuess()
    else:
        guess = None
    target_seat = table.seat(target)
    if target == actor and act not in SELF_TARGET_ALLOWED:
        raise SelfTargetForbidden()
    if not target_seat.alive:
        raise TargetNotAlive()
    if act is Act.HEAL and ctx.last_heal_target is not None and target == ctx.last_heal_target:
        raise HealRepeat()
    return Submission(actor=actor, act=act, target=target, guess=guess)


def valid_targets(table: Table, ctx: NightContext, actor: int, act: Act) -> list[int]:
    """The seats ``actor`` may aim ``act`` at tonight, in seat order: exactly those
    :func:`validate_action` accepts (the buttons offer these and no others). Empty when the
    act is not the actor's to send."""
    guess = Role.COMMISSAR if act is Act.ROLE_STRIKE else None  # any guess: not the target's
    out = []
    for seat in table.alive:
        try:
            validate_action(table, ctx, actor, act, seat.number, guess)
        except RuleViolation:
            continue
        out.append(seat.number)
    return out


def _require_item(seat: SeatState, item: Item) -> None:
    if seat.item is not item:
        raise ItemNotHeld()
    if seat.item_used:
        raise ItemSpent()


@dataclass(frozen=True, slots=True)
class NightInput:
    """The submissions standing at the night's close (later ones already replaced earlier)."""

    number: int
    #: Role actions (check, commissar shot, heal, maniac shot) by actor.
    role_actions: Mapping[int, Submission] = field(default_factory=dict)
    mafia_shot: Submission | None = None
    role_strike: Submission | None = None
    items: Mapping[Item, Submission] = field(default_factory=dict)

    @classmethod
    def from_submissions(cls, number: int, submissions: Iterable[Submission]) -> NightInput:
        """Build the standing actions from submissions in arrival order (later replaces)."""
        role_actions: dict[int, Submission] = {}
        items: dict[Item, Submission] = {}
        mafia_shot = role_strike = None
        for s in submissions:
            if s.act is Act.MAFIA_SHOT:
                mafia_shot = s
            elif s.act is Act.ROLE_STRIKE:
                role_strike = s
            elif s.act.item is not None:
                items[s.act.item] = s
            else:
                role_actions[s.actor] = s
        return cls(number, role_actions, mafia_shot, role_strike, items)


@dataclass(frozen=True, slots=True)
class CheckResult:
    commissar: int
    target: int
    is_mafia: bool

    def as_dict(self) -> dict[str, object]:
        return {"commissar": self.commissar, "target": self.target, "is_mafia": self.is_mafia}


@dataclass(frozen=True, slots=True)
class NightStep:
    number: int
    title: str
    lines: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"number": self.number, "title": self.title, "lines": list(self.lines)}


@dataclass(frozen=True, slots=True)
class NightResolution:
    """A night's outcome, with the step-by-step explanation the GM reviews (RULES.md §5)."""

    number: int
    step1_deaths: tuple[int, ...]
    step4_deaths: tuple[int, ...]
    blocked: tuple[int, ...]
    healed: tuple[int, ...]
    saved: tuple[int, ...]
    checks: tuple[CheckResult, ...]
    spent_items: tuple[Item, ...]
    role_strike_spent: bool
    heal_target: int | None
    no_mafia_shot: bool
    missed: tuple[int, ...]
    strikes: tuple[StrikeGiven, ...]
    modkilled: tuple[int, ...]
    winner: Winner | None
    steps: tuple[NightStep, ...]
    gm_edits: tuple[str, ...] = ()
    #: The check as it happens if the commissar lives to step 5 (kept so that a GM edit of the
    #: deaths can redo step 5).
    pending_check: CheckResult | None = None
    #: The deaths the GM set in the draft (G1), re-applied when the night is redrafted.
    gm_deaths: tuple[int, ...] | None = None

    @property
    def deaths(self) -> tuple[int, ...]:
        """Seats that die in steps 1 and 4, sorted (dawn modkills are separate)."""
        return tuple(sorted(set(self.step1_deaths) | set(self.step4_deaths)))

    def as_dict(self) -> dict[str, object]:
        return {
            "number": self.number,
            "step1_deaths": list(self.step1_deaths),
            "step4_deaths": list(self.step4_deaths),
            "deaths": list(self.deaths),
            "blocked": list(self.blocked),
            "healed": list(self.healed),
            "saved": list(self.saved),
            "checks": [c.as_dict() for c in self.checks],
            "spent_items": [i.value for i in self.spent_items],
            "role_strike_spent": self.role_strike_spent,
            "heal_target": self.heal_target,
            "no_mafia_shot": self.no_mafia_shot,
            "missed": list(self.missed),
            "strikes": [s.as_dict() for s in self.strikes],
            "modkilled": list(self.modkilled),
            "winner": self.winner.value if self.winner else None,
            "steps": [s.as_dict() for s in self.steps],
            "gm_edits": list(self.gm_edits),
            "pending_check": self.pending_check.as_dict() if self.pending_check else None,
            "gm_deaths": None if self.gm_deaths is None else list(self.gm_deaths),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> NightResolution:
        def ints(key: str) -> tuple[int, ...]:
            return tuple(int(x) for x in d.get(key) or ())  # type: ignore[union-attr]

        return cls(
            number=int(d["number"]),  # type: ignore[arg-type]
            step1_deaths=ints("step1_deaths"),
            step4_deaths=ints("step4_deaths"),
            blocked=ints("blocked"),
            healed=ints("healed"),
            saved=ints("saved"),
            checks=tuple(
                CheckResult(int(c["commissar"]), int(c["target"]), bool(c["is_mafia"]))
                for c in d.get("checks") or ()  # type: ignore[union-attr]
            ),
            spent_items=tuple(Item(i) for i in d.get("spent_items") or ()),  # type: ignore[union-attr]
            role_strike_spent=bool(d.get("role_strike_spent")),
            heal_target=None if d.get("heal_target") is None else int(d["heal_target"]),  # type: ignore[arg-type]
            no_mafia_shot=bool(d.get("no_mafia_shot")),
            missed=ints("missed"),
            strikes=tuple(StrikeGiven.from_dict(s) for s in d.get("strikes") or ()),  # type: ignore[union-attr]
            modkilled=ints("modkilled"),
            winner=Winner(d["winner"]) if d.get("winner") else None,  # type: ignore[arg-type]
            steps=tuple(
                NightStep(int(s["number"]), str(s["title"]), tuple(s["lines"]))
                for s in d.get("steps") or ()  # type: ignore[union-attr]
            ),
            gm_edits=tuple(str(x) for x in d.get("gm_edits") or ()),  # type: ignore[union-attr]
            pending_check=_check_from(d.get("pending_check")),
            gm_deaths=None if d.get("gm_deaths") is None else ints("gm_deaths"),
        )


def _check_from(c: object) -> CheckResult | None:
    if not isinstance(c, Mapping):
        return None
    return CheckResult(int(c["commissar"]), int(c["target"]), bool(c["is_mafia"]))


def _who(table: Table, n: int) -> str:
    s = table.get(n)
    return f"№{n} ({s.role.title})" if s else f"№{n}"


def resolve_night(table: Table, night: NightInput) -> NightResolution:
    """Resolve a night in RULES.md §5's five steps. ``table`` is the state at the close."""
    living = table.alive_numbers
    dead: set[int] = set()
    who = lambda n: _who(table, n)  # noqa: E731

    def standing(sub: Submission | None) -> Submission | None:
        # Void if the actor was removed during the night (their submissions go with them).
        return sub if sub is not None and sub.actor in living else None

    # Step 1: role strike — neither healed nor blocked.
    lines1: list[str] = []
    step1: list[int] = []
    rs = standing(night.role_strike)
    if rs is None:
        lines1.append("Ролевого удара не было.")
    elif rs.target not in living:
        lines1.append(f"Ролевой удар {who(rs.actor)} по выбывшему №{rs.target}: без последствий.")
    else:
        guess = rs.guess.title.lower() if rs.guess else "?"
        if table.seat(rs.target).role is rs.guess:
            step1.append(rs.target)
            lines1.append(
                f"{who(rs.actor)} назвал №{rs.target} ролью «{guess}» — угадал: "
                f"{who(rs.target)} погибает."
            )
        else:
            step1.append(rs.actor)
            lines1.append(
                f"{who(rs.actor)} назвал №{rs.target} ролью «{guess}» — не угадал: "
                f"{who(rs.actor)} погибает."
            )
    dead.update(step1)
    role_strike_spent = rs is not None

    # Step 2: the clock blocks its target's role action, mafia shot and item use.
    lines2: list[str] = []
    blocked: set[int] = set()
    clock = standing(night.items.get(Item.CLOCK))
    if clock is None:
        lines2.append("Часы не использовались.")
    elif clock.actor in dead:
        lines2.append(f"Владелец часов {who(clock.actor)} погиб на шаге 1: часы не сработали.")
    elif clock.target not in living:
        lines2.append(f"Часы направлены на выбывшего №{clock.target}: без последствий.")
    else:
        blocked.add(clock.target)
        lines2.append(f"{who(clock.actor)} использует часы: {who(clock.target)} заблокирован.")

    def performs(actor: int) -> bool:
        return actor in living and actor not in dead and actor not in blocked

    def describe_skip(sub: Submission, what: str) -> str:
        if sub.actor in dead:
            return f"{what} {who(sub.actor)}: погиб раньше, действие не выполняется."
        if sub.actor in blocked:
            return f"{what} {who(sub.actor)}: заблокирован часами."
        return f"{what} {who(sub.actor)}: цель №{sub.target} выбыла, без последствий."

    # Step 3: heals protect for step 4.
    lines3: list[str] = []
    healed: set[int] = set()
    heal_target: int | None = None
    heals: list[tuple[str, Submission | None]] = [
        ("Лечение доктора", _role_action(table, night, Role.DOCTOR, living)),
        ("Книга из будущего", standing(night.items.get(Item.BOOK))),
    ]
    for what, sub in heals:
        if sub is None:
            continue
        if sub.act is Act.HEAL:
            heal_target = sub.target
        if performs(sub.actor) and sub.target in living and sub.target not in dead:
            healed.add(sub.target)
            lines3.append(f"{what}: {who(sub.actor)} защищает {who(sub.target)}.")
        else:
            lines3.append(describe_skip(sub, what))
    if not lines3:
        lines3.append("Лечения не было.")

    # Step 4: kills, all at once.
    lines4: list[str] = []
    hits: dict[int, list[str]] = {}
    shooter = standing(night.mafia_shot)
    kills: list[tuple[str, Submission | None]] = [
        ("Выстрел мафии", shooter),
        ("Выстрел маньяка", _role_action(table, night, Role.MANIAC, living, Act.MANIAC_SHOT)),
        (
            "Выстрел комиссара",
            _role_action(table, night, Role.COMMISSAR, living, Act.COMMISSAR_SHOT),
        ),
        ("Красная кнопка", standing(night.items.get(Item.RED_BUTTON))),
    ]
    for what, sub in kills:
        if sub is None:
            continue
        if performs(sub.actor) and sub.target in living and sub.target not in dead:
            hits.setdefault(sub.target, []).append(what)
            lines4.append(f"{what}: {who(sub.actor)} стреляет в {who(sub.target)}.")
        else:
            lines4.append(describe_skip(sub, what))
    step4: list[int] = []
    saved: list[int] = []
    for target in sorted(hits):
        if target in healed:
            saved.append(target)
            lines4.append(f"{who(target)} вылечен и выживает.")
        else:
            step4.append(target)
            lines4.append(f"{who(target)} погибает.")
    if not lines4:
        lines4.append("Выстрелов не было.")
    dead.update(step4)

    # Step 5: the check, if the commissar is alive and not blocked.
    lines5: list[str] = []
    pending: CheckResult | None = None
    check = _role_action(table, night, Role.COMMISSAR, living, Act.CHECK)
    if check is not None and check.actor not in blocked and check.target in living:
        pending = CheckResult(check.actor, check.target, table.seat(check.target).is_mafia)
    if check is None:
        lines5.append("Проверки не было.")
    elif pending is not None and performs(check.actor):
        answer = "мафия" if pending.is_mafia else "не мафия"
        lines5.append(f"{who(check.actor)} проверяет №{check.target}: «{answer}».")
    else:
        lines5.append(describe_skip(check, "Проверка"))

    spent = tuple(item for item, sub in sorted(night.items.items()) if sub.actor in living)
    acted = {a for a in night.role_actions if a in living}
    missed = tuple(s.number for s in table.alive if s.role in DUTY_ROLES and s.number not in acted)
    steps = (
        NightStep(1, "Ролевой удар", tuple(lines1)),
        NightStep(2, "Часы", tuple(lines2)),
        NightStep(3, "Лечение", tuple(lines3)),
        NightStep(4, "Выстрелы", tuple(lines4)),
        NightStep(5, "Проверка", tuple(lines5)),
    )
    base = NightResolution(
        number=night.number,
        step1_deaths=tuple(sorted(step1)),
        step4_deaths=tuple(step4),
        blocked=tuple(sorted(blocked)),
        healed=tuple(sorted(healed)),
        saved=tuple(saved),
        checks=(),
        spent_items=spent,
        role_strike_spent=role_strike_spent,
        heal_target=heal_target,
        no_mafia_shot=shooter is None,
        missed=missed,
        strikes=(),
        modkilled=(),
        winner=None,
        steps=steps,
        pending_check=pending,
    )
    return dawn(table, base)


def _role_action(
    table: Table,
    night: NightInput,
    role: Role,
    living: frozenset[int],
    act: Act | None = None,
) -> Submission | None:
    for actor, sub in sorted(night.role_actions.items()):
        if actor in living and table.seat(actor).role is role and (act is None or sub.act is act):
            return sub
    return None


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
