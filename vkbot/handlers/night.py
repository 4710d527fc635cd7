"""Night actions in private messages: text («проверка 5», «лечу Аня», «удар 7 комиссар») and
buttons (pages of targets, the commissar's choice, the role strike's guess)."""

from __future__ import annotations

from gameplay.buttons import Payload
from gameplay.models import PhaseKind, PhaseStatus, Seat
from gameplay.refusals import (
    ActByDay,
    NightReopenedForMafiaShot,
    NightUnderReview,
    NoShot,
    StaleButton,
)
from gameplay.rules import Act, Role
from gameplay.rules.errors import ActionNotAvailable, TargetNotAlive, UnknownTarget
from gameplay.selectors import bot as sel
from gameplay.services import actions, prompts
from vkbot import parsing

from .base import Sender, living_seat, say, target_number

_VERB_ACTS: dict[str, Act] = {
    parsing.CHECK: Act.CHECK,
    parsing.HEAL: Act.HEAL,
    parsing.STRIKE: Act.ROLE_STRIKE,
    parsing.CLOCK: Act.CLOCK,
    parsing.RED_BUTTON: Act.RED_BUTTON,
    parsing.BOOK: Act.BOOK,
}
_SHOTS: dict[str, Act] = {
    Role.MAFIA: Act.MAFIA_SHOT,
    Role.COMMISSAR: Act.COMMISSAR_SHOT,
    Role.MANIAC: Act.MANIAC_SHOT,
}


def act_for(verb: str, seat: Seat) -> Act:
    """The act a verb means for this seat («выстрел» is the shot of the sender's role)."""
    if verb == parsing.SHOT:
        act = _SHOTS.get(seat.role)
        if act is None:
            raise NoShot()
        return act
    return _VERB_ACTS[verb]


def from_text(sender: Sender, cmd: parsing.Command) -> None:
    seat = living_seat(sender)
    if seat is None:
        return
    act = act_for(cmd.verb, seat)
    base = Payload(act.value, game=seat.game_id)
    if cmd.target is None:
        show_page(seat, base)  # «проверка» alone: the buttons
        return
    number = target_number(seat, cmd.target)
    if act is Act.ROLE_STRIKE and cmd.guess is None:
        show_page(seat, base.but(target=number))  # «удар 7»: which role?
        return
    actions.night_action_submit(
        game_id=seat.game_id,
        vk_user_id=sender.vk_user_id,
        act=act,
        target=number,
        guess=cmd.guess,
    )


def _night_phase(seat: Seat, payload: Payload):  # noqa: ANN202
    phase = sel.current_phase(seat.game_id)
    if phase is None or phase.kind != PhaseKind.NIGHT:
        raise ActByDay()
    if phase.status != PhaseStatus.OPEN or sel.night_closed_to(phase, seat):
        raise NightUnderReview()
    if payload.phase and payload.phase != phase.pk:
        raise StaleButton()
    return phase


def show_page(seat: Seat, payload: Payload, *, edit: int | None = None) -> None:
    """Buttons for one act: a page of targets (or, for a chosen role strike target, the
    guesses), replacing the message ``edit`` when a button of it asked. Raises a refusal when
    the act is not the seat's to send now."""
    phase = _night_phase(seat, payload)
    game = seat.game
    act = Act(payload.action)
    if act not in sel.acts_of(seat, role_strike_used=game.role_strike_used):
        raise ActionNotAvailable()
    if phase.reopened_for and act.slot.value != phase.reopened_for:
        raise NightReopenedForMafiaShot()
    seats = sel.roster(game)
    if act is Act.ROLE_STRIKE and payload.target is not None:
        target = next((s for s in seats if s.number == payload.target), None)
        if target is None:
            raise UnknownTarget()
        if not target.alive:
            raise TargetNotAlive()
        text, board = prompts.guess_page(game=game, phase=phase, target=target)
    else:
        text, board = prompts.act_page(
            game=game, phase=phase, seats=seats, seat=seat, act=act, offset=payload.offset
        )
    say(seat.vk_user_id, text, game=game, keyboard=board, kind="night_page", edit=edit)


def pressed(seat: Seat, payload: Payload, *, edit: int | None = None) -> None:
    """A night button: a page request, or a submission (re-validated by the services)."""
    act = Act(payload.action)
    needs_page = payload.target is None or (act is Act.ROLE_STRIKE and payload.guess is None)
    if needs_page:
        show_page(seat, payload, edit=edit)
        return
    assert payload.target is not None  # needs_page otherwise
    actions.night_action_submit(
        game_id=seat.game_id,
        vk_user_id=seat.vk_user_id,
        act=act,
        target=payload.target,
        guess=payload.guess if act is Act.ROLE_STRIKE else None,
        phase_id=payload.phase,
    )
