"""gameplay.services.actions: one command for a night action, by a seat number (the GM's tools,
the scenarios) or by a VK user (the bot, its buttons naming their phase); the mafia hears of
the team's role strike sent from VK."""

from __future__ import annotations

import pytest
from django.db import transaction

from gameplay import services
from gameplay.models import Actor, Game, NightAction, Phase, PhaseKind, Source
from gameplay.refusals import StaleButton
from gameplay.rules import Act, Role
from gameplay.rules.errors import DeadCannotAct, NotInGame
from gameplay.services.actions import night_action_submit
from gameplay.unit_of_work import txcache
from tests.gameplay.factories import (
    civilians,
    current_phase,
    label,
    last_outbox_id,
    make_game,
    number_of,
    outbox,
    pms_to,
    seat,
    snapshot,
    to_night,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _night_one() -> int:
    g = make_game(n=9, start=True)
    to_night(g)
    return g.pk


_night_one_rows = module_rows(_night_one)


@pytest.fixture
def game(_night_one_rows: int) -> Game:
    """Nine players (two mafia), Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def test_an_action_needs_an_actor() -> None:
    with pytest.raises(TypeError):
        night_action_submit(game_id=1, act=Act.CHECK, target=2)


def test_a_vk_user_acts_as_their_living_seat(game: Game) -> None:
    commissar, target = seat(game, Role.COMMISSAR), civilians(game)[0]
    mark = last_outbox_id()
    outcome = night_action_submit(
        game_id=game.pk,
        vk_user_id=commissar.vk_user_id,
        act=Act.CHECK,
        target=number_of(target),
        phase_id=current_phase(game).pk,
    )
    assert (outcome.action.actor_id, outcome.action.target_id) == (commissar.pk, target.pk)
    assert outcome.action.source == Source.PM and not outcome.replaced
    [echo] = pms_to(game, commissar.vk_user_id, "action_echo", after=mark)
    assert label(target) in echo.text


def test_a_vk_user_outside_the_game_or_dead_changes_nothing(game: Game) -> None:
    target = number_of(civilians(game)[0])
    services.seat_modkill(
        game_id=game.pk, seat=number_of(seat(game, Role.DOCTOR)), by=Actor.gm("gm"), reason="т"
    )
    doctor = seat(game, Role.DOCTOR, alive=False)
    before = snapshot(game)
    with pytest.raises(NotInGame):
        night_action_submit(game_id=game.pk, vk_user_id=424242, act=Act.HEAL, target=target)
    with pytest.raises(DeadCannotAct):
        night_action_submit(
            game_id=game.pk, vk_user_id=doctor.vk_user_id, act=Act.HEAL, target=target
        )
    assert snapshot(game) == before


def test_a_button_of_a_past_phase_is_refused_and_changes_nothing(game: Game) -> None:
    commissar, target = seat(game, Role.COMMISSAR), civilians(game)[0]
    day = Phase.objects.get(game=game, kind=PhaseKind.DAY, number=1)
    before = snapshot(game)
    with pytest.raises(StaleButton):
        night_action_submit(
            game_id=game.pk,
            vk_user_id=commissar.vk_user_id,
            act=Act.CHECK,
            target=number_of(target),
            phase_id=day.pk,
        )
    assert snapshot(game) == before


def test_a_night_reopened_for_the_mafia_refuses_anyone_elses_button(game: Game) -> None:
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"))
    night = current_phase(game)
    doctor, mafia, target = seat(game, Role.DOCTOR), seat(game, Role.MAFIA), civilians(game)[0]
    with pytest.raises(StaleButton):
        night_action_submit(
            game_id=game.pk,
            vk_user_id=doctor.vk_user_id,
            act=Act.HEAL,
            target=number_of(target),
            phase_id=night.pk,
        )
    shot = night_action_submit(
        game_id=game.pk,
        vk_user_id=mafia.vk_user_id,
        act=Act.MAFIA_SHOT,
        target=number_of(target),
        phase_id=night.pk,
    )
    assert shot.action.act == Act.MAFIA_SHOT and shot.action.current


def test_a_role_strike_from_vk_is_told_to_the_rest_of_the_living_mafia(game: Game) -> None:
    striker, partner = seat(game, Role.MAFIA), seat(game, Role.MAFIA, 1)
    doctor = seat(game, Role.DOCTOR)
    mark = last_outbox_id()
    night_action_submit(
        game_id=game.pk,
        vk_user_id=striker.vk_user_id,
        act=Act.ROLE_STRIKE,
        target=number_of(doctor),
        guess=Role.DOCTOR,
    )
    [update] = outbox(game, "mafia_strike", after=mark)
    assert update.peer_ids == [partner.vk_user_id]
    assert label(striker) in update.text and label(doctor, "accs") in update.text
    assert update.text.endswith("доктором.")


def test_a_role_strike_by_seat_number_tells_nobody_and_a_lone_mafia_hears_nothing(
    game: Game,
) -> None:
    striker, partner = seat(game, Role.MAFIA), seat(game, Role.MAFIA, 1)
    doctor = seat(game, Role.DOCTOR)
    mark = last_outbox_id()
    night_action_submit(
        game_id=game.pk,
        actor=striker.number,
        act=Act.ROLE_STRIKE,
        target=number_of(doctor),
        guess=Role.DOCTOR,
    )
    services.seat_modkill(game_id=game.pk, seat=number_of(partner), by=Actor.gm("gm"), reason="т")
    night_action_submit(
        game_id=game.pk,
        vk_user_id=striker.vk_user_id,
        act=Act.ROLE_STRIKE,
        target=number_of(doctor),
        guess=Role.DOCTOR,
    )
    assert outbox(game, "mafia_strike", after=mark) == []


def test_in_the_pipelines_transaction_the_action_is_written_at_its_end(game: Game) -> None:
    commissar, target = seat(game, Role.COMMISSAR), civilians(game)[0]
    with transaction.atomic(), txcache.kept():
        night_action_submit(
            game_id=game.pk,
            vk_user_id=commissar.vk_user_id,
            act=Act.CHECK,
            target=number_of(target),
        )
        assert txcache.get(game.pk) is not None  # kept for the transaction's next updates
    [action] = NightAction.objects.filter(phase=current_phase(game), actor=commissar)
    assert action.target_id == target.pk and action.current
