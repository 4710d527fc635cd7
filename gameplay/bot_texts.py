"""Russian texts the player-facing services write on the bot's behalf: prompts with buttons,
the mafia's relay, the vote count, sign-up answers in the board, the spectator chat invite.

(gameplay/texts.py holds the texts of the core game services; the bot's own replies are in
vkbot/texts.py.) Short lines: players read them on phones.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gameplay.rules import Act, Role
from gameplay.texts import ITEM_CARDS, seat_label, when

#: The text of a spectator invite: the delivery puts the chat's link in place of this marker
#: (``messages.getInviteLink`` at send time, so the link is always the current one).
INVITE_LINK = "{link}"

ACT_BUTTONS: dict[Act, str] = {
    Act.CHECK: "Проверка",
    Act.COMMISSAR_SHOT: "Выстрел",
}

GUESS_LABELS: dict[Role, str] = {
    Role.COMMISSAR: "Комиссар",
    Role.DOCTOR: "Доктор",
    Role.MANIAC: "Маньяк",
}

_ACT_QUESTIONS: dict[Act, str] = {
    Act.MAFIA_SHOT: "Выстрел мафии: в кого стреляет мафия? («выстрел N»)",
    Act.ROLE_STRIKE: (
        "Ролевой удар (один раз за игру на всю мафию): выберите игрока, затем его роль "
        "(«удар N комиссар»). Не угадаете — погибнет отправивший."
    ),
    Act.CHECK: "Кого проверяете? («проверка N»)",
    Act.COMMISSAR_SHOT: "В кого стреляете? («выстрел N»)",
    Act.HEAL: "Кого лечите? Можно себя. («лечу N»)",
    Act.MANIAC_SHOT: "В кого стреляете? («выстрел N»)",
    Act.CLOCK: "На кого остановить время? («часы N»)",
    Act.RED_BUTTON: "На кого нажать кнопку? («кнопка N»)",
    Act.BOOK: "Кого спасти книгой? Можно себя. («книга N»)",
}


def deadline_line(deadline: datetime | None, tz: str) -> str:
    return f"Срок — до {when(deadline, tz)}. Изменить можно до закрытия ночи."


def act_prompt(number: int, act: Act, deadline: datetime | None, tz: str) -> str:
    """A night prompt for one thing the player can do (its buttons are the valid targets)."""
    head = f"Ночь {number}."
    if act.item is not None:
        head += f" У вас есть {ITEM_CARDS[act.item]}"
    return f"{head}\n{_ACT_QUESTIONS[act]}\n{deadline_line(deadline, tz)}"


def commissar_prompt(number: int, deadline: datetime | None, tz: str) -> str:
    return (
        f"Ночь {number}. Выберите одно: проверить игрока или выстрелить "
        f"(«проверка N» / «выстрел N»).\n{deadline_line(deadline, tz)}"
    )


def pick_target(act: Act) -> str:
    return _ACT_QUESTIONS[act]


def heal_note(label: str) -> str:
    return f"{label} вы лечили прошлой ночью: второй раз подряд нельзя."


def pick_guess(target: str) -> str:
    return f"Ролевой удар по {target}: какую роль вы называете?"


def day_prompt(number: int, deadline: datetime | None, tz: str, early: bool) -> str:
    lines = [
        f"День {number}. Голосуйте в обсуждении («голос N») или кнопкой ниже: бот опубликует "
        "ваш голос в обсуждении.",
        f"Голосование до {when(deadline, tz)}. Голос можно изменить до закрытия дня.",
    ]
    if early:
        lines.append("Досрочный голос окончательный: кнопка «Досрочно…».")
    return "\n".join(lines)


def early_vote_prompt(number: int) -> str:
    return f"День {number}, досрочный голос: его нельзя будет изменить. За кого?"


def vote_page(number: int) -> str:
    return f"День {number}: за кого голосуете?"


def role_strike_update(sender: str, target: str, guess: Role) -> str:
    return f"Ролевой удар мафии: {target}, роль: {guess.title.lower()} (отправил {sender})."


def relay(sender: str, text: str) -> str:
    return f"Мафия, {sender}:\n{text}"


def relay_sent(count: int) -> str:
    return f"Передано живой мафии ({count})."


def relay_alone() -> str:
    return "Из мафии в живых только вы: сообщение некому передать."


def vote_count(
    day: int,
    rows: Sequence[tuple[int, str, int, int]],
    voted: int,
    living: int,
    missing: Sequence[tuple[int, str]],
) -> str:
    """The count posted in the topic: ``rows`` are (seat, name, votes, penalty votes)."""
    lines = [f"Подсчёт голосов, день {day}: проголосовали {voted} из {living}."]
    for number, name, votes, penalty in rows:
        extra = f" (+{penalty} штрафных)" if penalty else ""
        lines.append(f"{seat_label(number, name)} — {votes + penalty}{extra}")
    if not rows:
        lines.append("Голосов пока нет.")
    if missing:
        lines.append("Ещё не голосовали: " + ", ".join(f"№{n}" for n, _ in missing) + ".")
    return "\n".join(lines)


def board_signed_up(mention: str, game_name: str, reserve: bool, pm_allowed: bool | None) -> str:
    where = "в запас игры" if reserve else "в игру"
    text = f"{mention}, вы записаны {where} «{game_name}»."
    if pm_allowed is not True:
        text += " " + pm_hint(pm_allowed)
    return text


def pm_hint(pm_allowed: bool | None) -> str:
    if pm_allowed is False:
        return (
            "Но бот не может написать вам в личные сообщения, а роль и ночные действия идут "
            "только туда: откройте сообщество и нажмите «Написать сообщение» (или «Разрешить "
            "сообщения»), затем отправьте боту «статус»."
        )
    return (
        "Роль придёт в личные сообщения сообщества: если вы ещё не писали боту, напишите ему "
        "«статус», чтобы разрешить сообщения."
    )


def board_refusal(mention: str, reason: str) -> str:
    return f"{mention}, {reason[:1].lower()}{reason[1:]}"


def board_vote_refused(mention: str, reason: str) -> str:
    return f"{mention}, голос не принят: {reason[:1].lower()}{reason[1:]}"


def spectator_invite(game_name: str) -> str:
    return (
        f"Беседа зрителей игры «{game_name}»: {INVITE_LINK}\n"
        "Там можно обсуждать игру, но в обсуждении игры выбывшие молчат."
    )


def event_answer_note() -> str:
    return "Ответ на нажатие кнопки."


def intruder_note(member: int, why: str) -> str:
    return f"id{member} вошёл в беседу зрителей и удалён ботом: {why}."


#: A night action sent after the night closed, while the GM reviews it; also what a player
#: outside the mafia hears while the GM has re-opened only the mafia's shot (G2): the re-open
#: is the mafia's business alone.
NIGHT_UNDER_REVIEW = "Ночь закрыта: ведущий подводит итоги. Действия больше не принимаются."
#: To the mafia, during that re-open, about any other act.
NIGHT_REOPENED_FOR_MAFIA_SHOT = "Ведущий открыл заново только выстрел мафии."
