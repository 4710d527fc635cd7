"""Russian names of the event log's actors and the deliveries' kinds (word tables, like a
model's choices; an entry's kind is named by ``EventKind``'s label), and the log's one-line
description of each entry — a sentence, so a template: ``templates/panel/log/<kind>.txt``."""

from __future__ import annotations

from typing import Any

from django.template import TemplateDoesNotExist

from gameplay import grammar
from gameplay.models import Actor, DeathCause, EventKind, GameEvent
from panel import flash

#: A seat's state for the player's gender (VK's ``sex``): male, female, and the neutral
#: wording when VK did not tell it.
STATES: dict[str, tuple[str, str, str]] = {
    "alive": ("жив", "жива", "в игре"),
    DeathCause.EXECUTED: ("казнён", "казнена", "казнь"),
    DeathCause.NIGHT: ("убит ночью", "убита ночью", "убийство ночью"),
    DeathCause.MODKILL: ("модкилл", "модкилл", "модкилл"),
    "": ("выбыл", "выбыла", "вне игры"),
}


def seat_state(seat: Any) -> str:
    """«жив»/«жива»/«в игре», or how the seat left the game: «казнена», «убит ночью»…"""
    key = "alive" if seat.alive else (seat.death_cause or "")
    return grammar.gendered(int(seat.sex or 0), *STATES.get(key, STATES[""]))


#: Actors that are not people (``GameEvent.actor``).
ACTOR_LABELS: dict[str, str] = {
    Actor.BOT: "бот",
    Actor.DEADLINE: "по сроку",
    Actor.REPLAY: "сценарий",
}


def actor_label(
    actor: str, seats: dict[int, str], vk_names: dict[int, str], gm_names: dict[str, str]
) -> str:
    """Who did it, as people: «ведущий Анна», «№15 Юлия Анисимова», «по сроку», «бот».

    ``seats`` maps seat numbers to names, ``vk_names`` VK user ids to names, ``gm_names``
    GM usernames to the names they go by."""
    who = Actor(actor or Actor.BOT)
    kind, value = who.kind, who.ref
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
    """The log's name of an entry's kind (``EventKind``'s label); an unknown kind as it is."""
    return EventKind(kind).label if kind in EventKind.values else kind


def chat_label(peer_id: int, title: str = "") -> str:
    """A VK chat as a GM knows it: by its title when known, else by its number in the
    community's chats («беседа №7»), never by its peer id."""
    return f"беседа «{title}»" if title else f"беседа №{peer_id - 2_000_000_000}"


#: Log kinds described by another kind's line (``templates/panel/log/<kind>.txt``).
_SAME_LINE = {
    "night_redrafted": "night_closed",
    "withdraw": "signup",
    "redeal": "deal",
    "spectator_chat_created": "spectator_chat_linked",
    "spectator_joined": "spectator_invited",
    "spectator_removed": "spectator_invited",
}


#: The facts a kind's line is made of that entries logged before it had a template lack; such
#: an old entry shows the sentence it stored instead (``summary``).
_FACTS = {
    "modkill": ("name",),
    "strike_manual": ("name",),
    "strike_forgiven": ("name",),
    "night_edited": ("number", "added", "removed"),
    "mafia_shot_reopened": ("number",),
}


def describe_event(event: GameEvent, vk_names: dict[int, str] | None = None) -> str:
    """A short Russian line for a log entry: ``templates/panel/log/<kind>.txt`` rendered with
    the entry's facts; ``vk_names`` names the VK users it mentions. A kind without a file
    shows the sentence the entry stored (``summary``: a deal round's board text), if any; so
    does an old entry logged before its kind's line, whose facts the line lacks."""
    d: dict[str, Any] = dict(event.data or {})
    stored = str(d.get("summary") or "")
    if stored and any(f not in d for f in _FACTS.get(event.kind, ())):
        return stored
    names: dict[Any, str] = vk_names or {}  # looked up by the entry's facts
    context = {
        "title": "",  # a filter's argument must exist
        **d,
        "override": event.override,
        "who": names.get(d.get("vk_user_id")) or "",
        "old": names.get(d.get("old_vk_user_id")) or "",
        "changed": sorted((d.get("changed") or {}).keys()),
    }
    kind = _SAME_LINE.get(event.kind, event.kind)
    try:
        return flash.render_line(f"panel/log/{kind}.txt", context)
    except TemplateDoesNotExist:
        return stored


#: What an Outbox row is about (``Outbox.kind``), for the deliveries page.
OUTBOX_KIND_LABELS: dict[str, str] = {
    "signup": "запись",
    "signup_list": "список записавшихся",
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
    "count_posted": "подсчёт опубликован",
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
