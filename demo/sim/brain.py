"""The simulated players' choices: pure functions of what a player knows, the buttons in
front of them and a random generator. A move is pressing a button, writing to the community,
or posting in the board — exactly what a person on a phone can do.

The players are plausible, not strong: the town herds around a few suspects a day, the mafia
never shoots or votes for its own and lets one member (the lowest living number) lead, the
commissar shoots a player their check found to be mafia, the doctor heals, items are used now
and then.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gameplay.buttons import NIGHT_ACTS, VOTE

from .knowledge import Button, Me, Table

GUESS_WORDS = ("комиссар", "доктор", "маньяк")
#: Words for a night act written as text (vkbot/parsing.py).
ACT_WORDS = {
    "mafia_shot": "выстрел",
    "commissar_shot": "выстрел",
    "maniac_shot": "выстрел",
    "check": "проверка",
    "heal": "лечу",
    "clock": "часы",
    "red_button": "кнопка",
    "book": "книга",
}
CHATTER = (
    "Доброе утро, город!",
    "Я мирный, честно. Давайте думать вместе.",
    "№{n} что-то слишком тихий сегодня.",
    "Мне не нравится, как голосует №{n}.",
    "Предлагаю присмотреться к №{n}.",
    "Кто-нибудь видел, куда делся ассистент профессора?",
)


@dataclass(frozen=True)
class Press:
    row: int
    column: int
    what: str


@dataclass(frozen=True)
class Write:
    text: str


@dataclass(frozen=True)
class Post:
    topic_id: int
    text: str


Move = Press | Write | Post


def targets(buttons: list[Button], act: str) -> dict[int, Button]:
    """The target buttons of one act on this page, by seat number."""
    return {
        b.payload.target: b
        for b in buttons
        if b.payload is not None
        and b.payload.action == act
        and b.payload.target is not None
        and (act != "role_strike" or b.payload.guess is None)
    }


def acts_in(buttons: list[Button]) -> set[str]:
    return {b.payload.action for b in buttons if b.payload is not None}


def is_leader(me: Me, table: Table) -> bool:
    """The mafia's leader: its lowest living member (by the public deaths)."""
    living = [n for n in sorted(me.team) if n not in table.dead]
    return bool(living) and living[0] == me.number


def suspects(table: Table, day: int) -> list[int]:
    """Today's rumour: a few living players the town talks about (the same for everyone)."""
    living = table.living()
    rng = random.Random(f"{table.game}:{day}")
    return rng.sample(living, min(3, len(living)))


def _pick_target(
    me: Me,
    table: Table,
    rng: random.Random,
    *,
    allow_self: bool = False,
    avoid_team: bool = True,
) -> int | None:
    pool = [n for n in table.living() if (allow_self or n != me.number)]
    if avoid_team and me.role == "mafia":
        pool = [n for n in pool if n not in me.team]
    return rng.choice(pool) if pool else None


def vote_move(
    me: Me, table: Table, buttons: list[Button], day: int, rng: random.Random
) -> Move | None:
    """Today's vote: often one of the day's suspects, else anyone; cast in the board, by
    button or by a private message."""
    pool = [n for n in table.living() if n != me.number]
    if me.role == "mafia":
        pool = [n for n in pool if n not in me.team]
    if not pool:
        return None
    rumour = [n for n in suspects(table, day) if n in pool]
    target = rng.choice(rumour) if rumour and rng.random() < 0.7 else rng.choice(pool)
    visible = targets(buttons, VOTE)
    roll = rng.random()
    if table.topic_id is not None and roll < 0.5:
        text = rng.choice((f"голос {target}", f"Голос: {target}", f"голосую за №{target}"))
        return Post(table.topic_id, text)
    if target in visible and roll < 0.85:
        button = visible[target]
        return Press(button.row, button.column, f"голос за №{target} кнопкой")
    return Write(f"голос {target}")


def chatter(me: Me, table: Table, rng: random.Random) -> Post | None:
    if table.topic_id is None:
        return None
    other = _pick_target(me, table, rng)
    text = rng.choice(CHATTER).format(n=other or 1)
    return Post(table.topic_id, text)


def night_move(
    me: Me, table: Table, buttons: list[Button], rng: random.Random, *, followup: bool = False
) -> Move | None:
    """What to do with a night prompt (or a page it led to). None: leave it."""
    acts = acts_in(buttons) & NIGHT_ACTS
    if not acts:
        return None
    if (
        {"check", "commissar_shot"} <= acts
        and not targets(buttons, "check")
        and not targets(buttons, "commissar_shot")
    ):
        return _commissar_choice(me, table, buttons, rng)
    act = sorted(acts)[0]
    if act == "role_strike":
        return _role_strike(me, table, buttons, rng, followup=followup)
    if act == "mafia_shot":
        if not is_leader(me, table) and rng.random() > 0.1:
            return None
        return _shoot(me, table, buttons, act, rng)
    if act in ("clock", "red_button", "book") and not followup and rng.random() > 0.3:
        return None
    if act == "commissar_shot":
        known = [n for n, mafia in me.checked.items() if mafia and n not in table.dead]
        if known:
            return _at(buttons, act, rng.choice(known), rng)
    if act == "check":
        fresh = [n for n in table.living() if n != me.number and n not in me.checked]
        if fresh:
            return _at(buttons, act, rng.choice(fresh), rng)
    if act in ("heal", "book"):
        visible = targets(buttons, act)
        if me.number in visible and rng.random() < 0.3:
            return _press(visible[me.number], act)
        if visible:
            return _press(visible[rng.choice(sorted(visible))], act)
        return None
    return _shoot(me, table, buttons, act, rng)


def _press(button: Button, act: str) -> Press:
    return Press(button.row, button.column, f"{act}: {button.label}")


def _at(buttons: list[Button], act: str, target: int, rng: random.Random) -> Move:
    visible = targets(buttons, act)
    if target in visible and rng.random() < 0.75:
        return _press(visible[target], act)
    return Write(f"{ACT_WORDS[act]} {target}")


def _shoot(
    me: Me, table: Table, buttons: list[Button], act: str, rng: random.Random
) -> Move | None:
    visible = targets(buttons, act)
    if me.role == "mafia":
        visible = {n: b for n, b in visible.items() if n not in me.team}
    if visible and rng.random() < 0.7:
        return _press(visible[rng.choice(sorted(visible))], act)
    target = _pick_target(me, table, rng)
    return None if target is None else Write(f"{ACT_WORDS[act]} {target}")


def _commissar_choice(me: Me, table: Table, buttons: list[Button], rng: random.Random) -> Move:
    known = [n for n, mafia in me.checked.items() if mafia and n not in table.dead]
    act = "commissar_shot" if known and rng.random() < 0.8 else "check"
    if rng.random() < 0.5:
        target = rng.choice(known) if act == "commissar_shot" else _pick_target(me, table, rng)
        if target is not None:
            return Write(f"{ACT_WORDS[act]} {target}")
    choice = next(b for b in buttons if b.payload is not None and b.payload.action == act)
    return Press(choice.row, choice.column, f"выбор: {choice.label}")


def _role_strike(
    me: Me, table: Table, buttons: list[Button], rng: random.Random, *, followup: bool
) -> Move | None:
    guesses = [b for b in buttons if b.payload is not None and b.payload.guess is not None]
    if guesses:  # the second step: which role
        return _press(rng.choice(guesses), "role_strike")
    if followup or not is_leader(me, table) or rng.random() > 0.12:
        return None
    target = _pick_target(me, table, rng)
    if target is None:
        return None
    visible = targets(buttons, "role_strike")
    if target in visible and rng.random() < 0.5:
        return _press(visible[target], "role_strike")
    return Write(f"удар {target} {rng.choice(GUESS_WORDS)}")


def mafia_talk(me: Me, table: Table, rng: random.Random) -> Write | None:
    """A word to the team through the bot's relay («!…»)."""
    target = _pick_target(me, table, rng)
    if target is None:
        return None
    return Write(rng.choice((f"!Предлагаю №{target}", f"!Стреляем в №{target}?", "!Я за.")))
