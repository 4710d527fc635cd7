"""Commands as players type them (vkbot.parsing) and names as they write them
(gameplay.names)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameplay import names
from gameplay.refusals import VoteTargetMissing
from vkbot import parsing
from vkbot.parsing import Command, Target, parse_board, parse_private, parse_target


@pytest.mark.parametrize(
    ("text", "verb", "target", "guess"),
    [
        ("проверка 5", "check", Target(number=5), None),
        ("Проверить №12", "check", Target(number=12), None),
        ("лечу Аня", "heal", Target(name="аня"), None),
        ("ЛЕЧУ Алёна", "heal", Target(name="алена"), None),
        ("выстрел @id123", "shot", Target(vk_id=123), None),
        ("стреляю в [id77|Глеба]", "shot", Target(vk_id=77), None),
        ("выстрел https://vk.com/id42", "shot", Target(vk_id=42), None),
        ("выстрел *id9", "shot", Target(vk_id=9), None),
        ("удар 7 комиссар", "role_strike", Target(number=7), "commissar"),
        ("удар док 7", "role_strike", Target(number=7), "doctor"),
        ("ролевой удар: Аня Петрова, маньяк", "role_strike", Target(name="аня петрова"), "maniac"),
        ("удар 7", "role_strike", Target(number=7), None),
        ("удар 7 мирный", "role_strike", Target(number=7), "civilian"),
        ("часы 5", "clock", Target(number=5), None),
        ("кнопка #3", "red_button", Target(number=3), None),
        ("книга 2", "book", Target(number=2), None),
        ("книгу себе", "book", Target(me=True), None),
        ("лечу себя", "heal", Target(me=True), None),
    ],
)
def test_night_commands(text: str, verb: str, target: Target, guess: str | None) -> None:
    cmd = parse_private(text)
    assert (cmd.kind, cmd.verb, cmd.target, cmd.guess) == ("night", verb, target, guess)


@pytest.mark.parametrize(
    ("text", "target", "early"),
    [
        ("голос 5", Target(number=5), False),
        ("голос: Аня", Target(name="аня"), False),
        ("Голосую за Бориса, он странный", Target(name="бориса"), False),
        ("голос [id123|Аня]", Target(vk_id=123), False),
        ("[id123|Аня]", Target(vk_id=123), False),
        ("[id123|Аня] досрочно", Target(vk_id=123), True),
        ("голос 5 досрочно", Target(number=5), True),
        ("Досрочно голос за №5", None, False),
    ],
)
def test_votes(text: str, target: Target | None, early: bool) -> None:
    cmd = parse_private(text)
    if target is None:
        assert cmd.kind == parsing.UNKNOWN
        return
    assert (cmd.kind, cmd.target, cmd.early) == ("vote", target, early)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("статус", parsing.STATUS),
        ("Помощь", parsing.HELP),
        ("Начать", parsing.HELP),
        ("Действия", parsing.MENU),
        ("+", parsing.SIGNUP),
        ("Участвую!", parsing.SIGNUP),
        ("запас", parsing.RESERVE),
        ("снимаюсь", parsing.WITHDRAW),
        ("в ЗЗ", parsing.SPECTATORS),
        ("подсчёт", parsing.COUNT),
        ("голоса", parsing.COUNT),
        ("", parsing.EMPTY),
        ("привет, как дела?", parsing.UNKNOWN),
    ],
)
def test_simple_commands(text: str, kind: str) -> None:
    assert parse_private(text).kind == kind


def test_relay_keeps_the_text() -> None:
    assert parse_private("!Стреляем в 5, ОК?") == Command(parsing.RELAY, text="Стреляем в 5, ОК?")


def test_board_posts_are_discussion_unless_a_vote_count_or_signup() -> None:
    assert parse_board("Думаю, Борис мафия. Кто со мной?") is None
    assert parse_board("[id12|Аня], согласна с тобой") is None
    assert parse_board("мне нравится твой голос") is None
    vote = parse_board("Долго думал.\nГолос 5. Он точно мафия")
    assert vote is not None and vote.target == Target(number=5)
    assert parse_board("Подсчёт") == Command(parsing.COUNT)
    assert parse_board("Голоса?") == Command(parsing.COUNT)
    assert parse_board("голоса за него не отдам") is None
    assert parse_board("+") == Command(parsing.SIGNUP)
    assert parse_board("голос") == Command(parsing.VOTE, error=VoteTargetMissing)


def test_targets() -> None:
    assert parse_target("№ 7") == Target(number=7)
    assert parse_target("за Аню") == Target(name="аню")
    assert parse_target("...") is None
    assert parse_target("игрока Фёдора Петрова") == Target(name="федора петрова")


def test_mention_escapes_the_name() -> None:
    assert parsing.mention(5, "Аня [admin|x]") == "[id5|Аня adminx]"
    assert parsing.mention(5, "[]|") == "[id5|id5]"


# --- names -----------------------------------------------------------------------------------

ROSTER = [
    (1, "Аня Петрова"),
    (2, "Борис"),
    (3, "Алёна"),
    (4, "Аня Смирнова"),
    (5, "Игорь"),
    (6, "Анна"),
]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("Аня Петрова", [1]),
        ("аня", [1, 4]),
        ("Смирнова", [4]),
        ("алена", [3]),
        ("АЛЁНОЙ", [3]),
        ("бориса", [2]),
        ("Борисом", [2]),
        ("игоря", [5]),
        ("анну", [6]),
        ("Аню Смирнову", [4]),
        ("Пётр", []),
        ("", []),
    ],
)
def test_name_matching(query: str, found: list[int]) -> None:
    assert names.match(query, ROSTER) == found


def test_an_exact_name_beats_a_looser_match() -> None:
    assert names.match("Ян", [(1, "Ян"), (2, "Яна")]) == [1]


@given(st.text(max_size=300))
def test_parsers_take_any_text(text: str) -> None:
    assert isinstance(parse_private(text), Command)
    result = parse_board(text)
    assert result is None or isinstance(result, Command)
    assert isinstance(names.match(text, ROSTER), list)


@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text())))
def test_parsers_take_any_value(value: object) -> None:
    assert parse_private(value).kind == parsing.EMPTY
    assert parse_board(value) is None
