"""Night services (RULES.md §4, §5, P1–P3, G2): actions, the close and the GM's review (what
the publication does: tests/gameplay/services/test_publication.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from gameplay import services
from gameplay.models import (
    DeathCause,
    Game,
    NightAction,
    PhaseKind,
    PhaseStatus,
    Source,
)
from gameplay.rules import Act, Item, Role, RuleViolation, Slot
from gameplay.rules.errors import (
    ActionNotAvailable,
    DeadCannotAct,
    HealRepeat,
    InvalidCommand,
    InvalidGuess,
    ItemNotHeld,
    ItemSpent,
    PhaseNotOpen,
    RoleStrikeUsed,
    SelfTargetForbidden,
    TargetNotAlive,
    WrongPhase,
)
from tests.gameplay.factories import (
    act,
    board,
    civilians,
    current_phase,
    duty_actions,
    events,
    holder,
    label,
    last_outbox_id,
    make_game,
    outbox,
    pms_to,
    quiet_night,
    seat,
    seats,
    snapshot,
    tie_day,
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
def game(_night_one_rows):
    """Nine players, everyone alive and unpunished, Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def close(game):
    return services.night_close(game_id=game.pk, by="gm:test")


def publish(game):
    return services.night_publish(game_id=game.pk, by="gm:test")


def standing(game, slot):
    return list(NightAction.objects.filter(phase=current_phase(game), slot=slot, current=True))


# --- validation --------------------------------------------------------------------------------


def _refusals(game):
    """(actor, act, target, guess, error) for each kind of invalid action in this game."""
    civ, other = civilians(game)[:2]
    mafia = seat(game, Role.MAFIA)
    commissar, doctor = seat(game, Role.COMMISSAR), seat(game, Role.DOCTOR)
    no_button = next(s for s in seats(game) if s.item != Item.RED_BUTTON)
    dead = seats(game, alive=False)[0]
    return {
        "civilian-check": (civ, Act.CHECK, other, None, ActionNotAvailable),
        "doctor-shot": (doctor, Act.MAFIA_SHOT, other, None, ActionNotAvailable),
        "mafia-check": (mafia, Act.CHECK, other, None, ActionNotAvailable),
        "item-not-held": (no_button, Act.RED_BUTTON, other, None, ItemNotHeld),
        "self-check": (commissar, Act.CHECK, commissar, None, SelfTargetForbidden),
        "dead-target": (commissar, Act.CHECK, dead, None, TargetNotAlive),
        "strike-bad-guess": (mafia, Act.ROLE_STRIKE, other, Role.CIVILIAN, InvalidGuess),
        "strike-no-guess": (mafia, Act.ROLE_STRIKE, other, None, InvalidGuess),
    }


REFUSALS = [
    "civilian-check",
    "doctor-shot",
    "mafia-check",
    "item-not-held",
    "self-check",
    "dead-target",
    "strike-bad-guess",
    "strike-no-guess",
]


@pytest.mark.parametrize("case", REFUSALS)
def test_invalid_action_is_refused_and_changes_nothing(game, case):
    services.seat_modkill(
        game_id=game.pk, seat=civilians(game)[-1].number, by="gm:test", reason="тест"
    )
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, civilians(game)[0])
    actor, what, target, guess, error = _refusals(game)[case]
    before = snapshot(game)

    with pytest.raises(error) as refused:
        act(game, actor, what, target, guess=guess)

    assert isinstance(refused.value, RuleViolation) and refused.value.reason
    assert snapshot(game) == before


def test_dead_player_cannot_act(game):
    victim = seat(game, Role.DOCTOR)
    services.seat_modkill(game_id=game.pk, seat=victim.number, by="gm:test", reason="тест")
    before = snapshot(game)
    with pytest.raises(DeadCannotAct):
        act(game, victim, Act.HEAL, civilians(game)[0])
    assert snapshot(game) == before


def test_night_action_by_day_is_refused():
    game = make_game(n=9, start=True)
    before = snapshot(game)
    with pytest.raises(WrongPhase):
        act(game, seat(game, Role.COMMISSAR), Act.CHECK, civilians(game)[0])
    assert snapshot(game) == before


def test_action_after_the_close_is_refused(game):
    close(game)
    before = snapshot(game)
    with pytest.raises(PhaseNotOpen):
        act(game, seat(game, Role.COMMISSAR), Act.CHECK, civilians(game)[0])
    assert snapshot(game) == before


def test_a_used_item_is_spent_for_the_next_nights(game):
    book = holder(game, Item.BOOK)
    act(game, book, Act.BOOK, book)
    quiet_night(game)
    book.refresh_from_db()
    assert book.alive and book.item_used
    tie_day(game)
    before = snapshot(game)

    with pytest.raises(ItemSpent):
        act(game, book, Act.BOOK, book)

    assert snapshot(game) == before


def test_the_doctor_cannot_heal_the_same_player_two_nights_running(game):
    doctor = seat(game, Role.DOCTOR)
    patient, other = civilians(game)[:2]
    duty_actions(game, avoid=[patient, other])
    act(game, doctor, Act.HEAL, patient)  # replaces the heal of the maniac's victim
    close(game)
    publish(game)
    doctor.refresh_from_db()
    assert doctor.last_heal_target == patient.number
    tie_day(game)
    before = snapshot(game)

    with pytest.raises(HealRepeat):
        act(game, doctor, Act.HEAL, patient)

    assert snapshot(game) == before
    act(game, doctor, Act.HEAL, other)
    act(game, doctor, Act.HEAL, doctor)  # self heal is allowed, and replaces the heal


def test_the_role_strike_is_spent_for_the_whole_mafia_for_the_rest_of_the_game(game):
    striker, partner = seat(game, Role.MAFIA), seat(game, Role.MAFIA, 1)
    doctor = seat(game, Role.DOCTOR)
    duty_actions(game)
    act(game, striker, Act.ROLE_STRIKE, doctor, guess=Role.DOCTOR)
    assert not game.role_strike_used
    # A second role strike in the same night, by the other member, replaces the first.
    act(game, partner, Act.ROLE_STRIKE, doctor, guess=Role.DOCTOR)
    assert len(standing(game, Slot.ROLE_STRIKE)) == 1
    close(game)
    game.refresh_from_db()
    assert not game.role_strike_used  # nothing is applied before publication
    publish(game)

    game.refresh_from_db()
    doctor.refresh_from_db()
    assert game.role_strike_used
    assert not doctor.alive and doctor.death_cause == DeathCause.NIGHT
    tie_day(game)
    before = snapshot(game)
    with pytest.raises(RoleStrikeUsed):
        act(game, striker, Act.ROLE_STRIKE, seat(game, Role.COMMISSAR), guess=Role.COMMISSAR)
    assert snapshot(game) == before


def test_a_wrong_role_strike_kills_the_mafia_member_who_sent_it(game):
    striker = seat(game, Role.MAFIA)
    civ = civilians(game)[0]
    act(game, striker, Act.ROLE_STRIKE, civ, guess=Role.DOCTOR)
    close(game)
    res = publish(game)
    striker.refresh_from_db()
    assert res.step1_deaths == (striker.number,)
    assert not striker.alive


ROLE_ACT = {
    Role.MAFIA: Act.MAFIA_SHOT,
    Role.COMMISSAR: Act.CHECK,
    Role.DOCTOR: Act.HEAL,
    Role.MANIAC: Act.MANIAC_SHOT,
}


def test_an_item_use_does_not_replace_the_holders_role_action(game):
    user = next(s for s in seats(game) if s.item and s.role != Role.CIVILIAN)
    role_act, item_act = ROLE_ACT[Role(user.role)], Act(user.item)
    a, b = civilians(game, exclude=[user.number])[:2]

    act(game, user, role_act, a)
    outcome = act(game, user, item_act, b)

    assert not outcome.replaced
    rows = NightAction.objects.filter(phase=current_phase(game), actor=user, current=True)
    assert sorted(r.act for r in rows) == sorted([role_act.value, item_act.value])


# --- replacement in a slot ---------------------------------------------------------------------


def test_the_commissars_shot_replaces_the_check_of_the_same_night(game):
    commissar = seat(game, Role.COMMISSAR)
    target = civilians(game)[0]
    first = act(game, commissar, Act.CHECK, target)
    second = act(game, commissar, Act.COMMISSAR_SHOT, target)

    first.action.refresh_from_db()
    assert not first.replaced and second.replaced and not first.action.current
    [row] = standing(game, Slot.ROLE)
    assert row.pk == second.action.pk and row.act == Act.COMMISSAR_SHOT
    assert NightAction.objects.filter(phase=current_phase(game), actor=commissar).count() == 2
    res = close(game)
    assert res.checks == () and target.number in res.step4_deaths


def test_a_mafia_shot_by_another_member_replaces_the_teams_shot_and_tells_the_living_mafia(game):
    first, second = seat(game, Role.MAFIA), seat(game, Role.MAFIA, 1)
    a, b = civilians(game)[:2]
    act(game, first, Act.MAFIA_SHOT, a)
    mark = last_outbox_id()

    outcome = act(game, second, Act.MAFIA_SHOT, b)

    assert outcome.replaced
    [shot] = standing(game, Slot.MAFIA_SHOT)
    assert (shot.actor_id, shot.target_id) == (second.pk, b.pk)
    [team_pm] = outbox(game, "mafia_shot", after=mark)
    assert sorted(team_pm.peer_ids) == sorted(s.vk_user_id for s in seats(game, Role.MAFIA))
    assert label(b) in team_pm.text and label(second) in team_pm.text
    [echo] = pms_to(game, second.vk_user_id, "action_echo", after=mark)
    assert label(b) in echo.text
    nobody_else = {p for o in outbox(game, after=mark) for p in o.peer_ids}
    assert nobody_else == {s.vk_user_id for s in seats(game, Role.MAFIA)}
    assert board(game, after=mark) == []
    res = close(game)
    assert res.step4_deaths == (b.number,)


def test_the_mafia_shot_update_goes_to_the_living_mafia_only():
    game = make_game(n=12, start=True)  # three mafia
    to_night(game)
    gone, shooter, third = seats(game, Role.MAFIA)
    services.seat_modkill(game_id=game.pk, seat=gone.number, by="gm:test", reason="тест")
    mark = last_outbox_id()
    act(game, shooter, Act.MAFIA_SHOT, civilians(game)[0])
    [team_pm] = outbox(game, "mafia_shot", after=mark)
    assert sorted(team_pm.peer_ids) == sorted([shooter.vk_user_id, third.vk_user_id])


def test_the_database_allows_one_current_row_per_slot(game):
    m1, m2 = seats(game, Role.MAFIA)
    commissar = seat(game, Role.COMMISSAR)
    clock = holder(game, Item.CLOCK)
    a, b = civilians(game)[:2]
    act(game, m1, Act.MAFIA_SHOT, a)
    act(game, m2, Act.MAFIA_SHOT, b)
    act(game, commissar, Act.CHECK, a)
    act(game, commissar, Act.CHECK, b)
    act(game, clock, Act.CLOCK, a)
    act(game, clock, Act.CLOCK, b)
    phase = current_phase(game)
    for slot in (Slot.MAFIA_SHOT, Slot.ROLE, Slot.ITEM):
        assert NightAction.objects.filter(phase=phase, slot=slot, current=True).count() == 1
    assert NightAction.objects.filter(phase=phase, current=False).count() == 3

    duplicates = [
        dict(actor=m1, act=Act.MAFIA_SHOT, slot=Slot.MAFIA_SHOT, target=a),
        dict(actor=commissar, act=Act.COMMISSAR_SHOT, slot=Slot.ROLE, target=a),
        dict(actor=clock, act=Act.CLOCK, slot=Slot.ITEM, target=a),
    ]
    for row in duplicates:
        with pytest.raises(IntegrityError), transaction.atomic():
            NightAction.objects.create(phase=phase, current=True, **row)


# --- close, review and publication -------------------------------------------------------------


def test_night_close_drafts_a_five_step_resolution_and_announces_nothing(game):
    shooter, target = seat(game, Role.MAFIA), civilians(game)[0]
    act(game, shooter, Act.MAFIA_SHOT, target)
    duty_actions(game, avoid=[target])
    mark = last_outbox_id()

    res = close(game)

    phase = current_phase(game)
    assert phase.status == PhaseStatus.REVIEW and phase.closed_at is not None
    assert phase.published_at is None
    draft = phase.result["draft"]
    assert [s["number"] for s in draft["steps"]] == [1, 2, 3, 4, 5]
    assert all(s["lines"] for s in draft["steps"])
    assert draft["deaths"] == [target.number] == list(res.deaths)
    assert outbox(game, after=mark) == []
    target.refresh_from_db()
    assert target.alive
    assert events(game)[-1].kind == "night_closed"
    with pytest.raises(PhaseNotOpen):
        close(game)


def test_no_mafia_shot_alerts_the_gm_without_a_strike(game):
    duty_actions(game)
    res = close(game)
    assert res.no_mafia_shot and res.strikes == ()
    assert events(game, "alert_no_mafia_shot")


def test_the_gm_edit_of_the_draft_needs_a_reason_is_logged_and_changes_the_deaths(game):
    gone = civilians(game)[-1]
    services.seat_modkill(game_id=game.pk, seat=gone.number, by="gm:test", reason="тест")
    target, spared = civilians(game)[:2]
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, target)
    duty_actions(game, avoid=[target])
    close(game)
    before = snapshot(game)
    for deaths, reason in [([spared.number], " "), ([], ""), ([gone.number], "ошибка")]:
        with pytest.raises(InvalidCommand):
            services.night_draft_edit(game_id=game.pk, by="gm:anna", deaths=deaths, reason=reason)
    assert snapshot(game) == before

    amended = services.night_draft_edit(
        game_id=game.pk, by="gm:anna", deaths=[spared.number], reason="ошибка бота"
    )

    assert amended.deaths == (spared.number,)
    assert current_phase(game).result["draft"]["deaths"] == [spared.number]
    [edit] = events(game, "night_edited")
    assert edit.override and edit.actor == "gm:anna"
    assert edit.data["before"] == [target.number] and edit.data["deaths"] == [spared.number]
    assert edit.data["number"] == edit.phase.number and edit.data["reason"] == "ошибка бота"
    assert edit.data["added"] == [{"seat": spared.number, "role": spared.role}]
    assert edit.data["removed"] == [{"seat": target.number, "role": target.role}]
    assert "summary" not in edit.data  # the log's line is its template's (panel/log/)
    publish(game)
    target.refresh_from_db()
    spared.refresh_from_db()
    assert target.alive and not spared.alive


def test_auto_publish_publishes_the_night_at_its_close():
    game = make_game(n=9, start=True, auto_publish=True)
    to_night(game)
    target = civilians(game)[0]
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, target)

    close(game)

    target.refresh_from_db()
    night = game.phases.get(kind=PhaseKind.NIGHT, number=1)
    assert night.status == PhaseStatus.DONE and "final" in night.result
    assert not target.alive
    assert board(game, "night_result")
    assert current_phase(game).kind == PhaseKind.DAY


# --- G2: the mafia's shot re-opened ------------------------------------------------------------


def test_reopening_the_mafia_shot_accepts_only_a_new_shot_and_reclosing_resolves_again(game):
    first, second = seats(game, Role.MAFIA)
    old_target, new_target = civilians(game)[:2]
    act(game, first, Act.MAFIA_SHOT, old_target)
    duty_actions(game, avoid=[old_target, new_target])
    assert close(game).step4_deaths == (old_target.number,)
    mark = last_outbox_id()

    phase = services.night_reopen_mafia(game_id=game.pk, by="gm:anna", reason="раскрылись")

    assert phase.status == PhaseStatus.OPEN and phase.reopened_for == Slot.MAFIA_SHOT
    assert phase.result is None
    assert standing(game, Slot.MAFIA_SHOT) == []
    [told] = outbox(game, "mafia_reopened", after=mark)
    assert sorted(told.peer_ids) == sorted([first.vk_user_id, second.vk_user_id])
    assert board(game, after=mark) == []
    [event] = events(game, "mafia_shot_reopened")
    assert event.override and event.data["reason"] == "раскрылись"
    assert event.data["number"] == phase.number and "summary" not in event.data
    before = snapshot(game)
    for actor, what, target, guess in [
        (seat(game, Role.COMMISSAR), Act.COMMISSAR_SHOT, old_target, None),
        (seat(game, Role.DOCTOR), Act.HEAL, old_target, None),
        (first, Act.ROLE_STRIKE, seat(game, Role.DOCTOR), Role.DOCTOR),
        (holder(game, Item.CLOCK), Act.CLOCK, new_target, None),
    ]:
        with pytest.raises(PhaseNotOpen):
            act(game, actor, what, target, guess=guess)
    assert snapshot(game) == before

    act(game, second, Act.MAFIA_SHOT, new_target)
    res = close(game)

    assert res.step4_deaths == (new_target.number,)
    assert current_phase(game).reopened_for == ""
    publish(game)
    old_target.refresh_from_db()
    new_target.refresh_from_db()
    assert old_target.alive and not new_target.alive


def test_the_mafia_shot_can_be_reopened_only_while_the_night_is_under_review(game):
    before = snapshot(game)
    with pytest.raises(PhaseNotOpen):
        services.night_reopen_mafia(game_id=game.pk, by="gm:test")
    assert snapshot(game) == before


def test_replay_source_sends_no_echo(game):
    mark = last_outbox_id()
    act(game, seat(game, Role.COMMISSAR), Act.CHECK, civilians(game)[0], source=Source.REPLAY)
    assert outbox(game, after=mark) == []


def test_a_commissar_the_gm_kills_in_the_draft_gets_no_check_result(game):
    commissar = seat(game, Role.COMMISSAR)
    duty_actions(game, skip=[Role.COMMISSAR])
    act(game, commissar, Act.CHECK, seat(game, Role.MAFIA))
    assert close(game).checks  # the draft has the check
    services.night_draft_edit(
        game_id=game.pk, by="gm:test", deaths=[commissar.number], reason="выстрел не учтён"
    )

    publish(game)

    commissar.refresh_from_db()
    assert not commissar.alive
    assert outbox(game, "check_result") == []
