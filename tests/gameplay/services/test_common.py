"""gameplay.services.common: every service call appends to the game's event log, ``seq`` runs
1..k per game; an Outbox row goes out as its game's community or the one being served."""

from __future__ import annotations

import pytest
from django.utils import timezone

from gameplay import services
from gameplay.context import current_group, serving
from gameplay.models import (
    Actor,
    EventKind,
    Game,
    GameEvent,
    Outbox,
    Phase,
    PhaseKind,
    PhaseStatus,
    Strike,
)
from gameplay.rules import Act, Role, StrikeGiven, StrikeReason
from gameplay.services.common import log_event, send_message, strike_record
from gameplay.services.communities import community_record
from tests.gameplay.factories import (
    act,
    civilians,
    default_counts,
    duty_actions,
    event_count,
    make_game,
    player_name,
    seat,
    seats,
    vk_id,
    vote,
    vote_all,
)

pytestmark = pytest.mark.django_db


def test_every_service_call_appends_to_the_log_and_seq_has_no_gaps():
    game = make_game(n=0, counts=default_counts(9))
    other = make_game(n=9, start=True)  # a second game interleaves its own events
    counts = [event_count(game)]

    def step(call):
        call()
        counts.append(event_count(game))
        assert counts[-1] > counts[-2], f"{call} appended no event"
        vote(other, 1, 2)  # an event of another game in between

    # Setup: 9 players, one of them withdraws and a tenth signs up; a reserve.
    for i in range(1, 10):
        step(
            lambda i=i: services.signup_create(
                game_id=game.pk, vk_user_id=vk_id(i), name=player_name(i)
            )
        )
    step(lambda: services.signup_create(game_id=game.pk, vk_user_id=9001, name="Яна", reserve=True))
    step(lambda: services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(9)))
    step(lambda: services.signup_create(game_id=game.pk, vk_user_id=vk_id(10), name="Юра"))
    step(lambda: services.game_deal(game_id=game.pk))
    step(lambda: services.deal_round_new(game_id=game.pk, by="gm:test"))
    step(lambda: services.game_start(game_id=game.pk))

    # Day 1.
    target = civilians(game)[0]
    step(lambda: vote(game, seat(game, Role.MAFIA), target))
    step(
        lambda: services.seat_replace(
            game_id=game.pk,
            seat=civilians(game)[1].number,
            vk_user_id=9001,
            name="Яна",
            by="gm:test",
        )
    )
    step(lambda: services.strike_give(game_id=game.pk, seat=target.number, by="gm:test"))
    step(
        lambda: services.strike_forgive(
            game_id=game.pk, strike_id=Strike.objects.get(seat=target).pk, by="gm:test"
        )
    )
    vote_all(game, target)
    step(lambda: services.day_close(game_id=game.pk))

    # Night 1.
    victim = civilians(game)[0]
    step(lambda: act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, victim))
    duty_actions(game, avoid=[victim])
    step(lambda: services.night_close(game_id=game.pk))
    step(
        lambda: services.night_draft_edit(
            game_id=game.pk, by="gm:test", deaths=[], reason="проверка"
        )
    )
    step(lambda: services.night_reopen_mafia(game_id=game.pk, by="gm:test"))
    step(lambda: act(game, seat(game, Role.MAFIA, 1), Act.MAFIA_SHOT, victim))
    step(lambda: services.night_close(game_id=game.pk))
    step(lambda: services.night_publish(game_id=game.pk))

    # Day 2 and the end.
    step(
        lambda: services.seat_modkill(
            game_id=game.pk, seat=seats(game, alive=True)[0].number, by="gm:test", reason="тест"
        )
    )
    step(lambda: services.game_end(game_id=game.pk, by="gm:test"))

    for g in (game, other):
        seqs = list(GameEvent.objects.filter(game=g).order_by("seq").values_list("seq", flat=True))
        assert seqs == list(range(1, len(seqs) + 1))
    assert GameEvent.objects.filter(game=game).first().kind == "game_created"
    assert GameEvent.objects.filter(game=game).last().kind == "game_finished"
    logged = GameEvent.objects.filter(game=game)
    assert set(logged.values_list("kind", flat=True)) <= set(EventKind.values)
    # The actors as stored: the exact strings exports, filters and the log's «Кто» read.
    assert logged.get(kind="withdraw").actor == f"vk:{vk_id(9)}"
    assert logged.get(kind="game_started").actor == "system"
    assert {e.actor for e in logged.filter(kind="vote")} <= {f"seat:{n}" for n in range(1, 11)}
    assert logged.get(kind="modkill").actor == "gm:test"


def test_an_actor_is_the_string_the_log_stores(django_user_model) -> None:
    anna = django_user_model(username="anna")
    assert (Actor.gm(anna), Actor.gm("anna")) == ("gm:anna", "gm:anna")
    assert (Actor.seat(7), Actor.player(1001)) == ("seat:7", "vk:1001")
    assert (Actor.BOT, Actor.DEADLINE, Actor.REPLAY) == ("system", "deadline", "replay")
    assert (Actor.gm(anna).kind, Actor.gm(anna).ref) == ("gm", "anna")
    assert (Actor.BOT.kind, Actor.BOT.ref) == ("system", "")


def test_the_log_takes_only_an_event_kind() -> None:
    game = make_game(n=0)
    with pytest.raises(ValueError):
        log_event(game, "no_such_kind")  # type: ignore[arg-type]
    event = log_event(game, EventKind.STORY_SET, by=Actor.gm("anna"), story="x")
    event.refresh_from_db()
    assert (event.kind, event.actor) == ("story_set", "gm:anna")


def test_an_outbox_row_goes_out_as_its_game_or_the_community_served() -> None:
    community_record(vk_id=40, name="Сорок", group_token="t40", connected=True)
    game = Game.objects.create(name="g", vk_group_id=40)
    [row] = send_message(game=game, peer_ids=[5], text="x", kind="t")
    assert row.group_id == 40
    with serving(41):
        assert current_group() == 41
        [row] = send_message(game=None, peer_ids=[5], text="x", kind="t")
        assert row.group_id == 41
        [row] = send_message(game=game, peer_ids=[5], text="x", kind="t")
        assert row.group_id == 40
    assert current_group() is None
    [row] = send_message(game=None, peer_ids=[5], text="x", kind="t")
    assert row.group_id is None and Outbox.objects.count() == 4


@pytest.mark.parametrize(
    ("kind", "count", "penalty_day"),
    [(PhaseKind.DAY, 1, 3), (PhaseKind.NIGHT, 1, 4), (PhaseKind.NIGHT, 2, None)],
)
def test_a_strike_is_recorded_with_the_day_its_penalty_counts_in(kind, count, penalty_day):
    """A first strike given by day counts in that day's tally, at night in the next day's; a
    second one is a modkill and carries no penalty day."""
    game = make_game(n=9, start=True)
    target = seat(game, Role.MAFIA)
    phase = Phase.objects.create(
        game=game, kind=kind, number=3, status=PhaseStatus.DONE, opened_at=timezone.now()
    )
    given = StrikeGiven(
        seat=target.number,
        count=count,
        reason=StrikeReason.MANUAL,
        penalty_votes=0 if count == 2 else 2,
        modkill=count == 2,
    )
    strike = strike_record(seat=target, phase=phase, given=given, note="флуд")
    assert target.strikes == count
    target.refresh_from_db()
    assert target.strikes == 0  # set on the seat, saved by the caller
    assert Strike.objects.get() == strike
    assert (strike.penalty_day, strike.modkill, strike.count) == (penalty_day, count == 2, count)
    assert (strike.reason, strike.note, strike.phase) == ("manual", "флуд", phase)
