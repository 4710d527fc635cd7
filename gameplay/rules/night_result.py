"""A night's outcome (RULES.md §5) as the rules return it and the services store it: the deaths
of each step, who was blocked, healed or saved, the check, the items spent, the dawn strikes
and the winner, and the step-by-step explanation the GM reviews (facts, rules/facts.py; the
panel words them). ``as_dict``/``from_dict`` are the stored form (the phase's draft and result);
``from_dict`` also reads a night stored before facts, whose lines, step titles and edits were
Russian strings.

Written by ``resolve_night``, ``dawn``, ``amend_night`` and ``redraft`` (rules/night_resolution.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .discipline import StrikeGiven
from .facts import Edit, Line, edit_from, line_from, stored
from .roles import Item, Winner


@dataclass(frozen=True, slots=True)
class CheckResult:
    commissar: int
    target: int
    is_mafia: bool

    def as_dict(self) -> dict[str, object]:
        return {"commissar": self.commissar, "target": self.target, "is_mafia": self.is_mafia}


@dataclass(frozen=True, slots=True)
class NightStep:
    """A step of RULES.md §5 (1–5) and what happened in it; the panel names the step by its
    number. ``title`` is only a night stored before facts: that step's Russian title."""

    number: int
    lines: tuple[Line, ...]
    title: str = ""

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"number": self.number, "lines": [stored(x) for x in self.lines]}
        if self.title:
            d["title"] = self.title
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> NightStep:
        lines = d.get("lines") or ()
        return cls(
            number=int(d["number"]),  # type: ignore[call-overload]
            lines=tuple(line_from(x) for x in lines),  # type: ignore[attr-defined]
            title=str(d.get("title") or ""),
        )


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
    gm_edits: tuple[Edit, ...] = ()
    #: The check as it happens if the commissar lives to step 5 (kept so that a GM edit of the
    #: deaths can redo step 5).
    pending_check: CheckResult | None = None
    #: The deaths the GM set in the draft (G1), re-applied when the night is redrafted.
    gm_deaths: tuple[int, ...] | None = None

    @property
    def deaths(self) -> tuple[int, ...]:
        """Seats that die in steps 1 and 4, sorted (dawn modkills are separate)."""
        return tuple(sorted(set(self.step1_deaths) | set(self.step4_deaths)))

    def as_dict(self) -> dict[str, Any]:
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
            "gm_edits": [stored(e) for e in self.gm_edits],
            "pending_check": self.pending_check.as_dict() if self.pending_check else None,
            "gm_deaths": None if self.gm_deaths is None else list(self.gm_deaths),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NightResolution:
        def ints(key: str) -> tuple[int, ...]:
            return tuple(int(x) for x in d.get(key) or ())

        return cls(
            number=int(d["number"]),
            step1_deaths=ints("step1_deaths"),
            step4_deaths=ints("step4_deaths"),
            blocked=ints("blocked"),
            healed=ints("healed"),
            saved=ints("saved"),
            checks=tuple(
                CheckResult(int(c["commissar"]), int(c["target"]), bool(c["is_mafia"]))
                for c in d.get("checks") or ()
            ),
            spent_items=tuple(Item(i) for i in d.get("spent_items") or ()),
            role_strike_spent=bool(d.get("role_strike_spent")),
            heal_target=None if d.get("heal_target") is None else int(d["heal_target"]),
            no_mafia_shot=bool(d.get("no_mafia_shot")),
            missed=ints("missed"),
            strikes=tuple(StrikeGiven.from_dict(s) for s in d.get("strikes") or ()),
            modkilled=ints("modkilled"),
            winner=Winner(d["winner"]) if d.get("winner") else None,
            steps=tuple(NightStep.from_dict(s) for s in d.get("steps") or ()),
            gm_edits=tuple(edit_from(x) for x in d.get("gm_edits") or ()),
            pending_check=_check_from(d.get("pending_check")),
            gm_deaths=None if d.get("gm_deaths") is None else ints("gm_deaths"),
        )


def _check_from(c: object) -> CheckResult | None:
    if not isinstance(c, Mapping):
        return None
    return CheckResult(int(c["commissar"]), int(c["target"]), bool(c["is_mafia"]))
