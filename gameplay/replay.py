"""Scenario replay (docs/scenario-format.md): a whole game written down as JSON, played
through the same services the bot and the panel call.

``parse_scenario`` validates a file strictly and raises ``ScenarioError`` with a one-line,
operator-facing message; ``play`` runs it on the configured database and returns the output
object. ``play`` runs inside a transaction that is rolled back unless ``keep`` is set, so a
replay leaves no game behind and never sends anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from django.db import transaction

from gameplay import services
from gameplay.models import Actor, Game, Phase, PhaseKind, Seat, SeatStatus, Source
from gameplay.models.community import NO_COMMUNITY_VK_ID
from gameplay.rules import Act, EarlyClose, Item, Role, RoleCounts, RuleViolation

if TYPE_CHECKING:
    from django.db.models import QuerySet

#: The reason of a scenario's modkill when its entry gives none (the service requires one).
MODKILL_REASON = "по сценарию"
#: VK ids given to scenario players (seat n → BASE + n); replacements count up from REPL_BASE.
VK_ID_BASE = 2_100_000_000
REPL_BASE = 2_110_000_000


class ScenarioError(ValueError):
    """The file is not a scenario (docs/scenario-format.md)."""


@dataclass(frozen=True)
class Player:
    seat: int
    role: Role
    item: Item | None
    name: str


@dataclass(frozen=True)
class Entry:
    phase: str
    votes: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    action: str = ""
    seat: int = 0
    reason: str = ""


@dataclass(frozen=True)
class Scenario:
    early_close: EarlyClose
    players: list[Player]
    entries: list[Entry]


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where} must be a whole number")
    return value


def _obj(value: Any, where: str, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where} must be an object")
    unknown = set(value) - allowed
    if unknown:
        raise ScenarioError(f"{where} has unknown key(s): {', '.join(sorted(unknown))}")
    missing = required - set(value)
    if missing:
        raise ScenarioError(f"{where} lacks key(s): {', '.join(sorted(missing))}")
    return value


def _enum(enum: type, value: Any, where: str) -> Any:
    try:
        return enum(value)
    except (ValueError, TypeError):
        choices = ", ".join(m.value for m in enum)  # type: ignore[attr-defined]
        raise ScenarioError(f"{where} must be one of: {choices}") from None


def parse_scenario(text: str) -> Scenario:
    data = _obj(
        _json(text), "the scenario", {"settings", "players", "phases"}, {"players", "phases"}
    )
    settings = _obj(data.get("settings", {}), "settings", {"early_close"}, set())
    early_close = _enum(EarlyClose, settings.get("early_close", "majority"), "settings.early_close")
    players = _players(data["players"])
    entries = _entries(data["phases"])
    return Scenario(early_close, sorted(players, key=lambda p: p.seat), entries)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno} column {e.colno}"
        raise ScenarioError(f"not valid JSON: {e.msg} at {where}") from None
    except RecursionError:
        raise ScenarioError("not a scenario: arrays or objects nested too deep") from None


def _players(raw_players: Any) -> list[Player]:
    if not isinstance(raw_players, list) or not raw_players:
        raise ScenarioError("players must be a non-empty list")
    players: list[Player] = []
    for i, p in enumerate(raw_players):
        where = f"players[{i}]"
        p = _obj(p, where, {"seat", "role", "item", "name"}, {"seat", "role"})
        seat = _int(p["seat"], f"{where}.seat")
        if seat < 1:
            raise ScenarioError(f"{where}.seat must be 1 or more")
        role = _enum(Role, p["role"], f"{where}.role")
        item = _enum(Item, p["item"], f"{where}.item") if p.get("item") is not None else None
        name = p.get("name", f"Игрок {seat}")
        if not isinstance(name, str) or not name.strip():
            raise ScenarioError(f"{where}.name must be a non-empty string")
        players.append(Player(seat, role, item, name.strip()))
    seats = [p.seat for p in players]
    if len(set(seats)) != len(seats):
        raise ScenarioError("players: seat numbers must be unique")
    items = [p.item for p in players if p.item]
    if len(set(items)) != len(items):
        raise ScenarioError("players: each item can be held by one player only")
    return players


def _entries(raw_phases: Any) -> list[Entry]:
    if not isinstance(raw_phases, list):
        raise ScenarioError("phases must be a list")
    entries: list[Entry] = []
    expected = "day"
    for i, ph in enumerate(raw_phases):
        where = f"phases[{i}]"
        if not isinstance(ph, dict) or "phase" not in ph:
            raise ScenarioError(f"{where} must be an object with a 'phase' key")
        kind = ph["phase"]
        if kind == "gm":
            ph = _obj(ph, where, {"phase", "action", "seat", "reason"}, {"phase", "action", "seat"})
            if ph["action"] not in ("modkill", "replace"):
                raise ScenarioError(f"{where}.action must be modkill or replace")
            reason = ph.get("reason", "")
            if not isinstance(reason, str):
                raise ScenarioError(f"{where}.reason must be a string")
            entries.append(
                Entry(
                    "gm",
                    action=ph["action"],
                    seat=_int(ph["seat"], f"{where}.seat"),
                    reason=reason.strip(),
                )
            )
            continue
        if kind not in ("day", "night"):
            raise ScenarioError(f"{where}.phase must be day, night or gm")
        if kind != expected:
            raise ScenarioError(f"{where}: phases must alternate day, night, … starting with day")
        expected = "night" if kind == "day" else "day"
        if kind == "day":
            # "story": the GM's paragraph of the phase's post (kept by the export; not played)
            ph = _obj(ph, where, {"phase", "votes", "story"}, {"phase"})
            entries.append(Entry("day", votes=_votes(ph.get("votes", []), where)))
        else:
            ph = _obj(ph, where, {"phase", "actions", "story"}, {"phase"})
            entries.append(Entry("night", actions=_actions(ph.get("actions", []), where)))
    return entries


def _votes(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ScenarioError(f"{where}.votes must be a list")
    out = []
    for j, v in enumerate(raw):
        w = f"{where}.votes[{j}]"
        v = _obj(v, w, {"voter", "target", "early"}, {"voter", "target"})
        early = v.get("early", False)
        if not isinstance(early, bool):
            raise ScenarioError(f"{w}.early must be true or false")
        out.append(
            {
                "voter": _int(v["voter"], f"{w}.voter"),
                "target": _int(v["target"], f"{w}.target"),
                "early": early,
            }
        )
    return out


def _actions(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ScenarioError(f"{where}.actions must be a list")
    out = []
    for j, a in enumerate(raw):
        w = f"{where}.actions[{j}]"
        a = _obj(a, w, {"actor", "act", "target", "guess"}, {"actor", "act", "target"})
        act = _enum(Act, a["act"], f"{w}.act")
        guess = None
        if act is Act.ROLE_STRIKE:
            if "guess" not in a:
                raise ScenarioError(f"{w}: role_strike needs a guess")
            guess = _enum(Role, a["guess"], f"{w}.guess")
        elif "guess" in a:
            raise ScenarioError(f"{w}: only role_strike takes a guess")
        out.append(
            {
                "actor": _int(a["actor"], f"{w}.actor"),
                "act": act,
                "target": _int(a["target"], f"{w}.target"),
                "guess": guess,
            }
        )
    return out


def play(scenario: Scenario, *, name: str = "Сценарий", keep: bool = False) -> dict[str, Any]:
    """Play a scenario through the services and return its output object (the format's)."""
    with transaction.atomic():
        output = _play(scenario, name)
        if not keep:
            transaction.set_rollback(True)
    return output


def _play(scenario: Scenario, name: str) -> dict[str, Any]:
    roles = [p.role for p in scenario.players]
    counts = RoleCounts(**{r.value: roles.count(r) for r in Role})
    # A replay reaches no VK community: nothing it writes in the Outbox goes out.
    settings: dict[str, Any] = {
        "early_close": scenario.early_close.value,
        "vk_group_id": NO_COMMUNITY_VK_ID,
    }
    try:
        game = services.game_create(name=name, counts=counts, by=Actor.REPLAY, **settings)
    except RuleViolation as e:
        raise ScenarioError(f"the players' roles are not a playable setup: {e.reason}") from None
    # one batch: what signup_create would do for each player in turn, in one lock and insert
    services.signups_create(
        game_id=game.pk,
        entries=[services.SignupEntry(VK_ID_BASE + p.seat, p.name) for p in scenario.players],
        by=Actor.REPLAY,
    )
    services.game_deal_fixed(
        game_id=game.pk,
        assignment={p.seat: (p.role, p.item) for p in scenario.players},
        by=Actor.REPLAY,
    )
    services.game_start(game_id=game.pk, by=Actor.REPLAY)
    out: list[dict[str, Any]] = []
    replacements = 0
    for entry in scenario.entries:
        if entry.phase == "day":
            out.append(_day(game, entry))
        elif entry.phase == "night":
            out.append(_night(game, entry))
        else:
            try:
                if entry.action == "modkill":
                    services.seat_modkill(
                        game_id=game.pk,
                        seat=entry.seat,
                        by=Actor.REPLAY,
                        reason=entry.reason or MODKILL_REASON,
                    )
                else:
                    replacements += 1
                    services.seat_replace(
                        game_id=game.pk,
                        seat=entry.seat,
                        vk_user_id=REPL_BASE + replacements,
                        name=f"Замена {replacements}",
                        by=Actor.REPLAY,
                        reason=entry.reason,
                    )
            except RuleViolation:
                pass  # a refused GM entry changes nothing; it is still echoed (the format)
            out.append(
                {"phase": "gm", "action": entry.action, "seat": entry.seat, "winner": _winner(game)}
            )
        if out[-1]["winner"] is not None:
            break
    seats = Seat.objects.filter(game=game, status=SeatStatus.PLAYER, alive=True)  # numbered
    alive = sorted(cast("QuerySet[Seat, int]", seats.values_list("number", flat=True)))
    return {"phases": out, "alive": alive, "winner": _winner(game)}


def _winner(game: Game) -> str | None:
    return Game.objects.values_list("winner", flat=True).get(pk=game.pk) or None


def _last_phase(game: Game, kind: str) -> Phase:
    return Phase.objects.filter(game=game, kind=kind).order_by("-number").first()  # type: ignore[return-value]


def _day(game: Game, entry: Entry) -> dict[str, Any]:
    rejected = []
    for i, v in enumerate(entry.votes):
        try:
            services.vote_submit(
                game_id=game.pk,
                voter=v["voter"],
                target=v["target"],
                early=v["early"],
                source=Source.REPLAY,
            )
        except RuleViolation:
            rejected.append(i)
    phase = _last_phase(game, PhaseKind.DAY)
    if phase.result is None:
        services.day_close(game_id=game.pk, by=Actor.REPLAY)
        phase.refresh_from_db()
    r = phase.result
    assert r is not None  # a closed day has its result
    return {
        "phase": "day",
        "number": phase.number,
        "rejected": rejected,
        "strikes": [{"seat": s["seat"], "strike": s["strike"]} for s in r["strikes"]],
        "modkilled": r["modkilled"],
        "tally": r["tally"],
        "executed": r["executed"],
        "closed_early": phase.closed_early,
        "winner": _winner(game),
    }


def _night(game: Game, entry: Entry) -> dict[str, Any]:
    rejected = []
    for i, a in enumerate(entry.actions):
        try:
            services.night_action_submit(
                game_id=game.pk,
                actor=a["actor"],
                act=a["act"],
                target=a["target"],
                guess=a["guess"],
                source=Source.REPLAY,
            )
        except RuleViolation:
            rejected.append(i)
    services.night_close(game_id=game.pk, by=Actor.REPLAY)
    services.night_publish(game_id=game.pk, by=Actor.REPLAY)
    phase = _last_phase(game, PhaseKind.NIGHT)
    assert phase.result is not None  # a published night has its result
    r = phase.result["final"]
    return {
        "phase": "night",
        "number": phase.number,
        "rejected": rejected,
        "blocked": r["blocked"],
        "deaths": r["deaths"],
        "checks": [
            {"target": c["target"], "result": "mafia" if c["is_mafia"] else "not_mafia"}
            for c in r["checks"]
        ],
        "strikes": [{"seat": s["seat"], "strike": s["strike"]} for s in r["strikes"]],
        "modkilled": r["modkilled"],
        "winner": _winner(game),
    }
