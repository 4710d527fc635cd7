"""The end-of-game post (RULES.md §7): its facts gathered here, its words in
``templates/messages/board/game_over.txt`` and ``board/decision.txt``.

Every role, the night actions that stood, the GM's decisions (from the game's log: each
override event's own facts, not a stored sentence), the composition the deal was made for
and what the deal can be checked with. Names and role words are rendered by the templates
(``gameplay.messages``), in the game's theme. A decision's reason is not among its facts: the
GM writes it for the player concerned (a modkill's or a strike's reaches that player privately,
as the panel promises) and for the record (the GM's export), never for the board.
"""

from __future__ import annotations

from typing import Any, cast

from gameplay import themes
from gameplay.messages import Person, players_page_url, render
from gameplay.models import EventKind, Game, GameEvent, NightAction, Seat
from gameplay.rules import Act, Item, Winner
from gameplay.rules.roles import ACT_TITLES

#: The roles of the composition line, in the order the deal takes them.
COUNT_ROLES = ("mafia", "commissar", "doctor", "maniac", "civilian")


def game_over_post(
    *,
    game: Game,
    winner: Winner | None,
    seats: list[Seat],
    rounds: list[tuple[int, str, str]],
    roster: list[int],
) -> str:
    """The end-of-game post: the winner, every role and item, the night log, the GM's
    decisions, the seeds and what the deal can be checked with."""
    return render(
        "board/game_over",
        theme=themes.of(game),
        game=game.name,
        winner=winner.title if winner else "",
        winner_key=winner.value if winner else "",
        seats=[{"person": Person.of(s), "role": s.role, "item": s.item} for s in seats],
        night_log=night_log(game=game, seats=seats),
        overrides=decisions(game=game, seats=seats),
        seed=game.seed,
        commitment=game.commitment,
        counts=counts(game=game),
        rounds=rounds,
        roster_ids=",".join(str(v) for v in roster),
        from_seed=game.deal_from_seed and bool(roster),
        players_url=players_page_url(),
    )


def counts(*, game: Game) -> list[dict[str, Any]]:
    """The composition line's facts: each role and how many the deal gave it."""
    return [{"role": r, "n": getattr(game, f"{r}_count")} for r in COUNT_ROLES]


def _people(seats: list[Seat]) -> dict[int, Person]:
    return {s.number: Person.of(s) for s in seats if s.number is not None}


def night_log(*, game: Game, seats: list[Seat]) -> list[dict[str, Any]]:
    """Every night action that stood at a close, for the end-of-game publication."""
    rows = (
        NightAction.objects.filter(phase__game=game, current=True)
        .select_related("phase", "actor", "target")
        .order_by("phase__number", "id")
    )
    people = _people(seats)
    items = {i.value for i in Item}
    return [
        {
            "number": a.phase.number,
            "actor": people.get(cast(int, a.actor.number)) or Person.of(a.actor),
            "target": people.get(cast(int, a.target.number)) or Person.of(a.target),
            "act": a.act,
            "item": a.act in items,
            "title": ACT_TITLES[Act(a.act)],
            "guess": a.guess or "",
        }
        for a in rows
    ]


def decisions(*, game: Game, seats: list[Seat]) -> list[dict[str, Any]]:
    """The GM's decisions (override events), each as the facts ``board/decision`` words."""
    people = _people(seats)
    out = []
    events = GameEvent.objects.filter(game=game, override=True).select_related("phase")
    for e in events.order_by("seq"):
        d = _decision(e, people)
        if d is not None:
            out.append(d)
    return out


def _decision(e: GameEvent, people: dict[int, Person]) -> dict[str, Any] | None:
    data = e.data or {}
    person = Person.of_event(data, people)
    number = e.phase.number if e.phase is not None else None
    if (
        e.kind in (EventKind.MODKILL, EventKind.STRIKE_MANUAL, EventKind.STRIKE_FORGIVEN)
        and person is not None
    ):
        return {"kind": e.kind, "person": person, "count": data.get("count")}
    if e.kind == EventKind.NIGHT_EDITED:
        died, before = set(data.get("deaths") or ()), set(data.get("before") or ())
        return {
            "kind": e.kind,
            "number": number,
            "died": [people[n] for n in sorted(died - before) if n in people],
            "saved": [people[n] for n in sorted(before - died) if n in people],
        }
    if e.kind == EventKind.MAFIA_SHOT_REOPENED:
        return {"kind": e.kind, "number": number}
    if e.kind == EventKind.GAME_FINISHED:
        winner = data.get("winner")
        return {"kind": e.kind, "winner": Winner(winner).title if winner else ""}
    if e.kind == EventKind.DEAL_FIXED:
        return {"kind": e.kind}
    # deal rounds and discarded deals: their summary is a board text already
    summary = str(data.get("summary") or "").strip()
    return {"kind": "text", "text": summary} if summary else None
