"""The rules' explanations in the GM's words: the rules return facts (gameplay/rules/facts.py),
the panel says them (templates/panel/explain/<code>.txt) naming the players as it names them
elsewhere — number, name in the right case, role — with the player's gender agreed; a phase
stored before facts shows its sentences as they were."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import grammar, services
from gameplay.models import Game, Phase, PhaseStatus, Seat
from gameplay.rules import Act, Fact, GmEdit, Role, Why
from panel.templatetags.panel_tags import explain
from tests.gameplay.factories import number_of
from tests.panel.support import close_now, living, make_game, seats_by_role

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "panel" / "explain"

SEATS = {
    1: SimpleNamespace(name="Аня Петрова", sex=1, role="mafia"),
    3: SimpleNamespace(name="Вера Ильина", sex=1, role="commissar"),
    4: SimpleNamespace(name="Борис Котов", sex=2, role="doctor"),
    9: SimpleNamespace(name="Саша Белых", sex=0, role="civilian"),  # VK did not tell
}


@pytest.mark.parametrize(
    ("line", "text"),
    [
        (
            Fact(Why.ROLE_STRIKE_HIT, actor=1, target=3, guess=Role.COMMISSAR),
            "№1 Аня Петрова (мафия) назвала №3 ролью «комиссар» — угадано: "
            "№3 Вера Ильина (комиссар) погибает.",
        ),
        (
            Fact(Why.ROLE_STRIKE_MISS, actor=4, target=9, guess=Role.MAFIA),
            "№4 Борис Котов (доктор) назвал №9 ролью «мафия» — не угадано: "
            "№4 Борис Котов (доктор) погибает.",
        ),
        (
            Fact(Why.CLOCK_BLOCKS, actor=9, target=3),
            "№9 Саша Белых (мирный житель) использует часы: №3 Вера Ильина (комиссар) "
            "заблокирована.",
        ),
        (
            Fact(Why.HEAL, act=Act.HEAL, actor=4, target=3),
            "Лечение: №4 Борис Котов (доктор) защищает №3 Веру Ильину (комиссар).",
        ),
        (
            Fact(Why.SHOT, act=Act.RED_BUTTON, actor=9, target=1),
            "Загадочная красная кнопка: №9 Саша Белых (мирный житель) стреляет в "
            "№1 Аню Петрову (мафия).",
        ),
        (
            Fact(Why.ACTOR_BLOCKED, act=Act.CHECK, actor=3, target=1),
            "Проверка — №3 Вера Ильина (комиссар): заблокирована часами.",
        ),
        (
            Fact(Why.ACTOR_DEAD, act=Act.HEAL, actor=4, target=9),
            "Лечение — №4 Борис Котов (доктор): погиб раньше, действие не выполняется.",
        ),
        (
            Fact(Why.TARGET_GONE, act=Act.MAFIA_SHOT, actor=1, target=7),
            "Выстрел мафии — №1 Аня Петрова (мафия): цель №7 выбыла, без последствий.",
        ),
        (Fact(Why.SAVED, seat=3), "№3 Вера Ильина (комиссар) вылечена и выживает."),
        (Fact(Why.SAVED, seat=9), "№9 Саша Белых (мирный житель) под лечением и выживает."),
        (Fact(Why.KILLED, seat=7), "№7 погибает."),  # a seat the page does not hold
        (
            Fact(Why.CHECK, actor=3, target=1, is_mafia=True),
            "№3 Вера Ильина (комиссар) проверяет №1: «мафия».",
        ),
        (
            Fact(Why.PENALTY_CARRIED, seat=4, votes=2),
            "№4 Борис Котов: +2 штрафных голоса за пропуск ночного действия.",
        ),
        (
            Fact(Why.VOTE_STRIKE, seat=3, votes=2),
            "№3 Вера Ильина: штраф за пропуск голосования, +2 голоса.",
        ),
        (
            Fact(Why.EXECUTION, seat=3, votes=4),
            "Больше всех голосов (4) у №3 Веры Ильиной: казнь.",
        ),
        (
            Fact(Why.TIE, seats=(3, 4), votes=2),
            "Ничья: по 2 голоса у №3 Веры Ильиной, №4 Бориса Котова. Никто не уходит.",
        ),
        (Fact(Why.NO_VOTES), "Голосов нет: никто не уходит."),
        (
            GmEdit(died=(9,), saved=(3, 4), reason="ошибка в подсчёте"),
            "Ведущий: погибает №9 Саша Белых (мирный житель); выживают №3 Вера Ильина "
            "(комиссар), №4 Борис Котов (доктор). Причина: ошибка в подсчёте",
        ),
        (
            GmEdit(died=(), saved=(), reason="проверено"),
            "Ведущий: без изменений. Причина: проверено",
        ),
    ],
)
def test_a_fact_reads_as_the_gm_reads_it_from_the_rules_object_and_from_its_stored_form(
    line: Fact | GmEdit, text: str
) -> None:
    assert explain(line, SEATS) == text
    assert explain(line.as_dict(), SEATS) == text


def test_a_line_stored_before_facts_is_shown_as_it_is() -> None:
    old = "Выстрел мафии: №1 (Мафия) стреляет в №9 (Мирный житель)."
    assert explain(old, SEATS) == old


def test_every_code_has_its_text_and_every_text_is_a_code() -> None:
    files = {p.stem for p in TEMPLATES.glob("*.txt")}
    assert files == {w.value for w in Why} | {"gm_edit", "step"}
    for why in Why:
        full = Fact(
            why,
            seat=4,
            actor=1,
            target=3,
            act=Act.HEAL,
            guess=Role.DOCTOR,
            votes=2,
            seats=(3, 4),
            is_mafia=False,
        )
        text = explain(full, SEATS)
        assert re.search(r"[А-Яа-я]", text) and text.endswith(".") and "  " not in text, why
        assert not re.search(r"[{}]|None|\s[.,:;]", text), (why, text)


# --- in the pages ------------------------------------------------------------------------------

NAMES = [
    ("Аня Петрова", 1),
    ("Борис Котов", 2),
    ("Вера Ильина", 1),
    ("Глеб Орлов", 2),
    ("Дарья Белова", 1),
    ("Егор Титов", 2),
    ("Саша Белых", 0),
]


def url(name: str, game: Game) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk})


def named_game(gm: Any) -> Game:
    game = make_game(gm, players=7, seed="explain-seed")
    for number, (name, sex) in enumerate(NAMES, start=1):
        Seat.objects.filter(game=game, number=number).update(name=name, sex=sex)
    return game


def who(seat: Seat, case: str = "nomn", role: bool = True) -> str:
    name = grammar.decline_name(seat.name, case, seat.sex)
    title = {
        "mafia": "мафия",
        "commissar": "комиссар",
        "doctor": "доктор",
        "civilian": "мирный житель",
        "maniac": "маньяк",
    }[seat.role]
    return f"№{seat.number} {name}" + (f" ({title})" if role else "")


@pytest.mark.django_db
def test_the_day_projection_and_its_confirmation_say_who_is_executed_and_why(
    gm: Any, gm_client: Client
) -> None:
    game = named_game(gm)
    alive = living(game)
    target = alive[2]  # Вера Ильина
    for s in alive:
        if s != target:
            services.vote_submit(game_id=game.pk, voter=s.number, target=number_of(target))
    # Six votes, and the two penalty votes of the target's own missed vote.
    line = f"Больше всех голосов (8) у {who(target, 'gent', role=False)}: казнь."
    assert "Веры Ильиной" in line
    page = gm_client.get(url("panel_game", game)).content.decode()
    assert line in page
    assert f"{who(target, role=False)}: штраф за пропуск голосования, +2 голоса." in page
    assert line in gm_client.get(url("panel_close", game)).content.decode()


@pytest.mark.django_db
def test_the_night_review_tells_each_step_with_names_and_the_gm_edit(
    gm: Any, gm_client: Client
) -> None:
    game = named_game(gm)
    services.day_close(game_id=game.pk)
    roles = seats_by_role(game)
    seat = {s.number: s for s in living(game)}
    mafia = seat[next(n for n in roles["mafia"] if n in seat)]
    doctor = seat[roles["doctor"][0]]
    commissar = seat[roles["commissar"][0]]
    target = seat[next(n for n in roles["civilian"] if n in seat)]
    for actor, act, whom in [
        (mafia, "mafia_shot", target),
        (doctor, "heal", target),
        (commissar, "check", mafia),
    ]:
        services.night_action_submit(
            game_id=game.pk, actor=actor.number, act=act, target=number_of(whom)
        )
    close_now(gm_client, game)
    html = gm_client.get(url("panel_game", game)).content.decode()
    for title in ["Ролевой удар", "Часы", "Лечение", "Выстрелы", "Проверка"]:
        assert f"<strong>{title}</strong>" in html
    assert "Ролевого удара не было." in html
    assert f"Выстрел мафии: {who(mafia)} стреляет в {who(target, 'accs')}." in html
    assert f"Лечение: {who(doctor)} защищает {who(target, 'accs')}." in html
    assert f"{who(commissar)} проверяет №{mafia.number}: «мафия»." in html
    saved = {1: "вылечена", 2: "вылечен", 0: "под лечением"}[target.sex]
    assert f"{who(target)} {saved} и выживает." in html

    gm_client.post(
        url("panel_night_edit", game),
        {"deaths": [target.number], "reason": "решение ведущего"},
        follow=True,
    )
    html = gm_client.get(url("panel_game", game)).content.decode()
    assert f"Ведущий: погибает {who(target)}. Причина: решение ведущего" in html


@pytest.mark.django_db
def test_a_night_stored_before_facts_shows_its_sentences_as_they_were(
    gm: Any, gm_client: Client
) -> None:
    game = named_game(gm)
    services.day_close(game_id=game.pk)
    close_now(gm_client, game)
    phase = Phase.objects.get(game=game, status=PhaseStatus.REVIEW)
    assert phase.result is not None
    draft = phase.result["draft"]
    draft["steps"] = [
        {"number": 1, "title": "Ролевой удар (старый)", "lines": ["Ролевого удара не было."]},
        {"number": 4, "title": "Выстрелы", "lines": ["№5 (Мирный житель) погибает."]},
    ]
    draft["gm_edits"] = ["Ведущий: погибают №5 (Мирный житель). Причина: старая правка"]
    phase.save(update_fields=["result"])
    html = gm_client.get(url("panel_game", game)).content.decode()
    assert "<strong>Ролевой удар (старый)</strong>" in html
    assert "<li>№5 (Мирный житель) погибает.</li>" in html
    assert "Ведущий: погибают №5 (Мирный житель). Причина: старая правка" in html
    # And the GM can still edit it: the old sentence stays, the new edit is said in words.
    gm_client.post(url("panel_night_edit", game), {"deaths": [], "reason": "новая"}, follow=True)
    html = gm_client.get(url("panel_game", game)).content.decode()
    assert "Причина: старая правка" in html and "Ведущий: без изменений. Причина: новая" in html
