"""The bot's own replies, in Russian: help for the player's own role only, «статус», and every
refusal that is not a rule's own reason (those come from ``RuleViolation.reason``).

Nothing here names another player's role or action: the status of a mafia member shows the
team's shot and role strike (the team knows them), everyone else sees only their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from gameplay import bot_texts
from gameplay.models import Game, NightAction, Phase, PhaseKind, Seat
from gameplay.rules import EARLY_VOTE_FROM_DAY, Act, Item, Role
from gameplay.rules.roles import ACT_TITLES
from gameplay.selectors.bot import PlayerStatus, night_closed_to
from gameplay.texts import seat_label, when

# --- refusals and short answers --------------------------------------------------------------

UNKNOWN_COMMAND = "Не понял команду. «помощь» — ваши команды, кнопка «Действия» — кнопки."
NOT_PLAYING = (
    "Вы не участвуете в идущей игре. Когда идёт набор, напишите «+», чтобы записаться, или "
    "«запас», чтобы попасть в запас."
)
NOT_STARTED = "Игра ещё не началась: роль придёт в личные сообщения при старте."
SEVERAL_GAMES = (
    "Вы играете в нескольких играх сразу: пользуйтесь кнопками из сообщений бота — они знают, "
    "к какой игре относятся."
)
NO_RECRUITMENT = "Сейчас ни в одну игру не идёт набор."
NO_RESERVE = "Сейчас нет игр, в запас которых можно записаться."
NOT_SIGNED_UP = "Вы не записаны ни в одну игру."
CHOOSE_GAME = "Идёт набор в несколько игр. Выберите игру:"
BAD_BUTTON = "Эта кнопка недействительна или устарела. Кнопка «Действия» пришлёт свежие."
NO_NIGHT_ACTIONS = "У вас нет ночных действий: мирные жители ночью спят."
NOTHING_TO_DO_NOW = "Сейчас от вас ничего не требуется. «статус» — где сейчас игра."
NIGHT_UNDER_REVIEW = bot_texts.NIGHT_UNDER_REVIEW
NIGHT_REOPENED_FOR_MAFIA_SHOT = bot_texts.NIGHT_REOPENED_FOR_MAFIA_SHOT
EMPTY_MESSAGE = "Я понимаю только текст. «помощь» — ваши команды."
DEAD = (
    "Вы выбыли из игры и больше не можете голосовать, действовать и пользоваться предметами. "
    "Спасибо за игру!"
)
WITHDRAW_DONE = "Вы сняты с игры."


# --- help ------------------------------------------------------------------------------------

_ROLE_HELP: dict[Role, str] = {
    Role.MAFIA: (
        "Ночью:\n"
        "• «выстрел N» — выстрел мафии; стоит последний, отправленный кем-либо из мафии;\n"
        "• «удар N комиссар» (или доктор, маньяк) — ролевой удар, один на всю мафию за игру: "
        "угадали роль — игрок погибает, нет — погибает отправивший.\n"
        "Всегда: «!текст» — сообщение живой мафии."
    ),
    Role.COMMISSAR: (
        "Ночью одно из двух: «проверка N» (ответ «мафия» / «не мафия» придёт утром) или "
        "«выстрел N». Пропуск ночного действия штрафуется."
    ),
    Role.DOCTOR: (
        "Ночью: «лечу N» — можно себя, но не того, кого лечили прошлой ночью. Пропуск "
        "ночного действия штрафуется."
    ),
    Role.MANIAC: "Ночью: «выстрел N». Пропуск ночного действия штрафуется.",
    Role.CIVILIAN: "Ночью мирные жители спят: ночных команд у вас нет.",
}

_ITEM_HELP: dict[Item, str] = {
    Item.CLOCK: "«часы N» — остановить время игрока: его действия этой ночью не сработают.",
    Item.RED_BUTTON: "«кнопка N» — убить игрока.",
    Item.BOOK: "«книга N» — спасти игрока от выстрелов этой ночью, можно себя.",
}

_COMMON = (
    "Днём: «голос N» — в обсуждении игры или здесь (бот опубликует голос в обсуждении); "
    "голос можно менять до конца дня. С {day}-го дня «голос N досрочно» — окончательный голос. "
    "«подсчёт» — текущий подсчёт голосов.\n"
    "Игрока называйте номером места, именем или упоминанием.\n"
    "«статус» — что вы отправили и срок; кнопка «Действия» — кнопки для текущей фазы."
)

HELP_OUTSIDER = (
    "Я бот игры в мафию «Машина времени».\n"
    "• «+» или «участвую» — записаться в игру, в которую идёт набор (здесь или в теме "
    "набора);\n"
    "• «запас» — записаться в запас на замену;\n"
    "• «снимаюсь» — сняться до старта;\n"
    "• «статус» — где вы записаны."
)


def help_for(seat: Seat | None) -> str:
    """Help for this player's own role and item only."""
    if seat is None:
        return HELP_OUTSIDER
    game = seat.game
    if seat.number is None or not seat.role or game.status != "running":
        where = "в запасе" if seat.status == "reserve" else "в игру"
        return (f"Вы записаны {where} «{game.name}». Роль придёт сюда при старте. "
                "«снимаюсь» — сняться, «статус» — где вы записаны.")
    if not seat.alive:
        tail = ""
        if seat.role != Role.MAFIA:
            tail = " Когда ведущий откроет беседу зрителей, напишите «в ЗЗ»."
        return DEAD + tail
    role = Role(seat.role)
    parts = [f"Игра «{game.name}». Вы — {seat_label(seat.number, seat.name)}, {role.title}.",
             _ROLE_HELP[role]]
    if seat.item and not seat.item_used:
        parts.append(f"Предмет ({Item(seat.item).title}), один раз ночью: "
                     + _ITEM_HELP[Item(seat.item)])
    parts.append(_COMMON.format(day=EARLY_VOTE_FROM_DAY))
    return "\n\n".join(parts)


# --- «статус» --------------------------------------------------------------------------------


def _act_line(a: NightAction) -> str:
    guess = f", роль: {Role(a.guess).title.lower()}" if a.guess else ""
    return f"{ACT_TITLES[Act(a.act)]} — {seat_label(a.target.number, a.target.name)}{guess}"


def _phase_line(game: Game, phase: Phase | None, seat: Seat) -> str:
    if phase is None:
        return "Сейчас нет открытой фазы."
    if phase.kind == PhaseKind.DAY:
        return f"День {phase.number}, голосование до {when(phase.deadline, game.time_zone)}."
    if night_closed_to(phase, seat):
        return f"Ночь {phase.number} закрыта: ведущий подводит итоги."
    return f"Ночь {phase.number}, действия до {when(phase.deadline, game.time_zone)}."


def status_text(st: PlayerStatus) -> str:
    seat, game, phase = st.seat, st.seat.game, st.phase
    role = Role(seat.role)
    head = f"Игра «{game.name}». Вы — {seat_label(seat.number, seat.name)}, {role.title}."
    lines = [head]
    if seat.item:
        used = " (использован)" if seat.item_used else ""
        lines.append(f"Предмет: {Item(seat.item).title}{used}.")
    if seat.strikes:
        lines.append(f"Штрафов: {seat.strikes}. Второй штраф — исключение из игры.")
    if not seat.alive:
        lines.append("Вы выбыли из игры.")
        return "\n".join(lines)
    lines.append(_phase_line(game, phase, seat))
    if phase is None:
        return "\n".join(lines)
    if phase.kind == PhaseKind.DAY:
        if st.vote is None:
            lines.append("Вы ещё не голосовали.")
        else:
            early = " (досрочный, окончательный)" if st.vote.early else ""
            lines.append(f"Ваш голос: за {seat_label(st.vote.target.number, st.vote.target.name)}"
                         f"{early}.")
        return "\n".join(lines)
    if st.actions:
        lines.append("Вы отправили: " + "; ".join(_act_line(a) for a in st.actions) + ".")
    elif role is not Role.MAFIA and (role is not Role.CIVILIAN or seat.item):
        lines.append("Вы пока ничего не отправили.")
    if role is Role.MAFIA:
        lines.extend(_team_lines(st))
    return "\n".join(lines)


def _team_lines(st: PlayerStatus) -> list[str]:
    out = []
    shot = st.team_shot
    if shot is None:
        out.append("Выстрел мафии пока не выбран.")
    else:
        out.append(f"Выстрел мафии: {seat_label(shot.target.number, shot.target.name)} "
                   f"(отправил {seat_label(shot.actor.number, shot.actor.name)}).")
    strike = st.team_strike
    if strike is not None:
        out.append(f"Ролевой удар: {_act_line(strike).split(' — ', 1)[1]} "
                   f"(отправил {seat_label(strike.actor.number, strike.actor.name)}).")
    elif st.seat.game.role_strike_used:
        out.append("Ролевой удар мафии уже использован.")
    else:
        out.append("Ролевой удар не отправлен (один на игру).")
    if st.team:
        out.append("Живая мафия: " + ", ".join(seat_label(s.number, s.name) for s in st.team)
                   + ".")
    return out


def outsider_status(seats: Sequence[Seat]) -> str:
    if not seats:
        return NOT_SIGNED_UP
    lines = []
    for s in seats:
        where = "в запасе" if s.status == "reserve" else "записаны"
        state = {"recruiting": "идёт набор", "dealt": "роли розданы", "running": "идёт"}.get(
            s.game.status, s.game.status
        )
        lines.append(f"«{s.game.name}» ({state}): вы {where}.")
    return "\n".join(lines)


def signup_choice_label(game: Game) -> str:
    return f"Записаться: {game.name}"


NO_SPECTATOR_CHAT = "Беседа зрителей сейчас не открыта ни в одной вашей игре."


def chat_number(peer_id: int, game_name: str | None, *, added: bool) -> str:
    """The bot's answer in a chat it was added to (or asked «номер беседы» in): the chat's
    number in the community, which the GM types into the panel, and the admin reminder."""
    number = peer_id - 2_000_000_000
    lines = ["Спасибо, что добавили сообщество в беседу."] if added else []
    lines.append(f"Номер этой беседы для панели ведущего: {number} (peer_id {peer_id}).")
    if game_name:
        lines.append(f"Она привязана к игре «{game_name}» как беседа зрителей (ЗЗ).")
    else:
        lines.append(
            "Чтобы сделать её беседой зрителей (ЗЗ), откройте игру в панели ведущего → "
            f"вкладка «Беседа ЗЗ», впишите {number} в поле «Беседа» и нажмите «Привязать»."
        )
    lines.append(
        "Сообщество должно быть администратором беседы (настройки беседы → участники → "
        "сообщество → «Назначить администратором»): иначе бот не сможет выдавать "
        "ссылки-приглашения и удалять посторонних."
    )
    return "\n".join(lines)
