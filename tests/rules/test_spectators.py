"""G6: who may be in the spectator chat — one decision for the invitation and the refusal."""

from __future__ import annotations

import pytest

from gameplay.rules import Role
from gameplay.rules.spectators import SpectatorBar, may_watch, spectator_bar


@pytest.mark.parametrize("role", list(Role))
def test_a_dead_player_outside_a_team_may_watch_never_the_mafia(role: Role) -> None:
    assert may_watch(alive=False, role=role) is (role is not Role.MAFIA)
    assert not may_watch(alive=True, role=role)
    assert may_watch(alive=True, role=role, game_over=True)  # every role is public then


def test_the_bar_says_why() -> None:
    assert spectator_bar(seated=False, alive=False, role=None, game_over=True) is (
        SpectatorBar.OUTSIDER
    )
    assert spectator_bar(seated=True, alive=True, role="doctor", game_over=False) is (
        SpectatorBar.ALIVE
    )
    assert spectator_bar(seated=True, alive=False, role="mafia", game_over=False) is (
        SpectatorBar.MAFIA
    )
    assert spectator_bar(seated=True, alive=False, role="maniac", game_over=False) is None
