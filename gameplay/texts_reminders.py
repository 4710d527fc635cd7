"""What players read in deadline reminders, and the GM's refusals around them (Russian)."""

from __future__ import annotations

from datetime import datetime, timedelta

from gameplay.texts import when


def closes_in(left: timedelta) -> str:
    """``через 3 ч``, ``через 1 ч 30 мин``, ``через 45 мин`` or ``менее чем через минуту``
    (rounded down to whole minutes)."""
    minutes = max(0, int(left.total_seconds()) // 60)
    if minutes == 0:
        return "менее чем через минуту"
    hours, minutes = divmod(minutes, 60)
    parts = ([f"{hours} ч"] if hours else []) + ([f"{minutes} мин"] if minutes else [])
    return "через " + " ".join(parts)


def _closes(deadline: datetime | None, now: datetime, tz: str) -> str:
    if deadline is None:
        return "закроется по решению ведущего"
    return f"закроется {closes_in(deadline - now)} (срок — {when(deadline, tz)})"


def day_reminder(number: int, deadline: datetime | None, now: datetime, tz: str) -> str:
    return (
        f"Напоминание: голосование дня {number} {_closes(deadline, now, tz)}, а вашего голоса "
        "ещё нет. Напишите «голос N» в теме игры или боту в личные сообщения. Пропуск "
        "голосования штрафуется."
    )


def night_reminder(number: int, deadline: datetime | None, now: datetime, tz: str) -> str:
    return (
        f"Напоминание: ночь {number} {_closes(deadline, now, tz)}, а ваше ночное действие ещё "
        "не получено. Пришлите его боту в личные сообщения; «статус» — что вы уже отправили."
    )


NO_OPEN_PHASE = "Сейчас нет открытой фазы: напоминать не о чем."
NOBODY_TO_REMIND = "Напоминать некому: все живые игроки уже сделали ход."


def reminded_recently(seconds: int) -> str:
    return (
        f"Напоминание уже отправлено {seconds} с назад. Повторить можно через минуту после "
        "предыдущего."
    )
