"""What the GM's own commands (gameplay.services.gm) say to players and to the board, in Russian.

Kept apart from ``gameplay.texts`` (the foundation's messages) so that the panel's additions do
not touch it; the same style: short texts that players read on phones.
"""

from __future__ import annotations

from datetime import datetime

from gameplay.texts import when


def phase_title(kind: str, number: int) -> str:
    return f"{'День' if kind == 'day' else 'Ночь'} {number}"


def deadline_extended(kind: str, number: int, deadline: datetime | None, tz: str) -> str:
    what = "Голосование дня" if kind == "day" else "Приём ночных действий, ночь"
    return f"Ведущий продлил срок. {what} {number} — до {when(deadline, tz)}."


def spectator_chat_opened() -> str:
    return (
        "Ведущий открыл беседу зрителей (ЗЗ). Напишите «в ЗЗ», чтобы получить ссылку-приглашение."
    )


def spectator_chat_closed_public() -> str:
    return "Беседа зрителей закрыта ведущим: новые приглашения не выдаются."


def spectator_chat_opened_public() -> str:
    return "Беседа зрителей открыта. Выбывшие мирные игроки и маньяк могут написать боту «в ЗЗ»."


def spectator_chat_title(game_name: str) -> str:
    """The title of the spectator chat the community creates (VK allows long titles; a game's
    name is at most 200 characters)."""
    return f"ЗЗ — {game_name}"


# --- refusals to the GM: what belongs to another unfinished game ---------------------------

#: A sign-up or game topic that another unfinished game uses (as either).
TOPIC_TAKEN = (
    "В этой теме уже идёт другая игра: тема набора и тема игры принадлежат одной незавершённой "
    "игре. Выберите другую тему."
)
#: A spectator chat linked to another unfinished game.
SPECTATOR_CHAT_TAKEN = (
    "Эта беседа уже привязана к другой незавершённой игре: беседа зрителей принадлежит одной "
    "игре, пока та не завершится. Укажите другую беседу или создайте новую."
)
