"""The explanations the GM reads, as facts rather than sentences: each line of a day's close or
of a night step is a ``Fact`` — what happened (``Why``) and the seats, action, role guess and
counts it names — and each GM edit of a night draft is a ``GmEdit`` (who dies, who survives,
the reason). The rules say what happened; the panel says it in Russian, one template per code
(templates/panel/explain/<code>.txt), naming the seats as it names them elsewhere.

``as_dict``/``line_from``/``edit_from`` are the stored form (a phase's result). A phase stored
before facts holds each line and edit as a plain Russian string: ``line_from``/``edit_from``
keep such a string as it is, and the panel shows it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from .roles import Act, Role


class Why(StrEnum):
    """What a line of an explanation says (the panel's template name)."""

    # The day's close (rules/day.py).
    PENALTY_CARRIED = "penalty_carried"  # seat, votes: for a missed night action (P2)
    VOTE_STRIKE = "vote_strike"  # seat, votes: a first strike for a missed vote
    VOTE_MODKILL = "vote_modkill"  # seat: a second strike for a missed vote (P3)
    MODKILLS_DECIDE = "modkills_decide"  # the modkills decide the game: no execution
    EXECUTION = "execution"  # seat, votes: the strictly highest count
    TIE = "tie"  # seats, votes: a tie for the highest count
    NO_VOTES = "no_votes"
    # Night step 1: the role strike (actor, target, guess).
    NO_ROLE_STRIKE = "no_role_strike"
    ROLE_STRIKE_GONE = "role_strike_gone"  # its target was removed during the night
    ROLE_STRIKE_HIT = "role_strike_hit"  # guessed: the target dies
    ROLE_STRIKE_MISS = "role_strike_miss"  # not guessed: the striker dies
    # Step 2: the clock (actor, target).
    NO_CLOCK = "no_clock"
    CLOCK_HOLDER_DEAD = "clock_holder_dead"  # its holder died in step 1
    CLOCK_TARGET_GONE = "clock_target_gone"
    CLOCK_BLOCKS = "clock_blocks"
    # Step 3: heals (act: heal or book; actor, target).
    NO_HEAL = "no_heal"
    HEAL = "heal"
    # Step 4: the kills (act: mafia_shot, maniac_shot, commissar_shot, red_button; actor,
    # target), then each target (seat): saved by a heal or killed.
    NO_SHOTS = "no_shots"
    SHOT = "shot"
    SAVED = "saved"
    KILLED = "killed"
    # Step 5: the check (actor, target, is_mafia).
    NO_CHECK = "no_check"
    CHECK = "check"
    # Steps 3–5: an action (act, actor, target) that did nothing, and why.
    ACTOR_DEAD = "actor_dead"
    ACTOR_BLOCKED = "actor_blocked"
    TARGET_GONE = "target_gone"


@dataclass(frozen=True, slots=True)
class Fact:
    """A line of an explanation: ``code`` and the facts it names (unset ones are None)."""

    code: Why
    #: The player the line is about: struck or executed by day, saved or killed at night.
    seat: int | None = None
    actor: int | None = None
    target: int | None = None
    act: Act | None = None
    guess: Role | None = None
    votes: int | None = None
    #: A tie's leaders.
    seats: tuple[int, ...] = ()
    is_mafia: bool | None = None

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"code": self.code.value}
        for key in ("seat", "actor", "target", "votes", "is_mafia"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        if self.act is not None:
            d["act"] = self.act.value
        if self.guess is not None:
            d["guess"] = self.guess.value
        if self.seats:
            d["seats"] = list(self.seats)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Fact:
        def num(key: str) -> int | None:
            value = d.get(key)
            return None if value is None else int(value)  # type: ignore[call-overload]

        return cls(
            code=Why(str(d["code"])),
            seat=num("seat"),
            actor=num("actor"),
            target=num("target"),
            act=Act(str(d["act"])) if d.get("act") else None,
            guess=Role(str(d["guess"])) if d.get("guess") else None,
            votes=num("votes"),
            seats=tuple(int(n) for n in d.get("seats") or ()),  # type: ignore[attr-defined]
            is_mafia=None if d.get("is_mafia") is None else bool(d["is_mafia"]),
        )


@dataclass(frozen=True, slots=True)
class GmEdit:
    """A GM edit of a night draft (G1): the seats it adds to the deaths and those it spares
    (both empty when it changed nothing), and the GM's reason."""

    died: tuple[int, ...]
    saved: tuple[int, ...]
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"died": list(self.died), "saved": list(self.saved), "reason": self.reason}

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> GmEdit:
        return cls(
            died=tuple(int(n) for n in d.get("died") or ()),  # type: ignore[attr-defined]
            saved=tuple(int(n) for n in d.get("saved") or ()),  # type: ignore[attr-defined]
            reason=str(d.get("reason") or ""),
        )


#: A line as stored: a fact, or the Russian sentence of a phase stored before facts.
Line = Fact | str
#: An edit as stored: structured, or the sentence of a phase stored before.
Edit = GmEdit | str


def stored(value: Fact | GmEdit | str) -> object:
    """The JSON form of a line or an edit (a string stays a string)."""
    return value if isinstance(value, str) else value.as_dict()


def line_from(value: object) -> Line:
    """A stored line: a fact, or an old sentence as it is."""
    return Fact.from_dict(value) if isinstance(value, Mapping) else str(value)


def edit_from(value: object) -> Edit:
    """A stored GM edit: structured, or an old sentence as it is."""
    return GmEdit.from_dict(value) if isinstance(value, Mapping) else str(value)
