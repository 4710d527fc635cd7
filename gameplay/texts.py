"""Everything the services say to players and to the board, in Russian.

The story is the game's own (``original-rules.ru.txt``): a professor built a time machine, his
lab assistant and the assistant's daughter went missing, and the town hunts the mafia that
follows the travellers. Texts here are short: players read them on phones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from gameplay.rules import Act, Item, Role, Winner
from gameplay.rules.roles import ACT_TITLES

ROLE_CARDS: dict[Role, str] = {
    Role.MAFIA: (
        "Ваша роль — Мафия. Вы следите за путешественниками во времени и устраняете лишних "
        "свидетелей. Каждую ночь мафия делает один общий выстрел («выстрел N»), а один раз за "
        "игру — ролевой удар: назовите игрока и его роль (комиссар, доктор или маньяк); "
        "угадали — он погибает, ошиблись — погибаете вы. Сообщение, начатое с «!», услышит "
        "только живая мафия."
    ),
    Role.COMMISSAR: (
        "Ваша роль — Комиссар. Вы расследуете исчезновение ассистента профессора. Каждую ночь "
        "выберите одно: проверить игрока («проверка N») или выстрелить («выстрел N»). "
        "Пропуск ночного действия штрафуется."
    ),
    Role.DOCTOR: (
        "Ваша роль — Доктор. Каждую ночь вы лечите одного игрока («лечу N»), можно себя, но "
        "не того, кого лечили прошлой ночью. Пропуск ночного действия штрафуется."
    ),
    Role.CIVILIAN: (
        "Ваша роль — Мирный житель. Ночью вы спите, а днём голосуете в обсуждении и ищете "
        "мафию вместе с городом."
    ),
    Role.MANIAC: (
        "Ваша роль — Маньяк, безумный профессор. Вы играете сами за себя: каждую ночь "
        "стреляете в одного игрока («выстрел N»). Вы побеждаете, если в живых останетесь вы "
        "и не больше одного другого игрока. Пропуск ночного действия штрафуется."
    ),
}

ITEM_CARDS: dict[Item, str] = {
    Item.CLOCK: "«Старинные часы»: один раз ночью остановите время игрока — его действия "
    "этой ночью не сработают («часы N»).",
    Item.RED_BUTTON: "«Загадочная красная кнопка»: один раз ночью убейте игрока («кнопка N»).",
    Item.BOOK: "«Книга из будущего»: один раз ночью спасите игрока от выстрелов, можно себя "
    "(«книга N»).",
}


def seat_label(number: int | None, name: str) -> str:
    return f"№{number} {name}" if number else name


def when(dt: datetime | None, tz: str) -> str:
    if dt is None:
        return "решения ведущего"
    return dt.astimezone(ZoneInfo(tz)).strftime("%d.%m %H:%M")


# --- sign-up ---------------------------------------------------------------------------------


def signed_up(game_name: str, reserve: bool) -> str:
    if reserve:
        return f"Вы в запасе игры «{game_name}». Если понадобится замена, ведущий напишет вам."
    return f"Вы записаны в игру «{game_name}». Роль придёт в личные сообщения перед стартом."


def withdrawn(game_name: str) -> str:
    return f"Вы сняты с игры «{game_name}»."


# --- the rounds of the deal (gameplay/rules/deal.py) -------------------------------------------


def round_hash_line(number: int, commitment: str) -> str:
    return f"Раунд {number}: хеш зерна (SHA-256) {commitment}"


def signup_opened(game_name: str, commitment: str) -> str:
    """The board's post when sign-up opens: round 1's commitment, before anyone signs up."""
    return "\n".join(
        [
            f"Открыта запись в игру «{game_name}»: «+» в этой теме или в личные сообщения "
            "сообществу.",
            "",
            round_hash_line(1, commitment),
            "Зерно раздачи выбрал сервер, его не видит никто, ведущий тоже. Роли и предметы "
            "определяются этим зерном и составом игроков: тот же состав — та же раздача. "
            "Зерно будет опубликовано в конце игры.",
        ]
    )


def round_opened(game_name: str, number: int, commitment: str) -> str:
    """The board's post when the GM opens a new round (a new seed)."""
    return "\n".join(
        [
            f"Игра «{game_name}»: ведущий начал новый раунд раздачи — роли будут розданы из "
            "нового зерна.",
            round_hash_line(number, commitment),
            "Зёрна всех раундов будут опубликованы в конце игры, а это решение — в списке "
            "«Решения ведущего».",
        ]
    )


def deal_discarded_summary(deal_number: int, round_number: int, why: str) -> str:
    """The «Решения ведущего» line of a discarded deal."""
    return f"Раздача №{deal_number} (раунд {round_number}) отброшена: {why}."


def discarded_by_gm(vk_user_id: int) -> str:
    return f"ведущий снял игрока id{vk_user_id}"


def discarded_by_player(vk_user_id: int) -> str:
    return f"игрок id{vk_user_id} снялся сам"


def discarded_for_round(number: int) -> str:
    return f"ведущий начал раунд {number}"


def round_opened_summary(number: int, commitment: str) -> str:
    """The «Решения ведущего» line of a new round."""
    return f"Ведущий начал раунд {number} раздачи (новое зерно, хеш {commitment})."


ROUND_NOT_NEEDED = "Из зерна этого раунда ещё не раздавали: новый раунд не нужен, раздайте роли."
ALREADY_DEALT = (
    "Роли уже розданы. Тот же состав с тем же зерном даёт ту же раздачу; раздать заново "
    "можно только в новом раунде (решение ведущего, оно будет опубликовано)."
)
COUNTS_AFTER_DEAL = (
    "Из зерна этого раунда уже раздавали: состав ролей теперь меняется только вместе с новым "
    "раундом раздачи (решение ведущего, оно будет опубликовано)."
)


# --- start -----------------------------------------------------------------------------------


def role_card(
    game_name: str,
    number: int,
    role: Role,
    item: Item | None,
    mafia: Sequence[tuple[int, str]],
    commitment: str,
) -> str:
    parts = [f"Игра «{game_name}». Ваш номер: {number}.", ROLE_CARDS[role]]
    if role is Role.MAFIA and mafia:
        team = ", ".join(seat_label(n, name) for n, name in mafia)
        parts.append(f"Мафия: {team}.")
    if item is not None:
        parts.append(f"У вас предмет {ITEM_CARDS[item]} Предмет — дополнение к роли.")
    parts.append(f"Хеш раздачи: {commitment}")
    return "\n\n".join(parts)


def roster(
    game_name: str,
    seats: Iterable[tuple[int, str]],
    commitment: str,
    rounds: Sequence[tuple[int, str]] = (),
) -> str:
    """The start's post: the seats, every round's commitment and the hash of the deal."""
    lines = [f"Игра «{game_name}» начинается! Машина времени запущена.", "", "Состав:"]
    lines += [seat_label(n, name) for n, name in seats]
    lines.append("")
    if rounds:
        lines.append(
            f"Роли розданы из зерна раунда {rounds[-1][0]} и состава (места — по возрастанию "
            "VK id)."
        )
        lines += [round_hash_line(n, c) for n, c in rounds]
    lines += [
        f"Хеш раздачи (SHA-256): {commitment}",
        "В конце игры будут опубликованы зёрна — по ним любой может проверить раздачу.",
    ]
    return "\n".join(lines)


# --- phases ----------------------------------------------------------------------------------


def day_opened(number: int, deadline: datetime | None, tz: str) -> str:
    early = " Досрочный голос («голос N досрочно») окончательный." if number >= 3 else ""
    return (
        f"День {number}. Голосуйте в этой теме: «голос N», «голос: Имя» или упоминанием. "
        f"Голосование до {when(deadline, tz)}.{early}"
    )


def night_opened(number: int, deadline: datetime | None, tz: str) -> str:
    return (
        f"Ночь {number} наступила. Действия принимаются в личных сообщениях до "
        f"{when(deadline, tz)}."
    )


def night_prompt(number: int, role: Role, deadline: datetime | None, tz: str) -> str:
    how = {
        Role.MAFIA: "Выстрел мафии: «выстрел N». Ролевой удар: «удар N комиссар».",
        Role.COMMISSAR: "«проверка N» или «выстрел N».",
        Role.DOCTOR: "«лечу N».",
        Role.MANIAC: "«выстрел N».",
    }.get(role, "")
    return f"Ночь {number}. {how} Срок — до {when(deadline, tz)}. «статус» — что вы отправили."


def item_prompt(item: Item) -> str:
    return f"У вас есть {ITEM_CARDS[item]}"


# --- day -------------------------------------------------------------------------------------


def vote_posted(voter: str, target: str, early: bool) -> str:
    return f"{voter} голосует за {target}{' (досрочно)' if early else ''}."


def vote_accepted(target: str, early: bool, early_ignored: bool) -> str:
    if early_ignored:
        return (
            f"Ваш голос за {target} принят как обычный: досрочные голоса действуют с третьего "
            "дня. До закрытия дня его можно изменить."
        )
    if early:
        return f"Ваш досрочный голос за {target} принят. Изменить его нельзя."
    return f"Ваш голос за {target} принят. До закрытия дня его можно изменить."


def vote_voided(target: str) -> str:
    return f"{target} выбыл из игры, ваш голос за него отменён. Вы можете проголосовать заново."


def day_result(
    number: int,
    tally: dict[int, int],
    names: dict[int, str],
    executed: int | None,
    executed_role: Role | None,
    penalties: dict[int, int],
    modkilled: Sequence[tuple[int, Role]],
    early: bool,
) -> str:
    lines = [f"Итоги дня {number}{' (закрыт досрочно)' if early else ''}."]
    for seat, role in modkilled:
        lines.append(f"{seat_label(seat, names[seat])} выбывает (модкилл). Роль: {role.title}.")
    for seat, votes in penalties.items():
        lines.append(f"{seat_label(seat, names[seat])}: +{votes} штрафных голоса.")
    if tally:
        lines.append("Голоса:")
        for seat, votes in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"{seat_label(seat, names[seat])} — {votes}")
    if executed is not None and executed_role is not None:
        lines.append(
            f"Казнён {seat_label(executed, names[executed])}. Роль: {executed_role.title}."
        )
    else:
        lines.append("Ничья: никто не покидает город.")
    return "\n".join(lines)


# --- night -----------------------------------------------------------------------------------


def action_accepted(act: Act, target: str, guess: Role | None) -> str:
    what = ACT_TITLES[act]
    extra = f", роль: {guess.title.lower()}" if guess else ""
    return f"Принято: {what} — {target}{extra}. До закрытия ночи можно изменить."


def mafia_shot_update(sender: str, target: str) -> str:
    return f"Выстрел мафии: {target} (отправил {sender})."


def check_result(number: int, target: str, is_mafia: bool) -> str:
    return f"Ночь {number}, проверка: {target} — {'мафия' if is_mafia else 'не мафия'}."


def night_result(
    number: int,
    deaths: Sequence[tuple[int, str, Role | None]],
    modkilled: Sequence[tuple[int, str, Role]],
    penalties: Sequence[tuple[int, str]],
) -> str:
    lines = [f"Утро после ночи {number}."]
    if deaths:
        for n, name, role in deaths:
            role_txt = f" Роль: {role.title}." if role else ""
            lines.append(f"Этой ночью погиб {seat_label(n, name)}.{role_txt}")
    else:
        lines.append("Этой ночью никто не погиб.")
    for n, name, role in modkilled:
        lines.append(f"{seat_label(n, name)} выбывает (модкилл). Роль: {role.title}.")
    for n, name in penalties:
        lines.append(f"{seat_label(n, name)}: +2 штрафных голоса в сегодняшнем голосовании.")
    return "\n".join(lines)


def you_died() -> str:
    return (
        "Вы выбыли из игры. Спасибо за игру! Действовать и голосовать больше нельзя; "
        "когда ведущий откроет беседу зрителей, напишите «в ЗЗ»."
    )


def mafia_reopened(number: int) -> str:
    return (
        f"Ведущий вновь открыл выстрел мафии в ночь {number}: пришлите выстрел заново "
        "(«выстрел N»)."
    )


# --- discipline ------------------------------------------------------------------------------


def modkilled_public(seat: str, role: Role) -> str:
    return f"{seat} выбывает из игры (модкилл). Роль: {role.title}."


def modkilled_private(reason: str) -> str:
    return f"Ведущий исключил вас из игры. Причина: {reason}" if reason else you_died()


def replaced_public(number: int, old: str, new: str) -> str:
    return f"Замена: место №{number} ({old}) занимает {new}."


def replaced_old(game_name: str) -> str:
    return f"Ваше место в игре «{game_name}» передано другому игроку. Спасибо за игру!"


def penalty_public(seat: str, votes: int, day: int) -> str:
    return f"{seat}: +{votes} штрафных голоса в голосовании дня {day}."


def strike_why(reason: str, number: int, note: str = "") -> str:
    """What a strike is for (``Strike.reason``), as the struck player is told."""
    if reason == "missed_vote":
        return f"вы не проголосовали в день {number}"
    if reason == "missed_action":
        return f"вы не прислали ночное действие в ночь {number}"
    return f"штраф ведущего{': ' + note if note else ''}"


def struck_private(why: str, votes: int, day: int, *, counted: bool) -> str:
    """A first strike, told to the struck player privately (RULES.md §6)."""
    where = (f"они уже учтены в подсчёте дня {day}" if counted
             else f"они добавятся в подсчёт дня {day}")
    return (
        f"Вам штраф: {why}. Первый штраф — это +{votes} голоса против вас ({where}); в теме "
        "объявлено только число голосов, без причины. Следующий штраф — модкилл: вы выбудете "
        "из игры, а ваша роль будет раскрыта."
    )


def struck_out_private(why: str) -> str:
    """A second strike: the player is modkilled (RULES.md §6)."""
    return (
        f"Второй штраф: {why}. Второй штраф — это модкилл: вы выбываете из игры, ваша роль "
        "раскрыта в теме."
    )


# --- the end ---------------------------------------------------------------------------------


def game_cancelled(game_name: str, reason: str, rounds: Sequence[tuple[int, str, str]]) -> str:
    """The board's post when a game is cancelled before its start: the rounds' seeds too."""
    lines = [f"Игра «{game_name}» отменена ведущим до начала.{f' {reason}' if reason else ''}"]
    lines += ["", "Раунды раздачи (хеш зерна опубликован при открытии раунда):"]
    lines += [f"Раунд {n}: хеш {c}, зерно {s}" for n, c, s in rounds]
    return "\n".join(lines)


def game_over(
    game_name: str,
    winner: Winner | None,
    seats: Sequence[tuple[int, str, Role, Item | None, bool]],
    night_log: Sequence[str],
    overrides: Sequence[str],
    seed: str,
    commitment: str,
    counts: str = "",
    rounds: Sequence[tuple[int, str, str]] = (),
    roster: Sequence[int] = (),
    from_seed: bool = True,
) -> str:
    head = f"Победа: {winner.title}!" if winner else "Игра остановлена ведущим."
    lines = [f"Игра «{game_name}» окончена. {head}", "", "Роли:"]
    for n, name, role, item, _alive in seats:
        item_txt = f", {item.title}" if item else ""
        lines.append(f"{seat_label(n, name)} — {role.title}{item_txt}")
    if night_log:
        lines += ["", "Ночные действия:", *night_log]
    if overrides:
        lines += ["", "Решения ведущего:", *overrides]
    if not rounds:  # a game dealt before rounds existed (v1: the seed alone)
        lines += [
            "",
            f"Зерно раздачи: {seed}",
            f"Хеш, опубликованный на старте: {commitment}",
            f"Проверка раздачи: python manage.py verify {seed} {commitment} {counts}".rstrip(),
        ]
        return "\n".join(lines)
    lines += ["", "Раунды раздачи (хеш зерна опубликован при открытии раунда):"]
    lines += [f"Раунд {n}: хеш {c}, зерно {s}" for n, c, s in rounds]
    lines += [
        f"Зерно раздачи: {seed} (раунд {rounds[-1][0]})",
        f"Хеш, опубликованный на старте: {commitment}",
    ]
    if not from_seed:
        lines.append("Раздача задана вручную (сценарий), из зерна её не проверить.")
        return "\n".join(lines)
    chain = " ".join(f"--round {n}:{c}:{s}" for n, c, s in rounds)
    ids = ",".join(str(v) for v in roster)
    lines += [
        f"VK id по местам: {ids}",
        f"Проверка раздачи: python manage.py verify {chain} --roster {ids} --deal {commitment} "
        f"{counts}".rstrip(),
    ]
    return "\n".join(lines)
