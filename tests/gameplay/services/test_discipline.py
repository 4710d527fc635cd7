"""GM discipline (RULES.md §6, V7, G1): modkills, replacements, manual strikes, forgiveness and
ending the game."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import (
    DeathCause,
    Game,
    GameStatus,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.refusals import ModkillReasonMissing
from gameplay.rules import Act, Item, Role, RoleCounts, Winner
from gameplay.rules.errors import InvalidCommand, RuleViolation
from tests.gameplay.factories import (
    act,
    advance_to_day,
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
    seat,
    seat_no,
    seats,
    snapshot,
    to_night,
    vk_id,
    vote,
    vote_all,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

SMALL = RoleCounts(mafia=1, commissar=1, doctor=0, maniac=0, civilian=2)


_day_one_rows = module_rows(lambda: make_game(n=9, start=True).pk)


@pytest.fixture
def game(_day_one_rows):
    """Nine players, Day 1 open (built once per module)."""
    return Game.objects.get(pk=_day_one_rows)


def modkill(game, s, reason="оскорбления"):
    return services.seat_modkill(game_id=game.pk, seat=s.number, by="gm:anna", reason=reason)


# --- modkill -----------------------------------------------------------------------------------


def test_modkill_during_a_day_voids_votes_by_and_for_the_player_and_tells_the_voters(game):
    culprit = seat(game, Role.MAFIA)
    a, b, c = civilians(game)[:3]
    vote(game, a, culprit)
    vote(game, b, culprit)
    vote(game, culprit, c)
    vote(game, c, a)
    mark = last_outbox_id()

    modkill(game, culprit, reason="оскорбления")

    culprit.refresh_from_db()
    assert not culprit.alive and culprit.death_cause == DeathCause.MODKILL
    assert culprit.died_in == current_phase(game)
    day = current_phase(game)
    current = Vote.objects.filter(phase=day, current=True)
    assert sorted((v.voter.number, v.void) for v in current) == sorted(
        [(a.number, True), (b.number, True), (culprit.number, True), (c.number, False)]
    )
    [voided] = outbox(game, "vote_voided", after=mark)
    assert sorted(voided.peer_ids) == sorted([a.vk_user_id, b.vk_user_id])
    assert voided.text == (
        f"{label(culprit)} выбывает из игры, и ваш голос отменён. Вы можете проголосовать заново."
    )
    [public] = board(game, "modkill", after=mark)
    assert public.text == f"{label(culprit)} исключается из игры ведущим (модкилл), роль — мафия."
    [private] = pms_to(game, culprit.vk_user_id, "modkill", after=mark)
    assert "оскорбления" in private.text
    [event] = events(game, "modkill")
    assert event.override and event.actor == "gm:anna" and event.data["seat"] == culprit.number


def test_voters_of_a_modkilled_player_are_not_struck_if_they_do_not_vote_again(game):
    culprit = seat(game, Role.MAFIA)
    a, b = civilians(game)[:2]
    target = seat(game, Role.DOCTOR)
    vote(game, a, culprit)
    vote(game, b, culprit)
    modkill(game, culprit)
    vote(game, b, target)  # b votes again; a does not
    for s in seats(game, alive=True):
        if s.pk not in (a.pk, b.pk, target.pk):
            vote(game, s, target)
    vote(game, target, b)

    result = services.day_close(game_id=game.pk)

    assert result.strikes == ()
    assert not Strike.objects.filter(seat__game=game).exists()
    assert result.executed == target.number
    assert culprit.number not in result.tally


def test_an_early_vote_for_a_modkilled_player_is_unlocked(game):
    advance_to_day(game, 3)
    culprit = seat(game, Role.MANIAC)
    voter, other = civilians(game)[:2]
    vote(game, voter, culprit, early=True)
    modkill(game, culprit)

    outcome = vote(game, voter, other, early=True)

    assert outcome.vote.early and outcome.vote.current and not outcome.vote.void


def test_a_modkill_that_leaves_an_early_majority_closes_the_day():
    game = make_game(n=10, start=True)
    advance_to_day(game, 3)
    day = current_phase(game)
    target, culprit = seat(game, Role.MANIAC), seat(game, Role.DOCTOR)
    voters = [s for s in seats(game, alive=True) if s.pk not in (target.pk, culprit.pk)]
    for v in voters[:5]:  # 5 of 10 early votes: not more than half
        vote(game, v, target, early=True)
    assert current_phase(game).pk == day.pk

    modkill(game, culprit)  # 5 of 9

    day.refresh_from_db()
    assert day.status == PhaseStatus.DONE and day.closed_early
    assert day.result["executed"] == target.number
    assert current_phase(game).kind == PhaseKind.NIGHT


def test_modkill_during_the_night_makes_actions_aimed_at_the_player_do_nothing():
    game = make_game(n=9, start=True)
    to_night(game)
    culprit = civilians(game)[0]
    button = holder(game, Item.RED_BUTTON)
    commissar = seat(game, Role.COMMISSAR)
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, culprit)
    act(game, button, Act.RED_BUTTON, culprit)
    duty_actions(game, skip=[Role.COMMISSAR], avoid=[culprit])
    act(game, commissar, Act.CHECK, culprit)

    modkill(game, culprit)
    res = services.night_close(game_id=game.pk)

    assert res.deaths == ()
    assert res.checks == ()
    assert res.missed == () and res.strikes == ()  # aimed at a removed player: still sent
    assert res.spent_items == (Item.RED_BUTTON,)
    services.night_publish(game_id=game.pk)
    culprit.refresh_from_db()
    assert culprit.death_cause == DeathCause.MODKILL
    assert not outbox(game, "check_result")
    assert "никто не погиб" in board(game, "night_result")[-1].text


def test_modkill_that_decides_the_game_finishes_it():
    game = make_game(n=4, counts=SMALL, start=True)
    mafia = seat(game, Role.MAFIA)

    modkill(game, mafia, reason="мат")

    game.refresh_from_db()
    assert game.status == GameStatus.FINISHED and game.winner == Winner.TOWN
    assert not game.phases.filter(status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]).exists()
    [final] = board(game, "game_over")
    assert game.seed in final.text and "Модкилл" in final.text


def test_modkill_of_a_dead_player_is_refused(game):
    victim = civilians(game)[0]
    modkill(game, victim)
    before = snapshot(game)
    with pytest.raises(InvalidCommand):
        modkill(game, victim)
    assert snapshot(game) == before


def test_modkill_without_a_reason_is_refused_and_changes_nothing(game):
    victim = civilians(game)[0]
    before = snapshot(game)
    for reason in ("", "   "):
        with pytest.raises(ModkillReasonMissing, match="Укажите причину модкилла"):
            modkill(game, victim, reason=reason)
    assert snapshot(game) == before


def test_a_scenarios_modkill_without_a_reason_is_replayed_with_a_fixed_one():
    from gameplay.replay import MODKILL_REASON, parse_scenario, play

    scenario = parse_scenario(
        '{"players": [{"seat": 1, "role": "mafia"}, {"seat": 2, "role": "civilian"},'
        ' {"seat": 3, "role": "civilian"}, {"seat": 4, "role": "civilian"}],'
        ' "phases": [{"phase": "gm", "action": "modkill", "seat": 2},'
        ' {"phase": "gm", "action": "modkill", "seat": 3, "reason": "флуд"}]}'
    )
    out = play(scenario, keep=True)
    assert [p["seat"] for p in out["phases"]] == [2, 3] and out["alive"] == [1, 4]
    [game] = Game.objects.filter(name="Сценарий")
    assert [e.data["reason"] for e in events(game, "modkill")] == [MODKILL_REASON, "флуд"]
    assert MODKILL_REASON == "по сценарию"


def test_the_end_post_words_the_gms_decisions_with_the_players_named():
    game = make_game(n=9, start=True)
    a, b, c = civilians(game)[:3]
    services.strike_give(game_id=game.pk, seat=a.number, by="gm:anna", reason="флуд")
    modkill(game, b, reason="оскорбления в обсуждении")
    services.game_end(game_id=game.pk, by="gm:anna", reason="время вышло")
    [final] = board(game, "game_over")
    decisions = final.text.split("Решения ведущего:\n")[1].split("\n\n")[0].splitlines()
    assert decisions == [
        f"Первый штраф: {label(a)}.",
        f"Модкилл: {label(b)}.",
        "Игра завершена ведущим без победителя.",
    ]
    assert "Состав: мафия — 2, комиссар — 1, доктор — 1, маньяк — 1, мирный житель — 4" in (
        final.text
    )


def test_no_reason_the_gm_gives_reaches_the_board():
    """The strike and modkill forms promise the reason reaches the player privately and never
    the topic; no other decision's reason is posted either. The GM's export keeps them."""
    from gameplay.export import export_game

    game = make_game(n=9, start=True)
    a, b = civilians(game)[:2]
    reasons = ["Флуд в обсуждении", "Слив роли в личке", "Штраф по ошибке", "Время вышло"]
    services.strike_give(game_id=game.pk, seat=a.number, by="gm:anna", reason=reasons[0])
    modkill(game, b, reason=reasons[1])
    [strike] = Strike.objects.filter(seat=a)
    services.strike_forgive(game_id=game.pk, strike_id=strike.pk, by="gm:anna", reason=reasons[2])
    services.game_end(game_id=game.pk, by="gm:anna", reason=reasons[3])

    posts = [o.text for o in board(game)]
    [final] = board(game, "game_over")
    assert f"Модкилл: {label(b)}." in final.text
    assert [r for r in reasons if any(r in post for post in posts)] == []
    assert "Причина" not in final.text
    assert any(reasons[1] in o.text for o in pms_to(game, b.vk_user_id))  # the player is told
    assert reasons[1] in export_game(Game.objects.get(pk=game.pk)).to_json()


def test_the_end_post_names_the_struck_player_not_who_holds_the_seat_later():
    """Strikes are the person's (P6): a seat that changed hands after a strike still names, in
    the end post and in the export's warning, the player who was struck."""
    from gameplay.export import export_game

    game = make_game(n=9, start=True)
    a = civilians(game)[0]
    struck = label(a)
    services.strike_give(game_id=game.pk, seat=a.number, by="gm:anna", reason="флуд")
    services.seat_replace(
        game_id=game.pk, seat=a.number, vk_user_id=9100, name="Борис Новиков", sex=2, by="gm:a"
    )
    services.game_end(game_id=game.pk, by="gm:anna", reason="время вышло")
    [final] = board(game, "game_over")
    assert f"Первый штраф: {struck}." in final.text
    assert f"Первый штраф: №{a.number} Борис Новиков" not in final.text
    warnings = " ".join(export_game(Game.objects.get(pk=game.pk)).warnings)
    assert "Борис" not in warnings and a.name.split()[0][:3] in warnings


def test_a_modkill_without_a_reason_on_a_dead_seat_is_refused_for_the_seat(game):
    victim = civilians(game)[0]
    modkill(game, victim)
    with pytest.raises(InvalidCommand) as refused:
        modkill(game, victim, reason="")
    assert not isinstance(refused.value, ModkillReasonMissing)


# --- replacement -------------------------------------------------------------------------------


def test_a_replacement_takes_the_newcomers_sex_not_the_old_players(game):
    """The texts' grammar follows the seat's holder: a reserve brings the sex VK told at their
    sign-up, a newcomer the sex given, or none (a neutral wording)."""
    a, b, c = civilians(game)[:3]
    Seat.objects.filter(pk__in=[a.pk, b.pk, c.pk]).update(sex=2)
    services.signup_create(game_id=game.pk, vk_user_id=9001, name="Анна", sex=1, reserve=True)
    services.seat_replace(game_id=game.pk, seat=a.number, vk_user_id=9001, name="Анна", by="gm:a")
    services.seat_replace(
        game_id=game.pk, seat=b.number, vk_user_id=9002, name="Ольга", sex=1, by="gm:a"
    )
    services.seat_replace(game_id=game.pk, seat=c.number, vk_user_id=9003, name="Саша", by="gm:a")
    assert [seat_no(game, s.number).sex for s in (a, b, c)] == [1, 1, 0]


def test_replacement_keeps_the_seat_and_resets_the_strikes_of_the_new_person(game):
    old = holder(game, Item.BOOK)
    services.strike_give(game_id=game.pk, seat=old.number, by="gm:test")
    old.refresh_from_db()
    assert old.strikes == 1
    old_vk, old_name = old.vk_user_id, old.name
    mark = last_outbox_id()

    new = services.seat_replace(
        game_id=game.pk, seat=old.number, vk_user_id=4242, name="Ёжик", by="gm:anna", reason="уехал"
    )

    new.refresh_from_db()
    assert new.pk == old.pk
    assert (new.number, new.role, new.item, new.alive) == (old.number, old.role, old.item, True)
    assert (new.vk_user_id, new.name, new.strikes) == (4242, "Ёжик", 0)
    [rep] = Replacement.objects.filter(seat=new)
    assert (rep.old_vk_user_id, rep.old_name, rep.new_vk_user_id, rep.old_strikes) == (
        old_vk,
        old_name,
        4242,
        1,
    )
    assert rep.phase == current_phase(game) and rep.reason == "уехал"
    [card] = pms_to(game, 4242, "role_card", after=mark)
    assert f"Ваш номер: {new.number}." in card.text
    assert f"Ваша роль — {Role(new.role).title}" in card.text
    assert Item.BOOK.title in card.text and game.commitment in card.text
    assert pms_to(game, old_vk, "replaced", after=mark)
    assert not pms_to(game, old_vk, "role_card", after=mark)
    [public] = board(game, "replace", after=mark)
    assert "Ёжик" in public.text and f"№{new.number}" in public.text
    assert events(game)[-1].kind == "replace"
    # The penalty votes already announced stay with the seat.
    vote_all(game, civilians(game)[0])
    result = services.day_close(game_id=game.pk)
    assert result.penalties.get(new.number) == 2


def test_a_replacement_gets_the_open_phases_prompts_at_once(game):
    doctor = seat(game, Role.DOCTOR)
    mark = last_outbox_id()
    services.seat_replace(game_id=game.pk, seat=doctor.number, vk_user_id=4242, name="Д",
                          by="gm:test")  # fmt: skip
    [day] = pms_to(game, 4242, "day_prompt", after=mark)
    assert "День 1" in day.text and day.keyboard["inline"]
    to_night(game)
    mafia = seats(game, Role.MAFIA)[0]
    mark = last_outbox_id()
    services.seat_replace(game_id=game.pk, seat=mafia.number, vk_user_id=4343, name="М",
                          by="gm:test")  # fmt: skip
    prompts = pms_to(game, 4343, "night_prompt", after=mark)
    assert prompts and all(p.keyboard for p in prompts)
    assert not pms_to(game, mafia.vk_user_id, "night_prompt", after=mark)
    services.night_close(game_id=game.pk, by="gm:test")  # under review: nothing to send
    civilian = civilians(game)[0]
    mark = last_outbox_id()
    services.seat_replace(game_id=game.pk, seat=civilian.number, vk_user_id=4444, name="Ц",
                          by="gm:test")  # fmt: skip
    assert pms_to(game, 4444, "role_card", after=mark)
    assert not outbox(game, "night_prompt", after=mark)


def test_a_replacement_mafia_card_names_the_whole_team(game):
    mafia = seats(game, Role.MAFIA)
    services.seat_replace(
        game_id=game.pk, seat=mafia[0].number, vk_user_id=4242, name="Новый", by="gm:test"
    )
    [card] = pms_to(game, 4242, "role_card")
    assert f"№{mafia[0].number} Новый" in card.text and label(mafia[1]) in card.text


def test_replacement_by_someone_who_already_plays_is_refused(game):
    services.seat_modkill(
        game_id=game.pk, seat=civilians(game)[0].number, by="gm:test", reason="тест"
    )
    before = snapshot(game)
    living, dead = seat_no(game, 1), seats(game, alive=False)[0]
    for vk in (living.vk_user_id, dead.vk_user_id):
        with pytest.raises(InvalidCommand):
            services.seat_replace(game_id=game.pk, seat=3, vk_user_id=vk, name="x", by="gm:test")
    assert snapshot(game) == before
    assert not Replacement.objects.exists()


def test_a_reserve_is_promoted_into_the_seat(game):
    reserve = services.signup_create(game_id=game.pk, vk_user_id=9001, name="Яна", reserve=True)

    s = services.seat_replace(game_id=game.pk, seat=5, vk_user_id=9001, name="Яна", by="gm:test")

    reserve.refresh_from_db()
    assert reserve.status == SeatStatus.WITHDRAWN
    assert s.vk_user_id == 9001 and s.status == SeatStatus.PLAYER and s.number == 5
    assert all(x.vk_user_id != vk_id(5) for x in seats(game))
    assert pms_to(game, vk_id(5), "replaced") and pms_to(game, 9001, "role_card")


# --- strikes -----------------------------------------------------------------------------------


def test_a_manual_strike_by_day_adds_two_votes_to_todays_tally(game):
    culprit = seat(game, Role.DOCTOR)
    target = civilians(game)[0]
    mark = last_outbox_id()

    strike = services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:anna", reason="флуд")

    assert (strike.count, strike.penalty_votes, strike.penalty_day, strike.modkill) == (
        1,
        2,
        1,
        False,
    )
    assert strike.reason == "manual" and strike.note == "флуд"
    culprit.refresh_from_db()
    assert culprit.strikes == 1
    [post] = board(game, "penalty", after=mark)
    assert f"{label(culprit)}: +2 штрафных голоса в голосовании дня 1" in post.text
    assert "флуд" not in post.text
    [event] = events(game, "strike_manual")
    assert event.override
    vote_all(game, target)
    ordinary = Vote.objects.filter(phase=current_phase(game), current=True, target=culprit).count()
    result = services.day_close(game_id=game.pk)
    assert result.penalties == {culprit.number: 2}
    assert result.tally.get(culprit.number) == ordinary + 2


def test_a_manual_strike_at_night_counts_in_the_next_days_tally(game):
    to_night(game)
    culprit = civilians(game)[0]

    strike = services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test")

    assert strike.penalty_day == 2
    duty_actions(game, avoid=[culprit])
    services.night_close(game_id=game.pk)
    services.night_publish(game_id=game.pk)
    target = civilians(game, exclude=[culprit.number])[0]
    vote_all(game, target)
    result = services.day_close(game_id=game.pk)
    assert result.penalties == {culprit.number: 2}
    assert result.tally[culprit.number] == 2


def test_a_second_manual_strike_is_a_modkill(game):
    culprit = civilians(game)[0]
    services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test")
    mark = last_outbox_id()

    second = services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test", reason="мат")

    culprit.refresh_from_db()
    assert second.count == 2 and second.modkill and second.penalty_votes == 0
    assert not culprit.alive and culprit.death_cause == DeathCause.MODKILL
    assert board(game, "modkill", after=mark) and not board(game, "penalty", after=mark)
    assert [e.kind for e in events(game)[-2:]] == ["strike_manual", "modkill"]


def test_forgiving_a_strike_drops_the_count_and_its_penalty_votes_from_the_open_day(game):
    culprit = seat(game, Role.COMMISSAR)
    strike = services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test")
    mark = last_outbox_id()

    forgiven = services.strike_forgive(
        game_id=game.pk, strike_id=strike.pk, by="gm:anna", reason="сбой бота"
    )

    culprit.refresh_from_db()
    assert forgiven.forgiven and culprit.strikes == 0
    [event] = events(game, "strike_forgiven")
    assert event.override and event.data["reason"] == "сбой бота"
    assert event.data["seat"] == culprit.number and event.data["name"] == culprit.name
    assert "summary" not in event.data  # the log's line is its template's (panel/log/)
    assert board(game, "penalty", after=mark)
    with pytest.raises(InvalidCommand):
        services.strike_forgive(game_id=game.pk, strike_id=strike.pk, by="gm:anna")
    vote_all(game, civilians(game)[0])
    result = services.day_close(game_id=game.pk)
    assert result.penalties == {}
    assert culprit.number not in result.tally


def test_forgiving_a_dawn_strike_removes_it_from_the_next_days_tally(game):
    to_night(game)
    doctor = seat(game, Role.DOCTOR)
    duty_actions(game, skip=[Role.DOCTOR])
    services.night_close(game_id=game.pk)
    services.night_publish(game_id=game.pk)
    [strike] = Strike.objects.filter(seat=doctor)

    services.strike_forgive(game_id=game.pk, strike_id=strike.pk, by="gm:test")

    vote_all(game, civilians(game)[0])
    result = services.day_close(game_id=game.pk)
    assert result.penalties == {} and doctor.number not in result.tally


def test_a_modkill_strike_cannot_be_forgiven(game):
    culprit = civilians(game)[0]
    services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test")
    services.strike_give(game_id=game.pk, seat=culprit.number, by="gm:test")
    modkill_strike = Strike.objects.get(seat=culprit, modkill=True)
    before = snapshot(game)

    with pytest.raises(InvalidCommand) as refused:
        services.strike_forgive(game_id=game.pk, strike_id=modkill_strike.pk, by="gm:test")

    assert "Модкилл" in refused.value.reason
    assert snapshot(game) == before
    culprit.refresh_from_db()
    assert not culprit.alive


# --- the GM ends the game ----------------------------------------------------------------------


def test_the_gm_ending_the_game_is_an_override_published_with_the_others_and_the_seed(game):
    victim = civilians(game)[0]
    modkill(game, victim, reason="оскорбления")
    mark = last_outbox_id()

    services.game_end(game_id=game.pk, by="gm:anna", reason="игроки разошлись")

    game.refresh_from_db()
    assert game.status == GameStatus.FINISHED and game.winner == ""
    [event] = events(game, "game_finished")
    assert event.override and event.actor == "gm:anna" and event.data["seed"] == game.seed
    [final] = board(game, "game_over", after=mark)
    assert "Решения ведущего:" in final.text
    assert f"Модкилл: {label(victim)}." in final.text
    assert "Игра завершена ведущим без победителя." in final.text
    assert f"Зерно раздачи: {game.seed}" in final.text
    for s in seats(game):
        assert f"{label(s)} — {Role(s.role).title.lower()}" in final.text
    with pytest.raises(InvalidCommand):
        services.game_end(game_id=game.pk, by="gm:anna")


def test_the_gm_can_declare_a_winner(game):
    services.game_end(game_id=game.pk, by="gm:anna", winner=Winner.MAFIA)
    game.refresh_from_db()
    assert game.winner == Winner.MAFIA
    assert "Победа: Мафия" in board(game, "game_over")[0].text


def test_ending_a_game_before_its_start_cancels_it():
    game = make_game(n=9, deal=True)
    services.game_end(game_id=game.pk, by="gm:anna", reason="мало игроков")
    game.refresh_from_db()
    assert game.status == GameStatus.CANCELLED
    assert events(game)[-1].kind == "game_cancelled" and events(game)[-1].override


# --- changes during the review of a night (bugs pinned for the fix) ----------------------------


def _night_under_review_with_a_missed_heal(game, *, prior_strike):
    """Night 1 closed with the doctor's heal missing. With ``prior_strike`` the doctor already
    carries a strike for a missed Day 1 vote, so the draft makes the dawn strike a modkill."""
    doctor = seat(game, Role.DOCTOR)
    if prior_strike:
        vote_all(game, civilians(game)[0], skip=[doctor])
        services.day_close(game_id=game.pk)
    else:
        to_night(game)
    duty_actions(game, skip=[Role.DOCTOR])
    services.night_close(game_id=game.pk)
    assert current_phase(game).status == PhaseStatus.REVIEW
    return doctor


def test_a_manual_strike_during_the_review_makes_the_dawn_strike_a_second_one(game):
    doctor = _night_under_review_with_a_missed_heal(game, prior_strike=False)
    services.strike_give(game_id=game.pk, seat=doctor.number, by="gm:test")

    services.night_publish(game_id=game.pk)

    doctor.refresh_from_db()
    assert not doctor.alive and doctor.death_cause == DeathCause.MODKILL


def test_a_strike_forgiven_during_the_review_is_not_counted_at_dawn(game):
    doctor = _night_under_review_with_a_missed_heal(game, prior_strike=True)
    [first] = Strike.objects.filter(seat=doctor)
    services.strike_forgive(game_id=game.pk, strike_id=first.pk, by="gm:test")

    services.night_publish(game_id=game.pk)

    doctor.refresh_from_db()
    assert doctor.alive and doctor.strikes == 1


def test_a_player_replaced_during_the_review_does_not_inherit_the_old_strikes(game):
    doctor = _night_under_review_with_a_missed_heal(game, prior_strike=True)
    services.seat_replace(
        game_id=game.pk, seat=doctor.number, vk_user_id=4242, name="Новый", by="gm:test"
    )

    services.night_publish(game_id=game.pk)

    doctor.refresh_from_db()
    assert doctor.vk_user_id == 4242
    assert doctor.alive and doctor.strikes <= 1


def test_a_modkill_during_the_review_keeps_the_gms_edit_of_the_draft(game):
    to_night(game)
    duty_actions(game)
    services.night_close(game_id=game.pk)
    edited, culprit = civilians(game)[:2]
    services.night_draft_edit(game_id=game.pk, by="gm:test", deaths=[edited.number], reason="x")

    modkill(game, culprit)
    res = services.night_publish(game_id=game.pk)

    edited.refresh_from_db()
    assert res.deaths == (edited.number,)
    assert not edited.alive


def test_a_modkill_during_the_review_redrafts_the_night_without_the_player(game):
    to_night(game)
    victim = civilians(game)[0]
    act(game, seat(game, Role.MAFIA), Act.MAFIA_SHOT, victim)
    duty_actions(game, avoid=[victim])
    assert services.night_close(game_id=game.pk).deaths == (victim.number,)

    modkill(game, victim)

    assert current_phase(game).result["draft"]["deaths"] == []
    assert events(game)[-1].kind == "night_redrafted"
    services.night_publish(game_id=game.pk)
    victim.refresh_from_db()
    assert victim.death_cause == DeathCause.MODKILL


def test_discipline_commands_need_a_running_game():
    game = make_game(n=9, deal=True)
    before = snapshot(game)
    for call in (
        lambda: services.seat_modkill(game_id=game.pk, seat=1, by="gm:test", reason="тест"),
        lambda: services.strike_give(game_id=game.pk, seat=1, by="gm:test"),
    ):
        with pytest.raises(RuleViolation):
            call()
    assert snapshot(game) == before


def test_the_replacement_announcement_names_the_seat_once(game):
    old = civilians(game)[0]
    mark = last_outbox_id()
    services.seat_replace(
        game_id=game.pk, seat=old.number, vk_user_id=4242, name="Ёжик", by="gm:test"
    )
    [public] = board(game, "replace", after=mark)
    assert public.text == f"Замена: место №{old.number} ({old.name}) занимает Ёжик."
