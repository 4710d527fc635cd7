"""Night actions in private messages: prompts with buttons, text commands, buttons (paging,
the commissar's choice, the role strike's guess), changes, refusals, forged payloads."""

from __future__ import annotations

import json

import pytest

from gameplay import services
from gameplay.buttons import Payload
from gameplay.messages import when
from gameplay.models import Actor, NightAction, Outbox, OutboxChannel
from localvk.keyboard import validate_keyboard
from tests.gameplay.factories import number_of
from tests.vkbot.bot_support import (
    assert_no_leaks,
    kill,
    make_game,
    phase,
    pm,
    press,
    roles_26,
    run,
    seat,
    texts_to,
    to_night,
    to_user,
)
from vkbot.keyboards import labels_of, of_row, payloads_of

pytestmark = pytest.mark.django_db


def standing(game) -> dict[str, tuple[int, int, str]]:  # noqa: ANN001
    """Standing actions: act → (actor seat, target seat, guess)."""
    return {
        a.act: (number_of(a.actor), number_of(a.target), a.guess)
        for a in NightAction.objects.filter(phase__game=game, current=True).select_related(
            "actor", "target"
        )
    }


def prompts_to(game, vk_id: int) -> list[Outbox]:  # noqa: ANN001
    return [
        o
        for o in Outbox.objects.filter(game=game, kind="night_prompt").order_by("id")
        if vk_id in o.peer_ids
    ]


def test_each_player_gets_one_prompt_per_thing_with_valid_targets() -> None:
    game = make_game()
    to_night(game)
    for row in Outbox.objects.filter(game=game, kind="night_prompt"):
        validate_keyboard(json.dumps(of_row(row.keyboard), ensure_ascii=False))
    mafia1 = prompts_to(game, 1001)
    assert len(mafia1) == 3  # team shot, role strike, clock
    shot = [o for o in mafia1 if "Выстрел мафии" in o.text][0]
    assert shot.peer_ids == [1001, 1002]  # one message for the team
    assert [p.target for p in payloads_of(shot.keyboard)] == [1, 2, 3, 4, 5, 6, 7]
    strike = [o for o in mafia1 if "Ролевой удар" in o.text][0]
    assert 1 not in [p.target for p in payloads_of(strike.keyboard)]  # not self
    assert labels_of(prompts_to(game, 1003)[0].keyboard) == ["Проверка", "Выстрел"]
    maniac = prompts_to(game, 1005)[0]
    assert [p.target for p in payloads_of(maniac.keyboard)] == [1, 2, 3, 4, 6, 7]
    assert len(prompts_to(game, 1006)) == 1  # a civilian with the red button: the item only
    assert prompts_to(game, 1007)[0].text.count("Книга") == 1
    assert_no_leaks(game)


def test_text_commands_cover_every_act() -> None:
    game = make_game()
    to_night(game)
    run(pm(1003, "проверка 5"))
    run(pm(1004, "лечу ФЁДОР"))  # any case, ё
    run(pm(1001, "выстрел @id1006"))
    run(pm(1002, "удар [id1003|Вера] ком"))
    run(pm(1005, "стреляю в Глеба"))  # a declined name
    run(pm(1001, "часы 4"))
    run(pm(1006, "кнопка vk.com/id1002"))
    run(pm(1007, "книга себе"))
    assert standing(game) == {
        "check": (3, 5, ""),
        "heal": (4, 7, ""),
        "mafia_shot": (1, 6, ""),
        "role_strike": (2, 3, "commissar"),
        "maniac_shot": (5, 4, ""),
        "clock": (1, 4, ""),
        "red_button": (6, 2, ""),
        "book": (7, 7, ""),
    }
    assert_no_leaks(game)


def test_every_submission_is_echoed_and_can_be_changed() -> None:
    game = make_game()
    to_night(game)
    out = run(pm(1003, "проверка 5"))
    assert "Принято: проверка — №5 Дарья" in texts_to(out, 1003)
    out = run(pm(1003, "выстрел 6"))
    assert "Принято: выстрел комиссара — №6 Аня Смирнова" in texts_to(out, 1003)
    assert standing(game) == {"commissar_shot": (3, 6, "")}


def test_the_mafia_sees_the_team_shot_and_strike_with_their_sender() -> None:
    game = make_game()
    to_night(game)
    out = run(pm(1002, "выстрел 6"))
    assert "Выстрел мафии: №6 Аня Смирнова (отправитель — №2 Борис)." in texts_to(out, 1001)
    out = run(pm(1001, "удар 3 комиссар"))
    assert "Ролевой удар мафии: №1 Аня Петрова называет №3 Веру комиссаром." in texts_to(out, 1002)
    for vk in (1003, 1004, 1005, 1006, 1007):
        assert to_user(out, vk) == []
    assert_no_leaks(game)


@pytest.mark.parametrize(
    ("vk", "text", "reason"),
    [
        (1004, "лечу Аня", "№1 Аня Петрова и №6 Аня Смирнова"),  # ambiguous
        (1006, "проверка 5", "нет такого действия"),
        (1006, "выстрел 5", "нет выстрела"),
        (1003, "проверка 3", "на себя"),
        (1003, "проверка 99", "Такого игрока нет"),
        (1003, "проверка Зинаида", "Такого игрока нет"),
        (1002, "часы 4", "нет этого предмета"),
        (1001, "удар 3 мафия", "только роль"),
        (1005, "голос 3", "Сейчас ночь"),
    ],
)
def test_refusals_name_the_rule_and_change_nothing(vk: int, text: str, reason: str) -> None:
    game = make_game()
    to_night(game)
    before = standing(game)
    out = run(pm(vk, text))
    assert [r.kind for r in out] == ["refusal"]
    assert reason in out[0].text
    assert standing(game) == before


def test_a_dead_player_gets_a_polite_refusal() -> None:
    game = make_game()
    to_night(game)
    kill(game, 4)
    for text in ("лечу 3", "голос 2", "!привет", "Действия"):
        out = run(pm(1004, text))
        assert len(out) == 1 and "Вы выбыли из игры" in out[0].text, text
    assert standing(game) == {}


def test_buttons_submit_and_are_answered() -> None:
    game = make_game()
    to_night(game)
    heal = prompts_to(game, 1004)[0]
    button = [p for p in payloads_of(heal.keyboard) if p.target == 2][0]
    out = run(press(1004, button.encode()))
    assert out[0].channel == OutboxChannel.EVENT_ANSWER
    assert out[0].payload is not None and out[0].payload["user_id"] == 1004
    assert standing(game) == {"heal": (4, 2, "")}


def test_commissar_chooses_then_targets() -> None:
    game = make_game()
    to_night(game)
    choice = payloads_of(prompts_to(game, 1003)[0].keyboard)
    shot = [p for p in choice if p.action == "commissar_shot"][0]
    out = run(press(1003, shot.encode()))
    page = [o for o in out if o.kind == "night_page"][0]
    targets = payloads_of(page.keyboard)
    assert [p.target for p in targets] == [1, 2, 4, 5, 6, 7]
    run(press(1003, targets[0].encode()))
    assert standing(game) == {"commissar_shot": (3, 1, "")}


def test_a_page_that_replaces_a_prompt_keeps_the_night_and_its_deadline() -> None:
    """▶ on the mafia's shot, «Проверка» of the commissar's choice, a role strike's target:
    the page edits the prompt in place, so it says the night and the deadline again."""
    game = make_game(roles_26())
    night = to_night(game)
    deadline = when(night.deadline, game.time_zone)
    shot = [o for o in prompts_to(game, 1001) if "Выстрел мафии" in o.text][0]
    nxt = [p for p in payloads_of(shot.keyboard) if p.target is None and p.offset > 0][-1]
    check = [p for p in payloads_of(prompts_to(game, 1007)[0].keyboard) if p.action == "check"]
    strike = [o for o in prompts_to(game, 1002) if "Ролевой удар" in o.text][0]
    aimed = [p for p in payloads_of(strike.keyboard) if p.target == 8][0]
    pages = [
        [o for o in run(press(user, payload.encode())) if o.kind == "night_page"][0].text
        for user, payload in ((1001, nxt), (1007, check[0]), (1002, aimed))
    ]
    assert pages[0].startswith("Ночь 1.") and "Выстрел мафии" in pages[0]
    assert pages[1].startswith("Ночь 1.") and "Кого проверяете?" in pages[1]
    assert pages[2].startswith("Ночь 1. Ролевой удар по №8 ")
    assert all(f"Срок — до {deadline}." in page for page in pages)
    # «проверка» typed alone shows the same page
    [typed] = [o for o in run(pm(1007, "проверка")) if o.kind == "night_page"]
    assert typed.text == pages[1]


def test_role_strike_by_buttons_target_then_guess() -> None:
    game = make_game()
    to_night(game)
    strike = [o for o in prompts_to(game, 1002) if "Ролевой удар" in o.text][0]
    target = [p for p in payloads_of(strike.keyboard) if p.target == 4][0]
    out = run(press(1002, target.encode()))
    guesses = payloads_of([o for o in out if o.kind == "night_page"][0].keyboard)
    assert sorted(p.guess or "" for p in guesses) == ["commissar", "doctor", "maniac"]
    run(press(1002, [p for p in guesses if p.guess == "doctor"][0].encode()))
    assert standing(game) == {"role_strike": (2, 4, "doctor")}
    # «удар 5» by text asks for the role with the same buttons
    out = run(pm(1001, "удар 5"))
    assert sorted(p.guess or "" for p in payloads_of(out[0].keyboard)) == [
        "commissar",
        "doctor",
        "maniac",
    ]


def test_paging_through_26_players() -> None:
    game = make_game(roles_26())
    to_night(game)
    shot = [o for o in prompts_to(game, 1001) if "Выстрел мафии" in o.text][0]
    seen = []
    board = shot.keyboard
    for _ in range(10):
        validate_keyboard(json.dumps(of_row(board), ensure_ascii=False))
        payloads = payloads_of(board)
        seen += [p.target for p in payloads if p.target]
        nxt = [p for p in payloads if p.target is None and p.offset > 0 and p.offset >= len(seen)]
        if not nxt:
            break
        out = run(press(1001, nxt[-1].encode()))
        board = [o for o in out if o.kind == "night_page"][0].keyboard
    assert seen == list(range(1, 27))


def test_forged_payloads_change_nothing_and_are_refused() -> None:
    game = make_game()
    other = make_game(vk_base=5000)
    night = to_night(game)
    to_night(other)
    kill(game, 6)
    before = standing(game)
    forged = [
        Payload("heal", game=other.pk, phase=phase(other).pk, target=2),  # another game
        Payload("heal", game=game.pk, phase=night.pk, target=6),  # a dead target
        Payload("heal", game=game.pk, phase=night.pk - 1, target=2),  # a closed phase
        Payload("check", game=game.pk, phase=night.pk, target=2),  # another role's act
        Payload("book", game=game.pk, phase=night.pk, target=2),  # another seat's item
        Payload("heal", game=game.pk, phase=night.pk, target=99),  # no such seat
        Payload("vote", game=game.pk, phase=night.pk, target=2),  # a vote at night
    ]
    for payload in forged:
        out = run(press(1004, payload.encode()))
        refusals = [o for o in out if o.kind == "refusal"]
        assert len(refusals) == 1, payload
    assert standing(game) == before == {}
    out = run(press(1004, '{"a":"heal","g":1,"p":1,"t":"2; DROP TABLE"}'))
    assert [o.kind for o in out] == ["event_answer", "refusal"]


def test_a_button_from_a_finished_night_is_stale() -> None:
    game = make_game()
    to_night(game)
    heal = [p for p in payloads_of(prompts_to(game, 1004)[0].keyboard) if p.target == 2][0]
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    out = run(press(1004, heal.encode()))
    assert "устарела" in [o for o in out if o.kind == "refusal"][0].text
    assert NightAction.objects.filter(phase__game=game).count() == 0


def test_a_text_action_while_the_gm_reviews_the_night_says_so() -> None:
    game = make_game()
    to_night(game)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    out = run(pm(1004, "лечу 2"))
    assert [o.text for o in out if o.kind == "refusal"] == [
        "Ночь закрыта: ведущий подводит итоги. Действия больше не принимаются — дождитесь итогов "
        "ночи в обсуждении."
    ]
    assert NightAction.objects.filter(phase__game=game).count() == 0


def test_menu_resends_the_prompts() -> None:
    game = make_game()
    to_night(game)
    out = run(pm(1001, "Действия"))
    assert len(out) == 3 and all(o.keyboard for o in out)
    out = run(pm(1006, "Действия"))
    assert len(out) == 1  # the red button only
    assert seat(game, 6).alive
