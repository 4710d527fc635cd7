"""Export a game as a scenario file (docs/scenario-format.md) that ``manage.py replay`` plays
to the same deaths, executions and winner.

The scenario is rebuilt from the game's event log, in ``seq`` order: every accepted vote and
night action in the order it arrived (refused submissions never reach the log), and a ``gm``
entry for each GM modkill and replacement, placed before the phase during which it happened.

Some things the GM can do have no place in the format (an edited night draft, a manual penalty,
a forgiven strike, a game ended by hand, a modkill that voided votes whose voters did not vote
again). ``export_game`` still writes the closest scenario and lists each such point in
``warnings`` (for the GM: ``templates/messages/gm/export_*.txt``); ``replay_check`` plays
the file and reports any difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from gameplay.messages import Person, render
from gameplay.models import (
    EventKind,
    Game,
    GameEvent,
    GameStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
)
from gameplay.refusals import ExportNotStarted
from gameplay.rules import RuleViolation, Winner

if TYPE_CHECKING:
    from django.db.models import QuerySet

#: Night acts that are the team's (one standing submission for the whole mafia).
TEAM_ACTS = ("mafia_shot", "role_strike")


@dataclass
class _Phase:
    kind: str
    number: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    gm_before: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False
    #: The GM's story paragraph of the phase's post (the latest one set).
    story: str = ""


@dataclass(frozen=True)
class Export:
    scenario: dict[str, Any]
    warnings: list[str]

    def to_json(self) -> str:
        return json.dumps(self.scenario, ensure_ascii=False, indent=2) + "\n"


def _seats(game: Game) -> list[Seat]:
    """The game's players' seats, in seat order."""
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False).order_by(
            "number"
        )
    )


def _people(seats: list[Seat]) -> dict[int, Person]:
    """The game's seats as its texts name them, by number."""
    return {cast(int, s.number): Person.of(s) for s in seats}  # number__isnull=False


def _person(people: dict[int, Person], n: Any) -> Person:
    return people.get(n) or Person(n, "")


def _named(people: dict[int, Person], data: dict[str, Any]) -> Person:
    """Whom a logged strike was about (the seat may have changed hands since)."""
    return Person.of_event(data, people) or _person(people, data.get("seat"))


def export_game(game: Game) -> Export:
    """The scenario of a started game. Raises ``InvalidCommand`` for a game not yet started.

    The game's own fields (status, early-close rule) are read from the database, like
    everything else here: the caller's instance may predate the game's end."""
    game = _stored(game)
    if game.status not in (GameStatus.RUNNING, GameStatus.FINISHED) or game.started_at is None:
        raise ExportNotStarted()
    seats = _seats(game)
    players = _players(game, seats)
    log = _Log(people=_people(seats))
    events = (
        GameEvent.objects.filter(game=game).order_by("seq").values_list("kind", "data", "override")
    )
    for kind, data, override in events:
        log.read(kind, data, override)
    scenario = {
        "settings": {"early_close": game.early_close},
        "players": players,
        "phases": log.phases_out(game),
    }
    return Export(scenario, log.warnings)


def _players(game: Game, seats: list[Seat]) -> list[dict[str, Any]]:
    """The scenario's players (``seats``): each seat's role, item and first name (before
    replacements)."""
    first_names: dict[int, str] = {}
    for r in Replacement.objects.filter(seat__game=game).order_by("created_at", "id"):
        first_names.setdefault(r.seat_id, r.old_name)
    players = []
    for s in seats:
        p: dict[str, Any] = {"seat": s.number, "role": s.role}
        if s.item:
            p["item"] = s.item
        name = (first_names.get(s.pk) or s.name).strip()
        if name:
            p["name"] = name
        players.append(p)
    return players


@dataclass
class _Log:
    """The game's event log read into phases, GM entries and warnings, one event at a time."""

    #: The seats by number, as the warnings name them.
    people: dict[int, Person] = field(default_factory=dict)
    phases: list[_Phase] = field(default_factory=list)
    early_gm: list[dict[str, Any]] = field(default_factory=list)  # before Day 1 opened
    after_last: list[dict[str, Any]] = field(default_factory=list)  # after the last phase closed
    warnings: list[str] = field(default_factory=list)

    def current(self) -> _Phase | None:
        return self.phases[-1] if self.phases and not self.phases[-1].closed else None

    def read(self, kind: str, data: dict[str, Any], override: bool) -> None:
        ph = self.current()
        if kind == EventKind.PHASE_OPENED:
            self.phases.append(_Phase(data.get("phase_kind", "day"), int(data.get("number", 0))))
        elif ph is not None and _read_play(ph, kind, data):
            pass
        elif kind in (EventKind.MODKILL, EventKind.REPLACE):
            self._gm(ph, kind, int(data["seat"]), reason=str(data.get("reason") or "").strip())
        else:
            warning = _unreplayable(kind, data, override, self.people)
            if warning:
                self.warnings.append(warning)

    def _gm(self, ph: _Phase | None, action: str, seat: int, *, reason: str = "") -> None:
        gm: dict[str, Any] = {"phase": "gm", "action": action, "seat": seat}
        if reason:  # the scenario format keeps it (docs/scenario-format.md)
            gm["reason"] = reason
        if ph is None:
            (self.after_last if self.phases else self.early_gm).append(gm)
            return
        if action == "modkill":
            self.warnings += _drop_for_modkill(ph, seat, self.people)
        # A replacement: strikes are the person's (P6) and only count at the phase's close
        # or, for a night under review, at its publication: before the phase is the same.
        ph.gm_before.append(gm)

    def phases_out(self, game: Game) -> list[dict[str, Any]]:
        """The scenario's ``phases``: the GM entries and the closed phases, in order."""
        out: list[dict[str, Any]] = list(self.early_gm)
        for ph in self.phases:
            out += ph.gm_before
            if not ph.closed:
                # A phase cut short by the game's end needs no entry; a running one is left out.
                if ph.entries and game.status == GameStatus.RUNNING:
                    self.warnings.append(render("gm/export_phase_running", **_phase_of(ph)))
                break
            key = "votes" if ph.kind == PhaseKind.DAY else "actions"
            story = {"story": ph.story} if ph.story else {}
            out.append({"phase": ph.kind, key: ph.entries, **story})
        out += self.after_last
        return out


def _read_play(ph: _Phase, kind: str, data: dict[str, Any]) -> bool:
    """Apply an event of the open phase ``ph`` (a vote, an action, its story, its close);
    False if ``kind`` is none of them."""
    if kind == EventKind.VOTE and ph.kind == PhaseKind.DAY:
        ph.entries.append(
            {"voter": data["voter"], "target": data["target"], "early": bool(data.get("early"))}
        )
    elif kind == EventKind.NIGHT_ACTION and ph.kind == PhaseKind.NIGHT:
        entry = {"actor": data["actor"], "act": data["act"], "target": data["target"]}
        if data.get("guess"):
            entry["guess"] = data["guess"]
        ph.entries.append(entry)
    elif kind == EventKind.MAFIA_SHOT_REOPENED:
        # G2: the shot is sent again; without a new one the night has no mafia shot.
        ph.entries = [e for e in ph.entries if e["act"] != "mafia_shot"]
    elif kind == EventKind.STORY_SET:
        ph.story = str(data.get("story") or "")
    elif kind in (EventKind.DAY_CLOSED, EventKind.NIGHT_PUBLISHED):
        ph.closed = True
    else:
        return False
    return True


def _unreplayable(
    kind: str, data: dict[str, Any], override: bool, people: dict[int, Person]
) -> str | None:
    """The warning for a GM's act the scenario format cannot hold, if ``kind`` is one."""
    if kind == EventKind.NIGHT_EDITED:
        if data.get("deaths") != data.get("before"):
            return render(
                "gm/export_night_edited", number=data.get("number"), reason=data.get("reason", "")
            )
    elif kind == EventKind.STRIKE_MANUAL:
        if int(data.get("count", 0)) < 2:
            return render("gm/export_strike_manual", seat=_named(people, data))
    elif kind == EventKind.STRIKE_FORGIVEN:
        return render("gm/export_strike_forgiven", seat=_named(people, data))
    elif kind == EventKind.GAME_FINISHED and override:
        return render("gm/export_game_ended")
    return None


def _phase_of(ph: _Phase) -> dict[str, Any]:
    """A phase as the warnings name it («День 2»)."""
    return {"day": ph.kind == PhaseKind.DAY, "number": ph.number}


def _drop_for_modkill(ph: _Phase, seat: int, people: dict[int, Person]) -> list[str]:
    """A modkill during a phase is replayed before it: drop what it voided (V7) so that the
    replay refuses nothing the original accepted, and say what cannot be reproduced."""
    warnings: list[str] = []
    if ph.kind == PhaseKind.DAY:
        standing: dict[int, dict[str, Any]] = {}
        for e in ph.entries:
            standing[e["voter"]] = e
        voided = {v for v, e in standing.items() if e["target"] == seat}
        ph.entries = [e for e in ph.entries if e["voter"] != seat and e["voter"] not in voided]
        if voided:
            warnings.append(
                render(
                    "gm/export_modkill_votes",
                    **_phase_of(ph),
                    seat=_person(people, seat),
                    voters=[_person(people, v) for v in sorted(voided)],
                )
            )
        return warnings
    team_standing: dict[str, dict[str, Any]] = {}
    for e in ph.entries:
        if e["act"] in TEAM_ACTS:
            team_standing[e["act"]] = e
    void_team = {act for act, e in team_standing.items() if e["actor"] == seat}
    ph.entries = [e for e in ph.entries if e["actor"] != seat and e["act"] not in void_team]
    aimed = [e for e in ph.entries if e["target"] == seat and e["act"] not in TEAM_ACTS]
    if aimed:
        warnings.append(
            render("gm/export_modkill_actions", **_phase_of(ph), seat=_person(people, seat))
        )
    ph.entries = [e for e in ph.entries if e["target"] != seat]
    return warnings


# --- checking an export by replaying it ------------------------------------------------------


def _stored(game: Game) -> Game:
    """The game as the database holds it now. The phases, seats and events are always queried
    afresh, so the game's own fields must be too: an instance loaded before the game ended
    still says ``running`` with no winner, and comparing that with a replay that reaches the
    win reported a divergence that was not there."""
    return Game.objects.get(pk=game.pk)


def game_outcome(game: Game) -> dict[str, Any]:
    """Executions per day, deaths per night, who is alive and the winner of a game (as
    ``replay`` prints them), for comparison with a replay; all of it as stored now."""
    game = _stored(game)
    days: dict[int, int | None] = {}
    nights: dict[int, list[int]] = {}
    for p in Phase.objects.filter(game=game, status=PhaseStatus.DONE).order_by("opened_at"):
        result = p.result or {}
        if p.kind == PhaseKind.DAY and "executed" in result:
            days[p.number] = result["executed"]
        elif p.kind == PhaseKind.NIGHT and result.get("final"):
            nights[p.number] = list(result["final"].get("deaths", []))
    alive = sorted(
        cast(
            "QuerySet[Seat, int]",  # number__isnull=False
            Seat.objects.filter(
                game=game, status=SeatStatus.PLAYER, number__isnull=False, alive=True
            ).values_list("number", flat=True),
        )
    )
    return {"days": days, "nights": nights, "alive": alive, "winner": game.winner or None}


def replay_outcome(output: dict[str, Any]) -> dict[str, Any]:
    days: dict[int, int | None] = {}
    nights: dict[int, list[int]] = {}
    for p in output.get("phases", []):
        if p.get("phase") == "day":
            days[p["number"]] = p["executed"]
        elif p.get("phase") == "night":
            nights[p["number"]] = list(p["deaths"])
    return {
        "days": days,
        "nights": nights,
        "alive": output.get("alive", []),
        "winner": output.get("winner"),
    }


def compare_outcomes(
    game: dict[str, Any], replay: dict[str, Any], people: dict[int, Person] | None = None
) -> list[str]:
    """Differences between a game's outcome and its replay's, for the GM
    (``templates/messages/gm/replay_*.txt``); ``people`` names the seats."""
    people = people or {}

    def who(numbers: list[int] | None) -> list[Person] | None:
        return None if numbers is None else [_person(people, n) for n in numbers]

    diffs = []
    days, replay_days = game["days"], replay["days"]
    for n in sorted(set(days) | set(replay_days)):
        a, b = days.get(n), replay_days.get(n)
        if (n in days, a) != (n in replay_days, b):
            diffs.append(
                render(
                    "gm/replay_day_differs",
                    number=n,
                    game_held=n in days,
                    replay_held=n in replay_days,
                    game=_person(people, a) if a else None,
                    replay=_person(people, b) if b else None,
                )
            )
    for n in sorted(set(game["nights"]) | set(replay["nights"])):
        a, b = game["nights"].get(n), replay["nights"].get(n)
        if a != b:
            diffs.append(render("gm/replay_night_differs", number=n, game=who(a), replay=who(b)))
    if game["alive"] != replay["alive"]:
        diffs.append(
            render("gm/replay_alive_differs", game=who(game["alive"]), replay=who(replay["alive"]))
        )
    if game["winner"] != replay["winner"]:
        diffs.append(
            render(
                "gm/replay_winner_differs",
                game=_winner(game["winner"]),
                replay=_winner(replay["winner"]),
            )
        )
    return diffs


def _winner(value: str | None) -> str:
    try:
        return Winner(value).title if value else ""
    except ValueError:
        return str(value)


def replay_check(game: Game) -> list[str]:
    """Play the game's export (rolled back, nothing sent) and list how its outcome differs
    from the game's; an empty list means the replay reproduces the game."""
    from gameplay.replay import ScenarioError, parse_scenario, play

    export = export_game(game)
    try:
        name = render("gm/replay_game_name", game=game.name)[:200]
        output = play(parse_scenario(export.to_json()), name=name)
    except (ScenarioError, RuleViolation) as e:
        return [render("gm/replay_failed", why=str(e))]
    return compare_outcomes(game_outcome(game), replay_outcome(output), _people(_seats(game)))
