"""Who may be in the spectator chat (RULES.md G6): the one decision the bot's invitations, its
refusals, the chat's guard and the panel all use.

A dead player who was not in a team may join: town roles and the maniac, never the mafia. Once
the game is over every role is public and any player of the game may join.
"""

from __future__ import annotations

from enum import StrEnum

from .roles import Faction, Role


class SpectatorBar(StrEnum):
    """Why a person may not be in the spectator chat."""

    #: Not a seated player of this game.
    OUTSIDER = "outsider"
    #: Still playing.
    ALIVE = "alive"
    #: Out of the game, but a member of the mafia (a team: G6 keeps it out).
    MAFIA = "mafia"


def spectator_bar(
    *, seated: bool, alive: bool, role: Role | str | None, game_over: bool
) -> SpectatorBar | None:
    """None when this person may be in the spectator chat, else why not."""
    if not seated:
        return SpectatorBar.OUTSIDER
    if game_over:
        return None
    if alive:
        return SpectatorBar.ALIVE
    if role and Role(role).faction is Faction.MAFIA:
        return SpectatorBar.MAFIA
    return None


def may_watch(*, alive: bool, role: Role | str | None, game_over: bool = False) -> bool:
    """G6 for a seated player: whether the bot invites them (and lets them stay)."""
    return spectator_bar(seated=True, alive=alive, role=role, game_over=game_over) is None
