"""Who acts from VK: the user's living seat in a game, and whether the button they pressed
still belongs to the game's open phase (the hot path of votes and night actions)."""

from __future__ import annotations

from gameplay.models import Game, Phase, PhaseStatus, Seat, SeatStatus
from gameplay.refusals import StaleButton
from gameplay.rules.errors import DeadCannotAct, NotInGame
from gameplay.selectors.bot import night_closed_to


def seat_of_user(*, game: Game, vk_user_id: int, seats: list[Seat] | None = None) -> Seat:
    """The user's living seat in the game (``seats``: its players, if already read)."""
    if seats is None:
        seat = (
            Seat.objects.filter(game=game, vk_user_id=vk_user_id, status=SeatStatus.PLAYER)
            .exclude(number__isnull=True)
            .first()
        )
    else:
        seat = next((s for s in seats if s.vk_user_id == vk_user_id), None)
    if seat is None:
        raise NotInGame()
    if not seat.alive:
        raise DeadCannotAct()
    return seat


def check_button_phase(
    *, phase: Phase | None, phase_id: int | None, seat: Seat | None = None
) -> Phase | None:
    """A button names its phase: it must be the game's current (``phase``), open phase (open
    to ``seat``: a night re-opened for the mafia's shot is closed to everyone else)."""
    if phase_id is not None and (
        phase is None
        or phase.pk != phase_id
        or phase.status != PhaseStatus.OPEN
        or (seat is not None and night_closed_to(phase, seat))
    ):
        raise StaleButton()
    return phase
