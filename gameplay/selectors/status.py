"""«статус»: what a player sent in the current phase (and, for the mafia, the team's
actions). A fixed number of queries, whatever the size of the game."""

from __future__ import annotations

from dataclasses import dataclass, field

from gameplay.models import NightAction, Phase, PhaseKind, Seat, Vote
from gameplay.rules import Act, Role

from .bot import current_phase, roster


@dataclass
class PlayerStatus:
    seat: Seat
    phase: Phase | None
    #: The seat's own standing night submissions this phase.
    actions: list[NightAction] = field(default_factory=list)
    #: Mafia only: the team's standing shot and role strike this night.
    team_shot: NightAction | None = None
    team_strike: NightAction | None = None
    #: Mafia only: living teammates (self excluded).
    team: list[Seat] = field(default_factory=list)
    vote: Vote | None = None


def player_status(seat: Seat) -> PlayerStatus:
    """What the player sent in the current phase (and, for the mafia, the team's actions)."""
    game = seat.game
    phase = current_phase(game)
    status = PlayerStatus(seat=seat, phase=phase)
    mafia = seat.role == Role.MAFIA
    if mafia:
        status.team = [
            s for s in roster(game) if s.role == Role.MAFIA and s.alive and s.pk != seat.pk
        ]
    if phase is None:
        return status
    if phase.kind == PhaseKind.NIGHT:
        rows = NightAction.objects.filter(phase=phase, current=True).select_related(
            "actor", "target"
        )
        for a in rows:
            if a.actor_id == seat.pk and a.slot in ("role", "item"):
                status.actions.append(a)
            elif mafia and a.act == Act.MAFIA_SHOT:
                status.team_shot = a
            elif mafia and a.act == Act.ROLE_STRIKE:
                status.team_strike = a
    else:
        status.vote = (
            Vote.objects.filter(phase=phase, voter=seat, current=True, void=False)
            .select_related("target")
            .first()
        )
    return status
