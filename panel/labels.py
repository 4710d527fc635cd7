"""Russian names of the event log's entries and a one-line description of each, for the GM."""

from __future__ import annotations

from typing import Any

from gameplay.models import GameEvent
from gameplay.rules import Act, Role, Winner
from gameplay.rules.roles import ACT_TITLES, ROLE_TITLES

EVENT_LABELS: dict[str, str] = {
    "game_created": "Игра создана",
    "settings_changed": "Настройки изменены",
    "gms_changed": "Состав ведущих",
    "signup": "Запись",
    "withdraw": "Снятие",
    "deal": "Раздача ролей",
    "redeal": "Перераздача",
    "deal_fixed": "Раздача задана вручную",
    "deal_discarded": "Раздача отброшена",
    "deal_round_opened": "Раунд раздачи открыт",
    "game_started": "Старт игры",
    "phase_opened": "Фаза открыта",
    "vote": "Голос",
    "day_closed": "День закрыт",
    "night_action": "Ночное действие",
    "night_closed": "Ночь закрыта",
    "night_redrafted": "Ночь пересчитана",
    "night_edited": "Правка ночи",
    "mafia_shot_reopened": "Выстрел мафии открыт заново",
    "night_published": "Итоги ночи",
    "alert_no_mafia_shot": "Мафия не стреляла",
    "modkill": "Модкилл",
    "replace": "Замена",
    "strike_manual": "Штраф ведущего",
    "strike_forgiven": "Штраф прощён",
    "deadline_extended": "Срок продлён",
    "reminder_sent": "Напоминание",
    "deadline_failed": "Сбой закрытия по сроку",
    "spectator_chat_linked": "Беседа ЗЗ привязана",
    "spectator_chat_create_requested": "Запрошено создание беседы ЗЗ",
    "spectator_chat_created": "Беседа ЗЗ создана сообществом",
    "spectator_chat_opened": "Беседа ЗЗ открыта",
    "spectator_chat_closed": "Беседа ЗЗ закрыта",
    "flag_resolved": "Отметка рассмотрена",
    "outbox_retry": "Повтор доставки",
    "outbox_retried": "Повтор доставки",
    "mafia_relay": "Переписка мафии",
    "spectator_invited": "Ссылка в беседу ЗЗ",
    "spectator_joined": "Вступил в беседу ЗЗ",
    "spectator_removed": "Удалён из беседы ЗЗ",
    "game_finished": "Игра завершена",
    "game_cancelled": "Игра отменена",
}


#: Actors that are not people (``GameEvent.actor``).
ACTOR_LABELS: dict[str, str] = {
    "system": "бот",
    "deadline": "по сроку",
    "replay": "сценарий",
}


def actor_label(actor: str, seats: dict[int, str], vk_names: dict[int, str],
                gm_names: dict[str, str]) -> str:
    """Who did it, as people: «ведущий Анна», «№15 Юлия Анисимова», «по сроку», «бот».

    ``seats`` maps seat numbers to names, ``vk_names`` VK user ids to names, ``gm_names``
    GM usernames to the names they go by."""
    kind, _, value = (actor or "system").partition(":")
    if not value:
        return ACTOR_LABELS.get(kind, kind)
    if kind == "gm":
        return f"ведущий {gm_names.get(value) or value}"
    if kind == "seat" and value.isdigit():
        name = seats.get(int(value))
        return f"№{value} {name}" if name else f"игрок №{value}"
    if kind == "vk" and value.isdigit():
        return vk_names.get(int(value)) or "пользователь VK"
    return actor


def event_label(kind: str) -> str:
    return EVENT_LABELS.get(kind, kind)


def _n(value: Any) -> str:
    return f"№{value}" if value not in (None, "") else "—"


def _list(values: Any) -> str:
    return ", ".join(_n(v) for v in values or []) or "никто"


def chat_label(peer_id: int, title: str = "") -> str:
    """A VK chat as a GM knows it: by its title when known, else by its number in the
    community's chats («беседа №7»), never by its peer id."""
    return f"беседа «{title}»" if title else f"беседа №{peer_id - 2_000_000_000}"


def describe_event(event: GameEvent, vk_names: dict[int, str] | None = None) -> str:
    """A short Russian line for a log entry; ``vk_names`` names the VK users it mentions."""
    d: dict[str, Any] = event.data or {}
    k = event.kind
    if d.get("summary"):
        return str(d["summary"])
    if k == "vote":
        early = " (досрочно)" if d.get("early") else ""
        return f"{_n(d.get('voter'))} → {_n(d.get('target'))}{early}"
    if k == "night_action":
        try:
            act = ACT_TITLES[Act(d.get("act"))]
        except ValueError:
            act = str(d.get("act"))
        guess = f" ({ROLE_TITLES[Role(d['guess'])].lower()})" if d.get("guess") else ""
        return f"{_n(d.get('actor'))}: {act} → {_n(d.get('target'))}{guess}"
    if k == "day_closed":
        executed = d.get("executed")
        return ("досрочно; " if d.get("early") else "") + (
            f"казнён {_n(executed)}" if executed else "никто не казнён"
        )
    if k in ("night_closed", "night_redrafted"):
        return f"черновик: погибают {_list((d.get('draft') or {}).get('deaths'))}"
    if k == "night_published":
        return f"погибли: {_list(d.get('deaths'))}"
    if k == "phase_opened":
        return f"{'День' if d.get('phase_kind') == 'day' else 'Ночь'} {d.get('number')}"
    if k in ("signup", "withdraw"):
        extra = " (запас)" if d.get("reserve") else ""
        name = d.get("name") or (vk_names or {}).get(d.get("vk_user_id")) or "игрок"
        return f"{name}{extra}"
    if k == "replace":
        old = (vk_names or {}).get(d.get("old_vk_user_id")) or "прежний игрок"
        return f"{_n(d.get('seat'))}: {old} → {d.get('name')}"
    if k in ("deal", "redeal"):
        seed_round = f" из зерна раунда {d['seed_round']}" if d.get("seed_round") else ""
        return f"раздача №{d.get('deal_round')}{seed_round}, попыток: {len(d.get('draws') or [])}"
    if k == "deal_round_opened":
        return f"раунд {d.get('round')}, хеш зерна {d.get('commitment')}"
    if k == "game_finished":
        winner = d.get("winner")
        return f"победа: {Winner(winner).title}" if winner else "без победителя"
    if k == "deadline_extended":
        return f"+{d.get('minutes')} мин"
    if k == "reminder_sent":
        return f"кому: {_list(d.get('seats'))}"
    if k == "flag_resolved":
        return f"{d.get('status')}: {d.get('note', '')}".strip(": ")
    if k == "mafia_relay":
        return f"{_n(d.get('seat'))}: {d.get('text', '')}"
    if k in ("spectator_chat_linked", "spectator_chat_created") and d.get("peer_id"):
        return chat_label(int(d["peer_id"]), d.get("title") or "")
    if k == "spectator_chat_create_requested":
        return f"«{d.get('title', '')}»"
    if k in ("spectator_invited", "spectator_joined", "spectator_removed"):
        who = (vk_names or {}).get(d.get("vk_user_id")) or "пользователь VK"
        return who + (f": {d['reason']}" if d.get("reason") else "")
    if k == "settings_changed":
        return ", ".join(sorted((d.get("changed") or {}).keys()))
    if k == "gms_changed":
        return ", ".join(d.get("gms") or [])
    return ""


#: What an Outbox row is about (``Outbox.kind``), for the deliveries page.
OUTBOX_KIND_LABELS: dict[str, str] = {
    "signup": "запись",
    "withdraw": "снятие",
    "role_card": "карточка роли",
    "roster": "состав игры",
    "deal_round": "раунд раздачи",
    "day_opened": "начало дня",
    "night_opened": "начало ночи",
    "night_prompt": "ночной запрос",
    "vote": "голос в теме",
    "vote_echo": "голос принят",
    "vote_voided": "голос аннулирован",
    "day_result": "итоги дня",
    "action_echo": "действие принято",
    "mafia_shot": "выстрел мафии",
    "mafia_strike": "ролевой удар",
    "mafia_reopened": "выстрел открыт заново",
    "mafia_relay": "переписка мафии",
    "mafia_relay_sent": "переписка мафии",
    "check_result": "результат проверки",
    "night_result": "итоги ночи",
    "you_died": "выбывание",
    "modkill": "модкилл",
    "replaced": "замена",
    "replace": "замена",
    "penalty": "штраф",
    "strike": "штраф игроку",
    "game_over": "конец игры",
    "game_cancelled": "отмена игры",
    "reminder": "напоминание",
    "deadline_extended": "продление срока",
    "spectators": "беседа ЗЗ",
    "spectator_invite": "приглашение в ЗЗ",
    "intruder_removed": "удаление из ЗЗ",
    "spectator_chat_create": "создание беседы ЗЗ",
    "chat_number": "номер беседы",
    "event_answer": "ответ на кнопку",
    "board_reply": "ответ в теме",
    "day_prompt": "кнопки голосования",
    "vote_page": "кнопки голосования",
    "vote_refused": "голос не принят",
    "vote_count": "подсчёт голосов",
    "night_page": "ночные кнопки",
    "signup_choice": "запись",
    "status": "статус",
    "help": "помощь",
    "menu": "меню",
    "refusal": "отказ",
    "internal_error": "сбой бота",
}


def outbox_kind_label(kind: str) -> str:
    return OUTBOX_KIND_LABELS.get(kind, kind or "—")


def login_locked_out(minutes: int) -> str:
    """The admin login's answer while django-axes holds a user name locked out."""
    return (
        f"Слишком много неудачных попыток входа. Вход для этого имени с этого адреса закрыт "
        f"на {minutes} мин. Подождите и попробуйте снова; если забыли пароль, попросите "
        f"администратора сайта его сбросить."
    )
