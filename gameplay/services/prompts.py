"""Prompts with buttons: at night one per thing a player can do (role action, the mafia's
shot, the role strike, the item), by day the vote; and the follow-up pages a pressed button
asks for (next targets, the commissar's choice, the role strike's guess).

The builders return ``(text, keyboard)`` (the keyboard as the Outbox row stores it:
:mod:`gameplay.buttons`; the bot renders it for VK at delivery) and never touch the database
beyond the seats they are given; ``queue_*`` write Outbox rows (called by the phase services
inside their transaction). Identical prompts (same text and keyboard) go out as one message
to many peers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gameplay import themes
from gameplay.buttons import (
    NEGATIVE,
    POSITIVE,
    PRIMARY,
    SECONDARY,
    VOTE,
    Button,
    Payload,
    choice_keyboard,
    label,
    targets_keyboard,
)
from gameplay.messages import Person, render, when
from gameplay.models import Game, Phase, PhaseKind, Seat
from gameplay.rules import EARLY_VOTE_FROM_DAY, Act, NightContext, Role, Table, valid_targets
from gameplay.rules.roles import KILL_ACTS
from gameplay.selectors.bot import acts_of, final_vote_target, last_heal_target, vote_targets

from .common import message_rows, queue_outbox, table_of

Prompt = tuple[str, dict[str, Any]]

#: The roles a role strike may guess, in the order of their buttons (labels: player/button).
GUESSES = (Role.COMMISSAR, Role.DOCTOR, Role.MANIAC)

_COLORS = {Act.HEAL: POSITIVE, Act.BOOK: POSITIVE, Act.CHECK: PRIMARY, Act.CLOCK: PRIMARY}


def _color(act: Act) -> str:
    return NEGATIVE if act in KILL_ACTS else _COLORS.get(act, SECONDARY)


def guess_choices(*, base: Payload) -> list[tuple[str, Payload]]:
    """The role strike's guesses: ``base`` with each role."""
    return [(label(f"guess_{role.value}"), base.but(guess=role.value)) for role in GUESSES]


def _pairs(seats: Sequence[Seat]) -> list[tuple[int, str]]:
    return [(s.number, s.name) for s in seats if s.number is not None]


# --- night -----------------------------------------------------------------------------------


@dataclass
class _Night:
    """What every seat's prompts of one night share, read once: the rules' table and context;
    and, for a batch (a night's opening), the texts and keyboards already built, by what they
    are built from (many players get the same ones)."""

    game: Game
    phase: Phase
    seats: Sequence[Seat]
    table: Table
    ctx: NightContext
    texts: dict[tuple[Any, ...], str] = field(default_factory=dict)
    boards: dict[Any, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, game: Game, phase: Phase, seats: Sequence[Seat]) -> _Night:
        ctx = NightContext(
            number=phase.number,
            role_strike_used=game.role_strike_used,
            last_heal_target=last_heal_target(seats),
        )
        return cls(game, phase, seats, table_of(seats), ctx)

    def text(self, key: tuple[Any, ...], make: Callable[[], str]) -> str:
        if key not in self.texts:
            self.texts[key] = make()
        return self.texts[key]

    def commissar(self) -> Prompt:
        """The commissar's choice tonight: check or shoot."""
        game, phase = self.game, self.phase
        text = self.text(
            ("commissar",),
            lambda: render(
                "player/commissar_prompt",
                number=phase.number,
                deadline=when(phase.deadline, game.time_zone),
            ),
        )
        board = self.boards.get(("commissar",))
        if board is None:
            base = Payload("", game=game.pk, phase=phase.pk)
            choices = [
                (label(a.value), base.but(action=a.value)) for a in (Act.CHECK, Act.COMMISSAR_SHOT)
            ]
            board = self.boards["commissar",] = choice_keyboard(choices)
        return text, board


def _targets(night: _Night, seat: Seat, act: Act) -> list[Seat]:
    """The seats the rules accept for this act tonight (:func:`gameplay.rules.valid_targets`):
    never the sender where §4 forbids it, never the doctor's previous accepted heal."""
    if seat.number is None or not seat.role:
        return []
    numbers = set(valid_targets(night.table, night.ctx, seat.number, act))
    return [s for s in night.seats if s.number in numbers]


def _question(seats: Sequence[Seat], seat: Seat, act: Act, targets: Sequence[Seat]) -> dict:
    """What the question above an act's buttons needs: whether the sender may aim it at
    themselves, and (for the heal) the player healed last night, whom the buttons leave out."""
    healed = None
    if act is Act.HEAL:
        heal = last_heal_target(seats)
        prev = next((s for s in seats if s.number == heal), None)
        if prev is not None and prev.alive:
            healed = Person.of(prev)
    return {"act": act.value, "no_self": seat not in targets, "healed": healed}


def _act_text(night: _Night, seat: Seat, act: Act, targets: list[Seat]) -> str:
    """An act's prompt: the night, the item's card, the question, the deadline (the same for
    every sender of ``act`` who may, or may not, aim it at themselves)."""
    game, phase = night.game, night.phase
    return night.text(
        (act, seat not in targets),
        lambda: render(
            "player/act_prompt",
            theme=themes.of(game),
            number=phase.number,
            item=act.item.value if act.item else "",
            deadline=when(phase.deadline, game.time_zone),
            **_question(night.seats, seat, act, targets),
        ),
    )


def act_page(
    *, game: Game, phase: Phase, seats: Sequence[Seat], seat: Seat, act: Act, offset: int = 0
) -> Prompt:
    """The targets of one act, one page, under the act's whole prompt (the night and its
    deadline stay when a page replaces the prompt: ▶, or «Проверка» of the commissar's)."""
    night = _Night.of(game, phase, seats)
    targets = _targets(night, seat, act)
    base = Payload(act.value, game=game.pk, phase=phase.pk)
    text = _act_text(night, seat, act, targets)
    return text, targets_keyboard(_pairs(targets), base, offset=offset, color=_color(act))


def guess_page(*, game: Game, phase: Phase, target: Seat) -> Prompt:
    """Step two of a role strike: the guessed role (with the night and its deadline)."""
    base = Payload(Act.ROLE_STRIKE.value, game=game.pk, phase=phase.pk, target=target.number)
    text = render(
        "player/pick_guess",
        target=Person.of(target),
        number=phase.number,
        deadline=when(phase.deadline, game.time_zone),
    )
    return text, choice_keyboard(guess_choices(base=base), color=NEGATIVE)


def night_prompts(*, game: Game, phase: Phase, seats: Sequence[Seat], seat: Seat) -> list[Prompt]:
    """Everything this seat can send tonight, one prompt each."""
    return _night_prompts(_Night.of(game, phase, seats), seat)


def _night_prompts(night: _Night, seat: Seat) -> list[Prompt]:
    game, phase = night.game, night.phase
    acts = acts_of(seat, role_strike_used=game.role_strike_used)
    if phase.reopened_for:
        acts = [a for a in acts if a.slot.value == phase.reopened_for]
    out: list[Prompt] = []
    if Act.CHECK in acts and Act.COMMISSAR_SHOT in acts:
        out.append(night.commissar())
        acts = [a for a in acts if a not in (Act.CHECK, Act.COMMISSAR_SHOT)]
    for act in acts:
        targets = _targets(night, seat, act)
        base = Payload(act.value, game=game.pk, phase=phase.pk)
        board = targets_keyboard(_pairs(targets), base, color=_color(act), memo=night.boards)
        out.append((_act_text(night, seat, act, targets), board))
    return out


def queue_night_prompts(*, game: Game, phase: Phase, seats: Sequence[Seat]) -> None:
    """At night start: every living player with an action gets a prompt per action."""
    night = _Night.of(game, phase, seats)
    _queue(
        game,
        [(s, p) for s in seats if s.alive for p in _night_prompts(night, s)],
        kind="night_prompt",
    )


# --- day -------------------------------------------------------------------------------------


def vote_page(
    *,
    game: Game,
    phase: Phase,
    seats: Sequence[Seat],
    seat: Seat,
    early: bool = False,
    offset: int = 0,
    text: str | None = None,
    boards: dict[Any, dict[str, Any]] | None = None,
) -> Prompt:
    """The vote buttons (every other living player); from Day 3 an «early» switch. An early
    page asked for before Day 3 (typed «голос досрочно», a forged button) is the ordinary one,
    saying why: the rules would take its votes as ordinary ones (V6). ``boards``: the keyboards
    of a batch of prompts so far (:func:`gameplay.buttons.targets_keyboard`'s ``memo``)."""
    too_soon = early and phase.number < EARLY_VOTE_FROM_DAY
    early = early and not too_soon
    base = Payload(VOTE, game=game.pk, phase=phase.pk, early=early)
    extra = []
    if phase.number >= EARLY_VOTE_FROM_DAY and not early:
        extra.append(Button(label("early"), base.but(early=True), PRIMARY))
    board = targets_keyboard(
        _pairs(vote_targets(seats, seat)),
        base,
        offset=offset,
        color=NEGATIVE if early else SECONDARY,
        extra=extra,
        memo=boards,
    )
    if text is None:
        text = render(
            "player/early_vote_prompt" if early else "player/vote_page",
            number=phase.number,
            too_soon=too_soon,
            early_day=EARLY_VOTE_FROM_DAY,
        )
    return text, board


def day_prompt(*, game: Game, phase: Phase, seats: Sequence[Seat], seat: Seat) -> Prompt:
    return vote_page(game=game, phase=phase, seats=seats, seat=seat, text=_day_text(game, phase))


def _day_text(game: Game, phase: Phase) -> str:
    """The day's prompt above the vote buttons (the same for every player)."""
    return render(
        "player/day_prompt",
        number=phase.number,
        deadline=when(phase.deadline, game.time_zone),
        early=phase.number >= EARLY_VOTE_FROM_DAY,
    )


def phase_prompts(*, game: Game, phase: Phase, seats: Sequence[Seat], seat: Seat) -> list[Prompt]:
    """What this seat can send in this phase: the vote buttons by day, one prompt per action by
    night (none for a seat with no night action). A seat holding a final early vote (V6) has
    nothing to send by day: it is told so, with no buttons the rules would refuse."""
    if phase.kind == PhaseKind.DAY:
        final = final_vote_target(phase, seats, seat)
        if final is not None:
            return [(render("player/vote_final", target=Person.of(final)), {})]
        return [day_prompt(game=game, phase=phase, seats=seats, seat=seat)]
    return night_prompts(game=game, phase=phase, seats=seats, seat=seat)


def queue_day_prompts(*, game: Game, phase: Phase, seats: Sequence[Seat]) -> None:
    """At day start: every living player gets the vote buttons (the text rendered once, each
    keyboard built once for the players who get it)."""
    text = _day_text(game, phase)
    boards: dict[Any, dict[str, Any]] = {}
    prompts = [
        (s, vote_page(game=game, phase=phase, seats=seats, seat=s, text=text, boards=boards))
        for s in seats
        if s.alive
    ]
    _queue(game, prompts, kind="day_prompt")


# --- sending ---------------------------------------------------------------------------------


def _queue(game: Game, prompts: Sequence[tuple[Seat, Prompt]], *, kind: str) -> None:
    """Queue the prompts, one message per distinct text and keyboard (a keyboard shared by
    several prompts, the same object, is serialised once)."""
    groups: dict[str, tuple[str, dict[str, Any], list[int]]] = {}
    dumped: dict[int, str] = {}  # by id(): the boards live as long as ``prompts``
    for seat, (text, board) in prompts:
        if id(board) not in dumped:
            dumped[id(board)] = json.dumps(board, sort_keys=True, ensure_ascii=False)
        key = text + "\x00" + dumped[id(board)]
        groups.setdefault(key, (text, board, []))[2].append(seat.vk_user_id)
    rows = [
        row
        for text, board, peers in groups.values()
        for row in message_rows(game=game, peer_ids=peers, text=text, kind=kind, keyboard=board)
    ]
    queue_outbox(rows=rows)
