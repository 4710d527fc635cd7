"""The bot's replies that are built from the game's state: help for the player's own role,
«статус», the outsider's status and the answer in a chat. The texts themselves are in
``templates/messages/`` (``gameplay.messages``); this only gathers what they show.

Nothing here names another player's role or action: the status of a mafia member shows the
team's shot and role strike (the team knows them), everyone else sees only their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from gameplay import themes
from gameplay.messages import Person, render, when
from gameplay.models import NightAction, PhaseKind, Seat
from gameplay.rules import EARLY_VOTE_FROM_DAY, Act, Role
from gameplay.rules.roles import ACT_TITLES
from gameplay.rules.spectators import may_watch
from gameplay.selectors.bot import night_closed_to
from gameplay.selectors.status import PlayerStatus


def help_for(seat: Seat | None) -> str:
    """Help for this player's own role and item only."""
    if seat is None:
        return render("player/help_outsider", title=themes.THEMES[themes.DEFAULT])
    game = seat.game
    if seat.number is None or not seat.role or game.status != "running":
        return render("player/help_signed_up", game=game.name, reserve=seat.status == "reserve")
    if not seat.alive:
        return render(
            "player/help_dead",
            invited=may_watch(alive=False, role=seat.role),
            open=game.spectator_chat_open and bool(game.spectator_chat_id),
        )
    return render(
        "player/help",
        theme=themes.of(game),
        game=game.name,
        seat=Person.of(seat),
        role=seat.role,
        item=seat.item if seat.item and not seat.item_used else "",
        early_day=EARLY_VOTE_FROM_DAY,
    )


def _act(a: NightAction) -> dict[str, object]:
    return {
        "act": ACT_TITLES[Act(a.act)],
        "target": Person.of(a.target),
        "guess": a.guess,
        "actor": Person.of(a.actor),
    }


def _spectators(seat: Seat) -> str:
    """What «статус» tells a player who is out about the spectator chat (G6): "" when they
    may not watch (alive, or mafia) — nothing is promised then; "open" or "closed"."""
    if seat.alive or not may_watch(alive=False, role=seat.role):
        return ""
    game = seat.game
    return "open" if game.spectator_chat_open and game.spectator_chat_id else "closed"


def status_text(st: PlayerStatus) -> str:
    seat, game, phase = st.seat, st.seat.game, st.phase
    role = Role(seat.role)
    if phase is None:
        phase_kind = ""
    elif phase.kind == PhaseKind.DAY:
        phase_kind = "day"
    else:
        phase_kind = "review" if night_closed_to(phase, seat) else "night"
    vote = st.vote
    return render(
        "player/status",
        theme=themes.of(game),
        game=game.name,
        seat=Person.of(seat),
        role=role,
        item=seat.item,
        item_used=seat.item_used,
        strikes=seat.strikes,
        alive=seat.alive,
        spectators=_spectators(seat),
        phase=phase_kind,
        number=phase.number if phase else 0,
        deadline=when(phase.deadline, game.time_zone) if phase else "",
        vote=Person.of(vote.target) if vote else None,
        vote_early=bool(vote and vote.early),
        actions=[_act(a) for a in st.actions],
        expects_action=role is not Role.MAFIA and (role is not Role.CIVILIAN or bool(seat.item)),
        team_shot=_act(st.team_shot) if st.team_shot else None,
        team_strike=_act(st.team_strike) if st.team_strike else None,
        strike_used=game.role_strike_used,
        team=[Person.of(s) for s in st.team],
    )


def outsider_status(seats: Sequence[Seat]) -> str:
    if not seats:
        return render("player/not_signed_up")
    return render(
        "player/outsider_status",
        seats=[
            {
                "game": s.game.name,
                "state": s.game.status,
                "reserve": s.status == "reserve",
            }
            for s in seats
        ],
    )


def chat_number(peer_id: int, game_name: str | None, *, added: bool) -> str:
    """The bot's answer in a chat it was added to (or asked «номер беседы» in): the chat's
    number in the community, which the GM types into the panel, and the admin reminder."""
    return render(
        "spectators/chat_number", number=peer_id - 2_000_000_000, game=game_name or "", added=added
    )
