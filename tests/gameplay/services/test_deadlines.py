"""The deadline tick and reminders: phases close through the services when
their deadline passes, reminders reach only those who have not acted, once per offset, and
nothing is done twice — also with two ticks at once on PostgreSQL."""

from __future__ import annotations

import threading
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
from django.db import connections

from gameplay import services
from gameplay.models import Actor, GameEvent, Outbox, Phase, PhaseKind, PhaseStatus
from gameplay.rules.errors import InvalidCommand, PhaseNotOpen
from gameplay.selectors.deadlines import pending_actors, phases_due
from gameplay.services import deadlines
from gameplay.services.deadlines import deadline_tick, phase_remind
from tests.gameplay.deadline_support import (
    COMMISSAR,
    DOCTOR,
    MAFIA,
    MANIAC,
    T0,
    day,
    events,
    night,
    reminded_vk_ids,
    reminders_sent,
    started_game,
    vk,
    vote_all,
)
from tests.gameplay.factories import deadline_of

DAY = timedelta(hours=24)
NIGHT = timedelta(hours=12)
SECOND = timedelta(seconds=1)


def minutes(n: int) -> timedelta:
    return timedelta(minutes=n)


# --- closing ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_due_day_is_tallied_and_the_night_opens() -> None:
    game = started_game(reminders=[])
    vote_all(game, except_seats=(8,))
    now = T0 + DAY + SECOND

    report = deadline_tick(now=now)

    day1 = day(game)
    assert day1.status == PhaseStatus.DONE and day1.closed_at == now
    assert [(c.phase_id, c.kind, c.status) for c in report.closed] == [
        (day1.pk, PhaseKind.DAY, PhaseStatus.DONE)
    ]
    assert day1.result is not None
    assert day1.result["executed"] == 6
    closed = events(game, "day_closed")
    assert len(closed) == 1 and closed[0].actor == "deadline" and closed[0].data["early"] is False
    assert Outbox.objects.filter(game=game, kind="day_result").count() == 1
    night1 = night(game)
    assert night1.status == PhaseStatus.OPEN and night1.deadline == now + NIGHT
    # A second tick finds nothing to do.
    assert deadline_tick(now=now + SECOND).closed == []
    assert len(events(game, "day_closed")) == 1


@pytest.mark.django_db
def test_phase_before_its_deadline_or_without_one_is_untouched() -> None:
    game = started_game(reminders=[])
    open_ended = started_game(day_length=timedelta(0), reminders=[])
    assert day(open_ended).deadline is None

    report = deadline_tick(now=T0 + DAY - SECOND)
    assert report.closed == [] and report.skipped == []
    assert day(game).status == PhaseStatus.OPEN

    deadline_tick(now=T0 + 100 * DAY)
    assert day(game).status == PhaseStatus.DONE
    assert day(open_ended).status == PhaseStatus.OPEN


@pytest.mark.django_db
def test_due_night_goes_to_the_gm_as_a_draft() -> None:
    game = started_game(reminders=[])
    vote_all(game)
    deadline_tick(now=T0 + DAY)
    services.night_action_submit(game_id=game.pk, actor=MAFIA[0], act="mafia_shot", target=7)

    report = deadline_tick(now=T0 + DAY + NIGHT)

    night1 = night(game)
    assert night1.status == PhaseStatus.REVIEW
    assert night1.result is not None
    assert night1.result["draft"]["deaths"] == [7]
    assert [c.status for c in report.closed] == [PhaseStatus.REVIEW]
    assert not Phase.objects.filter(game=game, kind=PhaseKind.DAY, number=2).exists()
    # The draft waits for the GM: later ticks leave it alone.
    deadline_tick(now=T0 + 10 * DAY)
    assert night(game).status == PhaseStatus.REVIEW
    assert len(events(game, "night_closed")) == 1


@pytest.mark.django_db
def test_due_night_is_published_at_once_when_the_game_auto_publishes() -> None:
    game = started_game(auto_publish=True, reminders=[])
    vote_all(game)
    deadline_tick(now=T0 + DAY)
    services.night_action_submit(game_id=game.pk, actor=MAFIA[1], act="mafia_shot", target=8)
    now = T0 + DAY + NIGHT + SECOND

    report = deadline_tick(now=now)

    assert [c.status for c in report.closed] == [PhaseStatus.DONE]
    assert night(game).published_at == now
    assert len(events(game, "night_published")) == 1
    day2 = day(game, 2)
    assert day2.status == PhaseStatus.OPEN and day2.deadline == now + DAY


@pytest.mark.django_db
def test_phase_closed_by_the_gm_meanwhile_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    game = started_game(reminders=[])
    now = T0 + DAY + SECOND
    stale = phases_due(now)  # what a tick read just before the GM's click landed
    services.day_close(game_id=game.pk, by=Actor.gm("anna"), now=now)
    monkeypatch.setattr(deadlines, "phases_due", lambda _now: stale)

    report = deadline_tick(now=now)

    assert report.closed == [] and report.skipped == [day(game).pk] and report.failures == []
    assert [e.actor for e in events(game, "day_closed")] == ["gm:anna"]
    assert night(game).status == PhaseStatus.OPEN


@pytest.mark.django_db
def test_night_reopened_for_the_mafia_waits_for_the_gm_unless_given_a_new_deadline() -> None:
    game = started_game(reminders=[])
    vote_all(game)
    deadline_tick(now=T0 + DAY)
    deadline_tick(now=T0 + DAY + NIGHT)
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("anna"), reason="раскрытие")

    deadline_tick(now=T0 + DAY + NIGHT + minutes(5))
    assert night(game).status == PhaseStatus.OPEN

    # A new deadline set after the close is kept, like any deadline.
    Phase.objects.filter(pk=night(game).pk).update(deadline=T0 + DAY + NIGHT + minutes(30))
    deadline_tick(now=T0 + DAY + NIGHT + minutes(30))
    assert night(game).status == PhaseStatus.REVIEW
    assert len(events(game, "night_closed")) == 2


@pytest.mark.django_db
def test_one_failing_game_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = started_game(reminders=[], name="Сломанная")
    fine = started_game(reminders=[], name="Целая")
    real_day_close = deadlines.day_close

    def day_close(**kwargs: Any) -> Any:
        if kwargs["game_id"] == broken.pk:
            raise RuntimeError("disk on fire")
        return real_day_close(**kwargs)

    monkeypatch.setattr(deadlines, "day_close", day_close)
    now = T0 + DAY

    report = deadline_tick(now=now)
    deadline_tick(now=now + minutes(1))  # the same failure again: noted once

    assert day(fine).status == PhaseStatus.DONE
    assert day(broken).status == PhaseStatus.OPEN
    assert [(f.game_id, f.stage) for f in report.failures] == [(broken.pk, "close")]
    noted = events(broken, "deadline_failed")
    assert len(noted) == 1 and noted[0].data["error"] == "RuntimeError: disk on fire"
    assert noted[0].phase_id == day(broken).pk

    monkeypatch.setattr(deadlines, "day_close", real_day_close)
    deadline_tick(now=now + minutes(2))
    assert day(broken).status == PhaseStatus.DONE


# --- reminders -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_day_reminders_go_to_non_voters_once_per_offset() -> None:
    game = started_game()  # the default reminders: 3 hours and 1 hour before the deadline
    assert game.reminders == [180, 60]
    deadline = T0 + DAY
    for voter in (1, 2, 3):
        services.vote_submit(game_id=game.pk, voter=voter, target=6)

    assert deadline_tick(now=deadline - minutes(181)).reminders == []
    report = deadline_tick(now=deadline - minutes(180))
    deadline_tick(now=deadline - minutes(170))  # the same offset is not sent again

    assert [(r.offset, r.seats) for r in report.reminders] == [(180, [4, 5, 6, 7, 8])]
    assert reminded_vk_ids(game) == [{vk(n) for n in (4, 5, 6, 7, 8)}]
    text = reminders_sent(game)[0].text
    assert "голосование дня 1 закроется через 3 ч" in text and "15.03 12:00 МСК" in text
    assert day(game).reminded == [180]

    services.vote_submit(game_id=game.pk, voter=4, target=6)
    deadline_tick(now=deadline - minutes(59))
    assert reminded_vk_ids(game)[1] == {vk(n) for n in (5, 6, 7, 8)}
    assert "через 59 мин" in reminders_sent(game)[1].text
    assert day(game).reminded == [180, 60]
    deadline_tick(now=deadline - SECOND)
    assert len(reminders_sent(game)) == 2
    assert [e.data["offset"] for e in events(game, "reminder_sent")] == [180, 60]


@pytest.mark.django_db
def test_night_reminders_go_to_roles_that_have_not_acted() -> None:
    game = started_game(reminders=[60])
    vote_all(game)
    deadline_tick(now=T0 + DAY)
    deadline = deadline_of(night(game))
    services.night_action_submit(game_id=game.pk, actor=DOCTOR, act="heal", target=DOCTOR)

    deadline_tick(now=deadline - minutes(60))

    # The commissar and the maniac have not acted; the mafia has no shot: every mafia member.
    assert reminded_vk_ids(game) == [{vk(MAFIA[0]), vk(MAFIA[1]), vk(COMMISSAR), vk(MANIAC)}]
    assert "ночь 1 закроется через 1 ч" in reminders_sent(game)[0].text


@pytest.mark.django_db
def test_a_team_shot_covers_the_whole_mafia_and_the_dead_are_not_reminded() -> None:
    game = started_game(reminders=[60])
    services.seat_modkill(
        game_id=game.pk, seat=COMMISSAR, by=Actor.gm("anna"), reason="оскорбления"
    )
    vote_all(game, except_seats=(COMMISSAR,))
    deadline_tick(now=T0 + DAY)
    services.night_action_submit(game_id=game.pk, actor=MAFIA[1], act="mafia_shot", target=7)
    services.night_action_submit(game_id=game.pk, actor=MANIAC, act="maniac_shot", target=8)

    assert [s.number for s in pending_actors(night(game))] == [DOCTOR]
    deadline_tick(now=deadline_of(night(game)) - minutes(30))
    assert reminded_vk_ids(game) == [{vk(DOCTOR)}]


@pytest.mark.django_db
def test_after_downtime_only_the_latest_due_reminder_is_sent() -> None:
    game = started_game()
    deadline = T0 + DAY

    report = deadline_tick(now=deadline - minutes(20))

    assert [r.offset for r in report.reminders] == [60]
    assert len(reminders_sent(game)) == 1
    assert day(game).reminded == [180, 60]
    deadline_tick(now=deadline - minutes(10))
    assert len(reminders_sent(game)) == 1


@pytest.mark.django_db
def test_no_reminder_for_a_time_before_the_phase_opened_nor_when_everyone_acted() -> None:
    game = started_game(day_length=timedelta(hours=2))  # 180 minutes is before the opening
    deadline = T0 + timedelta(hours=2)
    deadline_tick(now=T0 + minutes(1))
    assert reminders_sent(game) == []

    vote_all(game)
    deadline_tick(now=deadline - minutes(60))
    assert reminders_sent(game) == [] and day(game).reminded == [60]
    assert events(game, "reminder_sent") == []


@pytest.mark.django_db
def test_reminder_settings_that_are_not_minutes_are_ignored() -> None:
    game = started_game(reminders=["soon", -5, 0, True, 30, 30])
    deadline_tick(now=T0 + DAY - minutes(30))
    assert [e.data["offset"] for e in events(game, "reminder_sent")] == [30]


# --- the GM's "remind now" -------------------------------------------------------------------


@pytest.mark.django_db
def test_gm_remind_now_reaches_the_pending_players_and_is_logged() -> None:
    game = started_game(reminders=[])
    vote_all(game, except_seats=(2, 5))
    now = T0 + minutes(90)

    reminder = phase_remind(game_id=game.pk, by=Actor.gm("anna"), now=now)

    assert reminder.offset is None and reminder.seats == [2, 5]
    assert reminded_vk_ids(game) == [{vk(2), vk(5)}]
    logged = events(game, "reminder_sent")
    assert len(logged) == 1 and logged[0].actor == "gm:anna" and logged[0].data["seats"] == [2, 5]
    assert day(game).reminded == []  # scheduled reminders are not used up

    with pytest.raises(InvalidCommand, match="уже отправлено 30 секунд назад"):
        phase_remind(game_id=game.pk, by=Actor.gm("anna"), now=now + timedelta(seconds=30))
    phase_remind(game_id=game.pk, by=Actor.gm("anna"), now=now + minutes(1))
    assert len(reminders_sent(game)) == 2


@pytest.mark.django_db
def test_gm_remind_now_refusals_change_nothing() -> None:
    game = started_game(reminders=[])
    vote_all(game)
    with pytest.raises(InvalidCommand, match="Напоминать некому"):
        phase_remind(game_id=game.pk, by=Actor.gm("anna"), now=T0)

    deadline_tick(now=T0 + DAY)
    deadline_tick(now=T0 + DAY + NIGHT)  # the night waits for the GM's review
    with pytest.raises(PhaseNotOpen, match="нет открытой фазы"):
        phase_remind(game_id=game.pk, by=Actor.gm("anna"), now=T0 + DAY + NIGHT)
    assert reminders_sent(game) == [] and events(game, "reminder_sent") == []


# --- two ticks at once (PostgreSQL) ----------------------------------------------------------


def _race(*calls: Any) -> list[Any]:
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = calls[i]()
        except Exception as error:  # noqa: BLE001 - the test inspects what each thread got
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_do_nothing_twice() -> None:
    for _ in range(3):
        closing = [started_game(reminders=[], name=f"Закрытие {i}") for i in range(3)]
        reminding = started_game(day_length=timedelta(hours=48), name="Напоминание")
        now = T0 + DAY

        results = _race(partial(deadline_tick, now=now), partial(deadline_tick, now=now))

        assert not [r for r in results if isinstance(r, Exception)], results
        closed = [c.phase_id for r in results for c in r.closed]
        assert sorted(closed) == sorted(day(g).pk for g in closing)
        assert set(sum((r.skipped for r in results), [])) <= set(closed)
        for game in closing:
            assert len(events(game, "day_closed")) == 1
            assert Phase.objects.filter(game=game, kind=PhaseKind.NIGHT).count() == 1
        # Day 1 of the 48-hour game: 24 hours left, no reminder due; then both race the 3-hour one.
        results = _race(
            partial(deadline_tick, now=now + DAY - minutes(180)),
            partial(deadline_tick, now=now + DAY - minutes(179)),
        )
        assert not [r for r in results if isinstance(r, Exception)], results
        assert len(reminders_sent(reminding)) == 1
        assert len(events(reminding, "reminder_sent")) == 1
        assert GameEvent.objects.filter(kind="deadline_failed").count() == 0
