"""gameplay.services.publication: publishing a night under review: deaths, spent items and
dawn strikes saved, the board's post, the commissars' checks, the next day opened or the game
finished; the night's post in its words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import transaction

from gameplay import services
from gameplay.models import (
    Actor,
    DeathCause,
    Game,
    GameStatus,
    ItemUse,
    PhaseKind,
    PhaseStatus,
    Strike,
)
from gameplay.rules import Act, Item, NightResolution, Role, RoleCounts
from gameplay.rules.errors import WrongPhase
from gameplay.services.common import lock_game, players
from gameplay.services.publication import night_publish_locked, night_result_text
from gameplay.unit_of_work import LockedGame
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
    number_of,
    outbox,
    pms_to,
    seat,
    seats,
    to_night,
    vote,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def _night_one() -> int:
    g = make_game(n=9, start=True)
    to_night(g)
    return g.pk


_night_one_rows = module_rows(_night_one)


@pytest.fixture
def game(_night_one_rows: int) -> Game:
    """Nine players, everyone alive and unpunished, Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def close(game: Game) -> NightResolution:
    return services.night_close(game_id=game.pk, by=Actor.gm("test"))


def publish(game: Game) -> NightResolution:
    return services.night_publish(game_id=game.pk, by=Actor.gm("test"))


def test_publication_applies_deaths_without_roles_and_opens_the_next_day(game):
    target = seat(game, Role.DOCTOR)
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, target)
    close(game)
    mark = last_outbox_id()

    res = services.night_publish(game_id=game.pk, by=Actor.gm("test"), now=NOW)

    target.refresh_from_db()
    night = game.phases.get(kind=PhaseKind.NIGHT, number=1)
    assert night.status == PhaseStatus.DONE and night.published_at is not None
    assert night.result["final"]["deaths"] == [target.number] == list(res.deaths)
    assert not target.alive and target.death_cause == DeathCause.NIGHT
    assert target.died_in == night
    [post] = board(game, "night_result", after=mark)
    assert f"Жертва этой ночи — {label(target)}." in post.text
    assert "роль" not in post.text and "доктор" not in post.text.lower()
    assert pms_to(game, target.vk_user_id, "you_died", after=mark)
    day = current_phase(game)
    assert (day.kind, day.number, day.status) == (PhaseKind.DAY, 2, PhaseStatus.OPEN)
    assert day.deadline == NOW + game.day_length and night.published_at == NOW
    assert [e.kind for e in events(game)[-2:]] == ["night_published", "phase_opened"]
    with pytest.raises(WrongPhase):
        publish(game)


def test_reveal_on_night_death_setting_names_the_role():
    game = make_game(n=9, start=True, reveal_on_night_death=True)
    to_night(game)
    target = seat(game, Role.DOCTOR)
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, target)
    close(game)
    publish(game)
    assert (
        f"Жертва этой ночи — {label(target)}, роль — доктор."
        in board(game, "night_result")[-1].text
    )


def test_items_are_spent_at_publication_even_when_the_use_is_blocked(game):
    clock, button = holder(game, Item.CLOCK), holder(game, Item.RED_BUTTON)
    victim = civilians(game, exclude=[clock.number, button.number])[0]
    act(game, clock, Act.CLOCK, button)
    act(game, button, Act.RED_BUTTON, victim)
    close(game)
    assert not ItemUse.objects.filter(game=game).exists()  # not before publication

    res = publish(game)

    assert res.blocked == (button.number,)
    uses = {u.item: u for u in ItemUse.objects.filter(game=game)}
    assert set(uses) == {Item.CLOCK, Item.RED_BUTTON}
    assert (uses[Item.CLOCK].seat_id, uses[Item.CLOCK].target_id) == (clock.pk, button.pk)
    assert not uses[Item.CLOCK].blocked
    assert uses[Item.RED_BUTTON].blocked and uses[Item.RED_BUTTON].target_id == victim.pk
    for s in (clock, button, victim):
        s.refresh_from_db()
    assert clock.item_used and button.item_used
    assert victim.alive  # the blocked button did nothing
    assert not holder(game, Item.BOOK).item_used
    [post] = board(game, "night_result")
    # §5: the uses are not announced (a holder with a duty role may still get a penalty line).
    named = [
        line
        for line in post.text.splitlines()
        if (label(button) in line or label(clock) in line) and "штрафных" not in line
    ]
    assert named == []


def test_the_check_result_goes_to_the_commissar_only(game):
    commissar = seat(game, Role.COMMISSAR)
    suspect = seat(game, Role.MAFIA)
    act(game, commissar, Act.CHECK, suspect)
    close(game)
    mark = last_outbox_id()

    publish(game)

    [result] = outbox(game, "check_result", after=mark)
    assert result.peer_ids == [commissar.vk_user_id]
    assert label(suspect) in result.text and "мафия" in result.text
    assert "не мафия" not in result.text
    for o in board(game, after=mark):
        assert label(suspect) not in o.text


def test_a_missed_duty_action_is_a_strike_with_two_votes_in_the_next_days_tally(game):
    doctor = seat(game, Role.DOCTOR)
    duty_actions(game, skip=[Role.DOCTOR])
    res = close(game)
    assert [s.seat for s in res.strikes] == [doctor.number]
    assert Strike.objects.filter(seat=doctor).count() == 0  # not before publication
    mark = last_outbox_id()

    publish(game)

    doctor.refresh_from_db()
    assert doctor.alive and doctor.strikes == 1
    [strike] = Strike.objects.filter(seat=doctor)
    assert (strike.reason, strike.count, strike.penalty_votes, strike.penalty_day) == (
        "missed_action",
        1,
        2,
        2,
    )
    assert (
        f"+2 штрафных голоса в сегодняшнем голосовании: {label(doctor)}."
        in board(game, "night_result", after=mark)[0].text
    )
    # Day 2: one ordinary vote for the doctor; the two penalty votes count too.
    living = seats(game, alive=True)
    target = civilians(game)[0]
    for s in living:
        if s.pk == target.pk:
            vote(game, s, doctor)
        elif s.pk != doctor.pk:
            vote(game, s, target)
    vote(game, doctor, target)
    result = services.day_close(game_id=game.pk)
    assert result.penalties == {doctor.number: 2}
    assert result.tally[doctor.number] == 3


def test_a_second_strike_at_dawn_is_a_modkill(game):
    doctor = seat(game, Role.DOCTOR)
    services.strike_give(
        game_id=game.pk, seat=doctor.number, by=Actor.gm("test"), reason="оскорбление"
    )
    duty_actions(game, skip=[Role.DOCTOR])
    close(game)
    mark = last_outbox_id()

    res = publish(game)

    doctor.refresh_from_db()
    assert res.modkilled == (doctor.number,)
    assert not doctor.alive and doctor.death_cause == DeathCause.MODKILL
    last = Strike.objects.filter(seat=doctor).order_by("id").last()
    assert last.modkill and last.count == 2 and last.penalty_day is None
    post = board(game, "night_result", after=mark)[0].text
    assert f"{label(doctor)} исключается из игры ведущим (модкилл), роль — доктор." in post
    assert pms_to(game, doctor.vk_user_id, "you_died", after=mark)


def test_a_night_that_decides_the_game_ends_it():
    game = make_game(
        n=4, counts=RoleCounts(mafia=1, commissar=1, doctor=0, maniac=0, civilian=2), start=True
    )
    to_night(game)
    mafia, commissar = seat(game, Role.MAFIA), seat(game, Role.COMMISSAR)
    act(game, commissar, Act.COMMISSAR_SHOT, mafia)
    close(game)
    publish(game)
    game.refresh_from_db()
    assert game.status == GameStatus.FINISHED and game.winner == "town"
    assert f"Зерно раздачи: {game.seed}" in board(game, "game_over")[0].text


# --- called directly, as night_publish and night_close call it --------------------------------


def publish_now(game: Game) -> NightResolution:
    """``night_publish_locked`` on the night under review, the game locked, as the services
    call it."""
    with transaction.atomic():
        locked = lock_game(game_id=game.pk)
        uow = LockedGame(locked, current_phase(locked), players(locked))
        return night_publish_locked(uow=uow, now=NOW, by=Actor.gm("x"))


def test_publishing_saves_the_doctors_heal_and_the_spent_role_strike(game: Game) -> None:
    doctor, striker = seat(game, Role.DOCTOR), seat(game, Role.MAFIA)
    healed = civilians(game)[0]
    act(game, doctor, Act.HEAL, healed)
    act(game, striker, Act.ROLE_STRIKE, doctor, guess=Role.DOCTOR)
    close(game)
    game.refresh_from_db()
    assert not game.role_strike_used and seat(game, Role.DOCTOR).last_heal_target is None
    res = publish_now(game)
    game.refresh_from_db()
    doctor.refresh_from_db()
    assert game.role_strike_used and res.role_strike_spent
    assert doctor.last_heal_target == healed.number and not doctor.alive
    night = game.phases.get(kind=PhaseKind.NIGHT, number=1)
    assert night.result["final"] == res.as_dict() and night.published_at == NOW
    [event] = events(game, "night_published")
    assert event.actor == "gm:x" and event.phase_id == night.pk


def test_dawn_is_recomputed_from_the_seats_as_they_are_now(game: Game) -> None:
    victim = civilians(game)[0]
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, victim)
    draft = close(game)
    assert draft.deaths == (victim.number,)
    services.seat_modkill(
        game_id=game.pk, seat=number_of(victim), by=Actor.gm("test"), reason="тест"
    )
    mark = last_outbox_id()
    publish_now(game)
    victim.refresh_from_db()
    assert victim.death_cause == DeathCause.MODKILL  # not killed a second time at dawn
    [post] = board(game, "night_result", after=mark)
    assert "Этой ночью никто не погиб." in post.text
    assert pms_to(game, victim.vk_user_id, "you_died", after=mark) == []


# --- the night's post --------------------------------------------------------------------------


def test_the_post_names_the_dead_with_roles_only_when_the_game_reveals_them(game: Game) -> None:
    a, b = civilians(game)[:2]
    doctor = seat(game, Role.DOCTOR)
    hidden = night_result_text(game=game, number=2, died=[a, doctor], modkilled=[], penalised=[])
    assert hidden.startswith("Утро после ночи 2.")
    assert f"Этой ночью погибли: {label(a)} и {label(doctor)}." in hidden
    assert "доктор" not in hidden.lower()
    game.reveal_on_night_death = True
    shown = night_result_text(game=game, number=2, died=[doctor], modkilled=[], penalised=[b])
    assert f"{label(doctor)}, роль — доктор." in shown
    assert f"+2 штрафных голоса в сегодняшнем голосовании: {label(b)}." in shown
    assert "никто не погиб" in night_result_text(
        game=game, number=2, died=[], modkilled=[], penalised=[]
    )


def test_the_gms_story_takes_the_place_of_the_themes_paragraph(game: Game) -> None:
    theme = night_result_text(game=game, number=1, died=[], modkilled=[], penalised=[])
    story = night_result_text(
        game=game, number=1, died=[], modkilled=[], penalised=[], story="Город спал тревожно."
    )
    assert story.splitlines()[:2] == ["Утро после ночи 1.", "Город спал тревожно."]
    assert "Город спал тревожно." not in theme
    assert theme.splitlines()[2:] == story.splitlines()[2:]  # the facts stay the same
