"""The bot never promises what it then refuses: the spectator chat is
offered only to those G6 lets in, target buttons are exactly the targets the rules accept (no
self where §4 forbids it, not the doctor's last heal, said above the buttons), «досрочно»
before Day 3 is not offered as final, and every refusal says what to do instead."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import Actor, Game, Outbox, Phase, Seat
from gameplay.rules import Act, NightContext, valid_targets
from gameplay.rules.roles import SELF_TARGET_ALLOWED
from gameplay.selectors.spectators import spectator_page
from gameplay.services.common import send_you_died, table_of
from gameplay.services.spectators import spectator_chat_set_open, spectator_refusal
from tests.gameplay.factories import number_of
from tests.vkbot.bot_support import (
    CHAT_PEER,
    kill,
    make_game,
    phase,
    pm,
    roles_26,
    run,
    seat,
    texts_to,
    to_night,
)
from vkbot.keyboards import payloads_of

pytestmark = pytest.mark.django_db

ACT_WORDS = {
    "mafia_shot": "Выстрел мафии",
    "role_strike": "Ролевой удар",
    "heal": "лечите",
    "maniac_shot": "стреляете",
    "clock": "часы",
    "red_button": "кнопк",
    "book": "книгой",
}


def prompts_to(game: Game, vk_id: int) -> list[Outbox]:
    return [
        o
        for o in Outbox.objects.filter(game=game, kind="night_prompt").order_by("id")
        if vk_id in o.peer_ids
    ]


# --- the spectator chat (G6) -------------------------------------------------------------------


def test_dead_mafia_is_never_told_to_ask_for_the_spectator_chat() -> None:
    game = make_game()
    Game.objects.filter(pk=game.pk).update(spectator_chat_id=CHAT_PEER)
    kill(game, 2)  # mafia
    kill(game, 4)  # doctor
    modkilled = {
        o.peer_ids[0]: o.text
        for o in Outbox.objects.filter(game=game, kind="modkill", channel="message")
    }
    assert "в ЗЗ" in modkilled[1004] and "в ЗЗ" not in modkilled[1002]
    send_you_died(
        game=game, seats=[seat(game, 2), seat(game, 4)]
    )  # as a night's or a day's death does
    died = {o.peer_ids[0]: o.text for o in Outbox.objects.filter(game=game, kind="you_died")}
    assert "в ЗЗ" in died[1004] and "в ЗЗ" not in died[1002]
    assert "в ЗЗ" in texts_to(run(pm(1004, "помощь")), 1004)
    assert "в ЗЗ" not in texts_to(run(pm(1002, "помощь")), 1002)
    spectator_chat_set_open(game_id=game.pk, by=Actor.gm("test"), open=True)
    opened = [
        o for o in Outbox.objects.filter(game=game, kind="spectators") if o.channel == "message"
    ]
    assert [o.peer_ids for o in opened] == [[1004]]
    # the panel, the opening message and the bot's answer agree
    seats = Seat.objects.filter(game=game, number__isnull=False)
    assert [s.number for s in seats if spectator_refusal(game=game, seat=s) is None] == [4]
    assert [s.number for s in spectator_page(game).eligible] == [4]
    assert run(pm(1004, "в ЗЗ"))[0].kind == "spectator_invite"
    refusal = texts_to(run(pm(1002, "в ЗЗ")), 1002)
    assert "мафия" in refusal and "обсуждении" in refusal  # and what to do instead


# --- night targets -------------------------------------------------------------------------------


def test_night_buttons_are_exactly_the_targets_the_rules_accept() -> None:
    game = make_game(roles_26())
    kill(game, 20)
    night = to_night(game)
    seats = list(Seat.objects.filter(game=game, number__isnull=False).order_by("number"))
    ctx = NightContext(number=night.number)
    checked = set()
    for s in seats:
        if not s.alive:
            continue
        for prompt in prompts_to(game, s.vk_user_id):
            acts = {p.action for p in payloads_of(prompt.keyboard)}
            if len(acts) != 1 or not (acts <= set(ACT_WORDS) | {"check", "commissar_shot"}):
                continue  # the commissar's choice
            [act] = acts
            offered = [p.target for p in payloads_of(prompt.keyboard) if p.target]
            allowed = valid_targets(table_of(seats), ctx, number_of(s), Act(act))
            assert offered == allowed[: len(offered)], (s.number, act)
            assert (s.number in allowed) is (Act(act) in SELF_TARGET_ALLOWED), (s.number, act)
            assert 20 not in offered
            checked.add(act)
    assert checked == set(ACT_WORDS)


def test_the_doctor_is_told_whom_the_buttons_leave_out_after_a_heal() -> None:
    game = make_game()
    Seat.objects.filter(game=game, number=4).update(last_heal_target=4)
    to_night(game)
    [heal] = prompts_to(game, 1004)
    assert 4 not in [p.target for p in payloads_of(heal.keyboard)]
    assert "Вчера вы лечили №4 Глеба — сегодня его лечить нельзя." in heal.text
    assert "Можно себя" not in heal.text  # not tonight
    # a healed player of the other gender, through the page the «лечу» command shows
    game = make_game(vk_base=3000)
    Seat.objects.filter(game=game, number=4).update(last_heal_target=3)
    Seat.objects.filter(game=game, number=3).update(sex=1)
    to_night(game)
    out = run(pm(3004, "лечу"))
    assert [p.target for p in payloads_of(out[0].keyboard)] == [1, 2, 4, 5, 6, 7]
    assert "Вчера вы лечили №3 Веру — сегодня её лечить нельзя." in out[0].text
    assert "Можно себя" in out[0].text
    assert seat(game, 4).last_heal_target == 3 and phase(game).number == 1


# --- votes -------------------------------------------------------------------------------------


def test_early_vote_page_before_day_3_is_not_offered_as_final() -> None:
    make_game()
    out = run(pm(1001, "голос досрочно"))
    assert len(out) == 1
    text = out[0].text
    assert "нельзя будет изменить" not in text and "с 3-го дня" in text
    assert not any(p.early for p in payloads_of(out[0].keyboard))


def test_a_final_early_vote_gets_no_vote_buttons_from_the_menu() -> None:
    game = make_game()
    Phase.objects.filter(pk=phase(game).pk).update(number=3)  # Day 3: early votes are final
    services.vote_submit(game_id=game.pk, voter=1, target=3, early=True)
    out = run(pm(1001, "Действия"))
    assert len(out) == 1 and payloads_of(out[0].keyboard) == []
    assert "досрочный голос за №3 Веру окончательный" in out[0].text
    out = run(pm(1002, "Действия"))  # an ordinary voter still gets the buttons
    assert any(p.target for p in payloads_of(out[0].keyboard))
