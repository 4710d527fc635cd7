"""Typed refusals: every rule a submission can break is a ``RuleViolation`` subclass.

A refusal says *what* was refused, never how it is worded: the class (``code``) and the facts
the text needs (``params``, keyword arguments). Its Russian text lives in the texts' home,
``templates/messages/refusals/<text>.txt`` (``text`` defaults to the class name in snake case),
and ``reason`` renders it through the renderer the ``gameplay`` app installs at start-up
(:func:`use_texts`; the rules themselves import no Django). The text is what the player or
the GM reads: it names the rule and the next step and nothing more (a refusal must never
reveal another player's role or action). ``rule`` is the rule reference of docs/rules.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

#: Renders a refusal's text; installed by ``gameplay.apps`` (``gameplay.messages.refusal``).
_texts: Callable[[RuleViolation], str] | None = None


def use_texts(render: Callable[[RuleViolation], str]) -> None:
    """Install the renderer of refusal texts (the gameplay app does, at start-up)."""
    global _texts
    _texts = render


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RuleViolation(Exception):
    """A submission or command the rules refuse. Nothing changes when one is raised."""

    rule: ClassVar[str] = ""
    #: The name of its text under templates/messages/refusals/ (default: the class, snake case).
    text: ClassVar[str] = ""
    default_reason: ClassVar[str] = "Это действие не разрешено правилами."

    def __init__(self, reason: str | None = None, **params: Any) -> None:
        self._reason = reason
        self.params = params
        super().__init__(reason or self.code)

    @property
    def code(self) -> str:
        return type(self).__name__

    @classmethod
    def text_name(cls) -> str:
        """``refusals/<text>``: the template its text renders from."""
        return f"refusals/{cls.text or _snake(cls.__name__)}"

    @property
    def reason(self) -> str:
        """The Russian text a person reads."""
        if self._reason is not None:
            return self._reason
        if _texts is not None:
            return _texts(self)
        return self.default_reason


# --- who may act ---------------------------------------------------------------------------


class NotInGame(RuleViolation):
    rule = "V8"
    default_reason = "Вы не участвуете в этой игре. «статус» — где вы записаны."


class DeadCannotAct(RuleViolation):
    rule = "P7"
    default_reason = (
        "Вы выбыли из игры и больше не можете голосовать, действовать и пользоваться предметами."
    )


class PhaseNotOpen(RuleViolation):
    rule = "V7"
    default_reason = (
        "Сейчас приём закрыт: фаза уже завершена или ещё не началась. «статус» — какая фаза "
        "идёт и до какого срока."
    )


class WrongPhase(RuleViolation):
    rule = "§2"
    default_reason = (
        "Это действие сейчас невозможно: идёт другая фаза игры. Кнопка «Действия» — что можно "
        "отправить сейчас."
    )


class GameNotRunning(RuleViolation):
    rule = "§2"
    default_reason = "Игра сейчас не идёт. «статус» — где вы записаны."


# --- targets -------------------------------------------------------------------------------


class UnknownTarget(RuleViolation):
    rule = "V8"
    default_reason = "Такого игрока нет в игре. Укажите номер, имя или упоминание игрока."


class TargetNotAlive(RuleViolation):
    rule = "§4"
    default_reason = (
        "Цель должна быть живым игроком. Выберите другого: кнопка «Действия» покажет, кого можно."
    )


class SelfTargetForbidden(RuleViolation):
    rule = "§4"
    default_reason = (
        "Это действие нельзя направить на себя — выберите другого живого игрока: кнопка "
        "«Действия» покажет, кого можно."
    )


# --- day -----------------------------------------------------------------------------------


class SelfVote(RuleViolation):
    rule = "V1"


class VoteTargetNotAlive(RuleViolation):
    rule = "V1"
    default_reason = "Голосовать можно только за живого игрока — выберите другого: «голос N»."


class EarlyVoteFinal(RuleViolation):
    rule = "V6"
    default_reason = (
        "Ваш досрочный голос окончательный, изменить его нельзя: он будет учтён при закрытии "
        "дня. «подсчёт» — текущий подсчёт голосов."
    )


# --- night ---------------------------------------------------------------------------------


class ActionNotAvailable(RuleViolation):
    rule = "§4"
    default_reason = "У вашей роли нет такого действия. «помощь» — что может ваша роль."


class RoleStrikeUsed(RuleViolation):
    rule = "§4"
    default_reason = (
        "Ролевой удар мафии уже использован в этой игре. Остаётся выстрел мафии: «выстрел N»."
    )


class InvalidGuess(RuleViolation):
    rule = "§4"
    default_reason = (
        "В ролевом ударе можно назвать только роль: комиссар, доктор или маньяк. Например: "
        "«удар 5 доктор»."
    )


class HealRepeat(RuleViolation):
    rule = "§4"
    default_reason = (
        "Нельзя лечить того же игрока, которого вы лечили прошлой ночью — выберите другого: "
        "«лечу N» (можно себя, если вчера лечили не себя)."
    )


class ItemNotHeld(RuleViolation):
    rule = "§1"
    default_reason = "У вас нет этого предмета. «статус» — ваш предмет, если он есть."


class ItemSpent(RuleViolation):
    rule = "§1"
    default_reason = (
        "Этот предмет уже использован: он одноразовый. Кнопка «Действия» — что ещё можно отправить."
    )


# --- setup and GM commands ------------------------------------------------------------------


class SetupError(RuleViolation):
    rule = "§1"
    default_reason = "Настройки игры невозможны."


class NotEnoughPlayers(SetupError):
    default_reason = "Число игроков не совпадает с суммой ролей."


class InvalidCommand(RuleViolation):
    rule = "G1"
    default_reason = "Эта команда сейчас невозможна."
