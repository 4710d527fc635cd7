"""What the GM reads about messages VK did not accept (moderation flags of kind ``delivery``).

Russian, short: one line per undelivered message, so that several failures to one player (or
in one topic) collect in one open flag.
"""

from __future__ import annotations

#: VK error codes the GM may meet, in the GM's words (VK.md; VKCOM/vk-api-schema errors.json).
REASONS: dict[int, str] = {
    5: "токен VK недействителен — сообщите администратору",
    6: "VK ограничил частоту запросов",
    7: "у сообщества нет прав на это действие",
    9: "VK ограничил число сообщений этому адресату (flood control)",
    10: "внутренняя ошибка VK",
    14: "VK требует капчу",
    15: "нет доступа: тема закрыта или удалена",
    27: "токен сообщества не подходит для этого действия — сообщите администратору",
    29: "исчерпан дневной лимит запросов VK",
    100: "VK отклонил параметры запроса",
    901: "игрок не разрешил сообщения от сообщества",
    902: "игрок запретил сообщения по настройкам приватности",
    911: "неверная клавиатура",
    914: "слишком длинный текст",
    917: "у сообщества нет доступа к беседе",
    919: "сообщество не видит ссылку-приглашение: оно не администратор беседы",
    925: "сообщество не администратор беседы",
    927: "беседы не существует",
    932: "сообщество не может писать этому адресату",
    935: "пользователя нет в беседе",
    936: "контакт не найден",
}


def reason(code: int | None, message: str) -> str:
    """A VK error in the GM's words, with VK's own text for the record."""
    if code is None:
        return f"VK не ответил ({message})"
    known = REASONS.get(code)
    return f"{known} (ошибка VK {code})" if known else f"ошибка VK {code}: {message}"


def gave_up(attempts: int, why: str) -> str:
    return f"{why}; попыток: {attempts}, отправка остановлена"


def message_failed(outbox_id: int, kind: str, why: str) -> str:
    what = f"«{kind}»" if kind else "без темы"
    return f"Сообщение №{outbox_id} ({what}) не доставлено: {why}. Повторить — в панели."


def board_failed(outbox_id: int, kind: str, topic_id: int | None, why: str) -> str:
    what = f"«{kind}»" if kind else "без темы"
    return (
        f"Пост №{outbox_id} ({what}) не опубликован в обсуждении {topic_id}: {why}. "
        "Повторить — в панели."
    )


def chat_action_failed(outbox_id: int, kind: str, why: str) -> str:
    what = f"«{kind}»" if kind else "без темы"
    return f"Действие в беседе №{outbox_id} ({what}) не выполнено: {why}. Повторить — в панели."


def chat_create_failed(outbox_id: int, title: str, why: str) -> str:
    """VK refused to create the spectator chat: nothing was created."""
    return (
        f"Беседа зрителей «{title}» (запрос №{outbox_id}) не создана: {why}. "
        "Создать заново — кнопка «Создать беседу» на вкладке «Беседа ЗЗ»."
    )


def chat_create_unknown(outbox_id: int, title: str, why: str) -> str:
    """The request to create the chat went out and its answer was lost: the chat may exist.
    It is not sent again, so that no second chat appears."""
    return (
        f"Неизвестно, создана ли беседа зрителей «{title}» (запрос №{outbox_id}): {why}. "
        "Повторно бот её не создаёт, чтобы не появилось двух бесед. Если беседа появилась у вас "
        "в VK — напишите в ней «номер беседы»: бот ответит номером для привязки. Если беседы "
        "нет — нажмите «Создать беседу» ещё раз."
    )


def chat_created_not_linked(outbox_id: int, chat_number: int, *, open_chat: bool) -> str:
    """The chat was created, but the game could not take it any more."""
    why = "беседа зрителей уже открыта" if open_chat else "игра завершена"
    return (
        f"Беседа зрителей создана (запрос №{outbox_id}, номер беседы {chat_number}), но не "
        f"привязана: {why}. Привязать её можно вручную по номеру {chat_number}."
    )
