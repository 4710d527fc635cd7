"""Day services (RULES.md §3 with P1–P3): votes, early votes, the close and the end of a game."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from gameplay import services
from gameplay.models import (
    DeathCause,
    Game,
    GameStatus,
    PhaseKind,
    PhaseStatus,
    Source,
    Strike,
    Vote,
)
from gameplay.rules import Role, RoleCounts, RuleViolation, Winner
from gameplay.rules.errors import (
    DeadCannotAct,
    EarlyVoteFinal,
    GameNotRunning,
    NotInGame,
    SelfVote,
    UnknownTarget,
    VoteTargetNotAlive,
    WrongPhase,
)
from tests.gameplay.factories import (
    advance_to_day,
    board,
    civilians,
    current_phase,
    events,
    label,
    last_outbox_id,
    make_game,
    outbox,
    pms_to,
    quiet_night,
    seat,
    seat_no,
    seats,
    snapshot,
    tie_day,
    vote,
    vote_all,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 2, 21, 0, tzinfo=UTC)


_day_one_rows = module_rows(lambda: make_game(n=9, start=True).pk)


@pytest.fixture
def game(_day_one_rows):
    """Nine players, Day 1 open: 2 mafia, commissar, doctor, maniac, 4 civilians (built once
    per module)."""
    return Game.objects.get(pk=_day_one_rows)


def test_valid_vote_is_recorded_logged_and_echoed(game):
    voter, target = seat_no(game, 2), seat_no(game, 5)
    mark = last_outbox_id()

    outcome = vote(game, voter, target)

    v = outcome.vote
    assert (v.voter_id, v.target_id, v.current, v.void, v.early) == (
        voter.pk,
        target.pk,
        True,
        False,
        False,
    )
    assert v.phase == current_phase(game) and v.source == Source.PM
    assert not outcome.replaced and not outcome.early_ignored and outcome.day_result is None
    event = events(game)[-1]
    assert (event.kind, event.actor, event.data["voter"], event.data["target"]) == (
        "vote",
        "seat:2",
        2,
        5,
    )
    [echo] = pms_to(game, voter.vk_user_id, "vote_echo", after=mark)
    assert label(target, "accs") != label(target)  # «№5 Дарью»
    assert echo.text == (
        f"Ваш голос за {label(target, 'accs')} принят. До закрытия дня его можно изменить."
    )
    # the board shows the vote in the counts, not in a post of its own
    assert board(game, after=mark) == []


def test_no_vote_is_posted_on_its_own_whatever_its_source(game):
    mark = last_outbox_id()
    vote(game, 1, 2, source=Source.BOARD, vk_post_id=42)
    vote(game, 3, 2, source=Source.PM)
    assert board(game, after=mark) == []
    assert Vote.objects.get(vk_post_id=42).source == Source.BOARD


@pytest.mark.parametrize(
    ("voter", "target", "error"),
    [
        (2, 2, SelfVote),
        (2, 4, VoteTargetNotAlive),  # seat 4 is modkilled first
        (4, 2, DeadCannotAct),
        (99, 2, NotInGame),
        (2, 99, UnknownTarget),
        (2, 0, UnknownTarget),
    ],
    ids=["self", "dead-target", "dead-voter", "unknown-voter", "unknown-target", "seat-zero"],
)
def test_invalid_vote_is_refused_and_changes_nothing(game, voter, target, error):
    services.seat_modkill(game_id=game.pk, seat=4, by="gm:test", reason="тест")
    vote(game, 2, 3)  # a standing vote that a refused one must not replace
    before = snapshot(game)

    with pytest.raises(error) as refused:
        vote(game, voter, target)

    assert isinstance(refused.value, RuleViolation) and refused.value.reason
    assert snapshot(game) == before


def test_vote_at_night_is_refused_and_changes_nothing(game):
    tie_day(game)
    assert current_phase(game).kind == PhaseKind.NIGHT
    before = snapshot(game)

    with pytest.raises(WrongPhase):
        vote(game, 2, 3)

    assert snapshot(game) == before


def test_vote_in_a_finished_game_is_refused(game):
    services.game_end(game_id=game.pk, by="gm:test")
    before = snapshot(game)
    with pytest.raises(GameNotRunning):
        vote(game, 2, 3)
    assert snapshot(game) == before


def test_changing_a_vote_keeps_the_old_one_as_history(game):
    first = vote(game, 2, 3).vote
    second = vote(game, 2, 5)

    first.refresh_from_db()
    assert second.replaced and not first.current
    rows = Vote.objects.filter(phase=current_phase(game), voter__number=2).order_by("id")
    assert [(v.target.number, v.current) for v in rows] == [(3, False), (5, True)]


def test_early_vote_on_day_one_counts_as_an_ordinary_changeable_vote(game):
    mark = last_outbox_id()

    outcome = vote(game, 2, 3, early=True)

    assert outcome.early_ignored and not outcome.vote.early
    assert events(game)[-1].data["early_ignored"] is True
    [echo] = pms_to(game, seat_no(game, 2).vk_user_id, "vote_echo", after=mark)
    assert "как обычный" in echo.text and "с третьего дня" in echo.text
    changed = vote(game, 2, 5)
    assert changed.replaced and changed.vote.target.number == 5


def test_early_vote_from_day_three_is_final(game):
    advance_to_day(game, 3)
    voter, target, other = civilians(game)[0], seat(game, Role.MAFIA), seat(game, Role.DOCTOR)
    outcome = vote(game, voter, target, early=True)
    assert outcome.vote.early and not outcome.early_ignored
    before = snapshot(game)

    with pytest.raises(EarlyVoteFinal):
        vote(game, voter, other)
    with pytest.raises(EarlyVoteFinal):
        vote(game, voter, other, early=True)

    assert snapshot(game) == before


def test_early_majority_closes_day_three_at_once_and_opens_the_night(game):
    advance_to_day(game, 3)
    day = current_phase(game)
    living = seats(game, alive=True)
    assert len(living) == 9
    target = seat(game, Role.MAFIA)
    voters = [s for s in living if s.pk != target.pk]
    for v in voters[:4]:  # 4 of 9 is not more than half
        assert vote(game, v, target, early=True).day_result is None
    vote(game, voters[4], target)  # an ordinary vote does not count towards the close
    assert current_phase(game).pk == day.pk

    outcome = vote(game, voters[5], target, early=True)

    day.refresh_from_db()
    assert outcome.day_result is not None and outcome.day_result.executed == target.number
    assert day.status == PhaseStatus.DONE and day.closed_early
    night = current_phase(game)
    assert (night.kind, night.number, night.status) == (PhaseKind.NIGHT, 3, PhaseStatus.OPEN)
    assert "закрыт досрочно" in board(game, "day_result")[-1].text
    assert events(game, "day_closed")[-1].data["early"] is True


def test_with_the_all_setting_the_day_closes_early_only_when_everyone_voted_early():
    game = make_game(n=9, start=True, early_close="all")
    advance_to_day(game, 3)
    day = current_phase(game)
    living = seats(game, alive=True)
    target, spare = seat(game, Role.MAFIA), seat(game, Role.DOCTOR)
    others = [s for s in living if s.pk != target.pk]
    for v in others:
        assert vote(game, v, target, early=True).day_result is None
    day.refresh_from_db()
    assert day.status == PhaseStatus.OPEN  # 8 of 9 is a majority, but not all

    outcome = vote(game, target, spare, early=True)

    day.refresh_from_db()
    assert outcome.day_result is not None and day.closed_early and day.status == PhaseStatus.DONE


# --- the close ---------------------------------------------------------------------------------


def test_missing_voters_are_struck_with_two_penalty_votes_in_the_same_tally(game):
    target, lazy, lazier = seat_no(game, 5), seat_no(game, 2), seat_no(game, 6)
    vote_all(game, target, skip=[lazy, lazier])

    result = services.day_close(game_id=game.pk, by="gm:test")

    assert result.executed == target.number
    assert result.penalties == {2: 2, 6: 2}
    assert result.tally[2] == 2 and result.tally[6] == 2
    strikes = Strike.objects.filter(seat__game=game).order_by("seat__number")
    rows = [(s.seat.number, s.count, s.penalty_votes, s.penalty_day, s.modkill) for s in strikes]
    assert rows == [(2, 1, 2, 1, False), (6, 1, 2, 1, False)]
    assert [s.strikes for s in (seat_no(game, 2), seat_no(game, 6))] == [1, 1]
    post = board(game, "day_result")[-1].text
    assert f"Штрафные голоса: {label(lazy)} (+2)" in post
    assert "пропуск" not in post  # P2: the announcement does not say why


def test_a_second_missed_vote_is_a_modkill_before_the_tally(game):
    lazy = civilians(game)[0]
    executed_day1 = civilians(game)[1]
    vote_all(game, executed_day1, skip=[lazy])
    services.day_close(game_id=game.pk)
    quiet_night(game)
    assert lazy.refresh_from_db() or lazy.strikes == 1
    # Day 2: four votes for the lazy player (who does not vote), three for someone else.
    living = [s for s in seats(game, alive=True) if s.pk != lazy.pk]
    other = living[0]
    for v in living[1:5]:
        vote(game, v, lazy)
    for v in living[5:]:
        vote(game, v, other)
    vote(game, other, living[1])

    result = services.day_close(game_id=game.pk)

    lazy.refresh_from_db()
    assert result.modkilled == (lazy.number,)
    assert lazy.number not in result.tally  # the votes for them are dropped
    assert result.executed == other.number
    assert not lazy.alive and lazy.death_cause == DeathCause.MODKILL and lazy.strikes == 2
    last = Strike.objects.filter(seat=lazy).order_by("id").last()
    assert last.modkill and last.count == 2 and last.penalty_votes == 0
    post = board(game, "day_result")[-1].text
    assert (
        f"{label(lazy)} исключается из игры ведущим (модкилл), роль — "
        f"{Role(lazy.role).title.lower()}."
    ) in post
    assert pms_to(game, lazy.vk_user_id, "you_died")


def test_a_tie_executes_nobody(game):
    tie_day(game)

    day = game.phases.get(kind=PhaseKind.DAY, number=1)
    assert day.result["executed"] is None
    assert all(s.alive for s in seats(game))
    assert "никто не покидает город" in board(game, "day_result")[-1].text


def test_no_votes_at_all_strikes_everyone_and_executes_nobody(game):
    result = services.day_close(game_id=game.pk)
    assert result.executed is None and len(result.strikes) == 9
    assert set(result.tally.values()) == {2}


def test_execution_reveals_the_role_in_the_board_and_opens_the_night(game):
    target = seat(game, Role.DOCTOR)
    vote_all(game, target)
    mark = last_outbox_id()

    result = services.day_close(game_id=game.pk, by="gm:test", now=NOW)

    target.refresh_from_db()
    assert result.executed == target.number
    assert not target.alive and target.death_cause == DeathCause.EXECUTED
    [post] = board(game, "day_result", after=mark)
    assert f"Казнь: {label(target)}, роль — доктор." in post.text
    assert pms_to(game, target.vk_user_id, "you_died", after=mark)
    night = current_phase(game)
    assert (night.kind, night.number) == (PhaseKind.NIGHT, 1)
    assert night.opened_at == NOW and night.deadline == NOW + game.night_length
    assert [e.kind for e in events(game)[-2:]] == ["day_closed", "phase_opened"]
    # Night prompts go to the living who have something to do, and to nobody else.
    prompted = {p for o in outbox(game, "night_prompt", after=mark) for p in o.peer_ids}
    expected = {
        s.vk_user_id
        for s in seats(game, alive=True)
        if s.role != Role.CIVILIAN or (s.item and not s.item_used)
    }
    assert prompted == expected and target.vk_user_id not in prompted


def test_an_execution_that_decides_the_game_ends_it_and_reveals_everything():
    game = make_game(
        n=4, counts=RoleCounts(mafia=1, commissar=1, doctor=0, maniac=0, civilian=2), start=True
    )
    mafia = seat(game, Role.MAFIA)
    vote_all(game, mafia)

    result = services.day_close(game_id=game.pk, by="gm:test")

    game.refresh_from_db()
    assert result.winner is Winner.TOWN
    assert game.status == GameStatus.FINISHED and game.winner == Winner.TOWN
    assert game.finished_at is not None
    assert not game.phases.filter(status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]).exists()
    assert not game.phases.filter(kind=PhaseKind.NIGHT).exists()
    [final] = board(game, "game_over")
    assert "Победа: Мирный город" in final.text
    assert f"Зерно раздачи: {game.seed}" in final.text and game.commitment in final.text
    for s in seats(game):
        assert f"{label(s)} — {Role(s.role).title.lower()}" in final.text
    ends = [o for o in board(game) if o.kind == "game_over"]
    assert ends == [final] and board(game)[-1] == final
    told = {p for o in pms_to(game, seats(game)[0].vk_user_id, "game_over") for p in o.peer_ids}
    assert told == {s.vk_user_id for s in seats(game)}
    assert events(game)[-1].kind == "game_finished"
    assert events(game)[-1].data["seed"] == game.seed
    with pytest.raises(GameNotRunning):
        vote(game, 2, 3)


def test_a_close_that_waited_for_the_game_lock_is_stamped_when_it_got_it(game, monkeypatch):
    """The moment a close writes (``closed_at``, its events) is taken once the game is locked:
    a vote accepted while the close waited for the lock never looks later than the close."""
    from django.utils import timezone

    from gameplay.services import day

    real_lock = day.lock_game
    locked_at = []

    def slow_lock(*, game_id: int):
        time.sleep(0.01)  # another transaction holds the game for a moment
        locked = real_lock(game_id=game_id)
        locked_at.append(timezone.now())
        return locked

    monkeypatch.setattr(day, "lock_game", slow_lock)
    phase = current_phase(game)
    services.day_close(game_id=game.pk)
    phase.refresh_from_db()
    assert phase.closed_at is not None and phase.closed_at >= locked_at[0]
