"""The end-to-end game's leak scan catches what it is for (and lets through what RULES.md
allows): messages as the local VK stores them, judged against a small table."""

from __future__ import annotations

from localvk import Comment, Message
from tests.e2e.leaks import Knowledge, SeatInfo, board_leaks, private_leaks

FOREVER = 10**12
ROLES = {1: "mafia", 2: "mafia", 3: "commissar", 4: "doctor", 5: "civilian", 6: "maniac"}
NAMES = {
    1: "Аня Петрова",
    2: "Борис Соколов",
    3: "Вера Ильина",
    4: "Глеб Морозов",
    5: "Дарья Белова",
    6: "Фёдор Ёлкин",
}


def knowledge(**extra: object) -> Knowledge:
    return Knowledge(
        seats={n: SeatInfo(n, role, (NAMES[n],)) for n, role in ROLES.items()},
        holders={100 + n: [(n, 0, FOREVER)] for n in ROLES},
        actions=[(3, "check", 1), (4, "heal", 5), (1, "mafia_shot", 5), (1, "role_strike", 3)],
        **extra,  # type: ignore[arg-type]
    )


def message(seq: int, to_seat: int, text: str, labels: tuple[str, ...] = ()) -> Message:
    keyboard = (
        {
            "inline": True,
            "buttons": [[{"action": {"type": "callback", "label": label}} for label in labels]],
        }
        if labels
        else None
    )
    return Message(
        id=seq,
        peer_id=100 + to_seat,
        from_id=-1,
        text=text,
        date=0,
        conversation_message_id=seq,
        out=True,
        keyboard=keyboard,
    )


def scan(
    to_seat: int,
    text: str,
    *,
    seq: int = 10,
    labels: tuple[str, ...] = (),
    table: Knowledge | None = None,
) -> list[str]:
    return private_leaks(
        table or knowledge(), {100 + to_seat: [message(seq, to_seat, text, labels)]}
    )


def test_a_role_named_to_someone_not_entitled_is_a_leak() -> None:
    assert scan(5, "Мафия: №1 Аня Петрова, №2 Борис Соколов.")  # the team list to a civilian
    assert scan(4, "Комиссар — Вера Ильина")  # by name
    assert scan(4, "[id103|Вера] — комиссар")  # by mention
    assert scan(5, "Игроки", labels=("№6 Фёдор Ёлкин (маньяк)",))  # in a button
    assert scan(3, "Ночь 1, проверка: №2 Борис Соколов — мафия.")  # not his check


def test_what_rules_md_allows_is_not_a_leak() -> None:
    assert not scan(1, "Мафия: №1 Аня Петрова, №2 Борис Соколов.")  # the team
    assert not scan(3, "Ночь 1, проверка: №1 Аня Петрова — мафия.")  # his own check
    assert not scan(2, "Ролевой удар мафии: №3 Вера Ильина, роль: комиссар (отправил №1 Аня).")
    assert not scan(5, "Ваша роль — Мирный житель. Ваш номер: 5.")  # their own
    revealed = knowledge(public_from={2: 5})
    assert not scan(5, "№2 Борис Соколов выбыл, роль: Мафия.", seq=6, table=revealed)
    assert scan(5, "№2 Борис Соколов выбыл, роль: Мафия.", seq=4, table=revealed)  # too early


def test_night_actions_are_told_to_their_senders_and_the_team_only() -> None:
    assert not scan(4, "Принято: лечение — №5 Дарья Белова.")  # the doctor's own heal
    assert scan(5, "Принято: лечение — №5 Дарья Белова.") == []  # about the reader herself
    assert scan(6, "Принято: лечение — №5 Дарья Белова.")  # the maniac must not know
    assert not scan(2, "Выстрел мафии: №5 Дарья Белова (отправил №1 Аня Петрова).")
    found = scan(3, "Выстрел мафии: №5 Дарья Белова (отправил №1 Аня Петрова).")
    assert any("who sent" in f for f in found) and any("role of №1" in f for f in found)
    # The same facts in the other wordings the texts use (VK told no gender; a role strike).
    assert scan(3, "Выстрел мафии: №5 Дарья Белова (отправитель — №1 Саша Петрова).")
    assert scan(3, "Ролевой удар мафии: №1 Аня Петрова называет №5 Дарью Белову доктором.")
    assert not scan(2, "Ролевой удар мафии: №1 Аня Петрова называет №5 Дарью Белову доктором.")


def test_a_replaced_mafia_member_is_an_outsider_after_leaving() -> None:
    table = knowledge()
    table.holders[101] = [(1, 0, 20)]  # seat 1 until message 20, then someone else's
    team = "Мафия: №1 Аня Петрова, №2 Борис Соколов."
    assert not private_leaks(table, {101: [message(10, 1, team)]})
    assert private_leaks(table, {101: [message(30, 1, team)]})


def test_the_board_before_the_end_names_only_announced_roles_and_no_actions() -> None:
    table = knowledge()
    posts = [
        Comment(1, 1, -1, 0, "Казнён №2 Борис Соколов. Роль: Мафия."),
        Comment(2, 1, -1, 0, "Этой ночью погиб №5 Дарья Белова. Роль: Мирный житель."),
        Comment(3, 1, -1, 0, "Ночь 1: №4 — лечение → №5"),
        Comment(4, 1, 105, 0, "я мирный, №1 мафия!"),  # a player's own post: not the bot's
        Comment(9, 1, -1, 0, "Роли: №1 Аня Петрова — Мафия. Ночь 1: №1 — выстрел → №5"),
    ]
    found = board_leaks(table, posts, revealed={2}, final_id=9)
    assert len(found) == 2
    assert "role of №5" in found[0] and "night action" in found[1]
