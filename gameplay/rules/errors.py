"""Typed refusals: every rule a submission can break is a ``RuleViolation`` subclass.

``reason`` is what the player reads (Russian, names the rule and nothing more: a refusal must
never reveal another player's role or action). ``rule`` is the RULES.md reference.
"""

from __future__ import annotations


class RuleViolation(Exception):
    """A submission or command the rules refuse. Nothing changes when one is raised."""

    rule: str = ""
    default_reason: str = "Это действие не разрешено правилами."

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or self.default_reason
        super().__init__(self.reason)

    @property
    def code(self) -> str:
        return type(self).__name__


# --- who may act ---------------------------------------------------------------------------


class NotInGame(RuleViolation):
    rule = "V8"
    default_reason = "Вы не участвуете в этой игре."


class DeadCannotAct(RuleViolation):
    rule = "P7"
    default_reason = (
        "Вы выбыли из игры и больше не можете голосовать, действовать и пользоваться предметами."
    )


class PhaseNotOpen(RuleViolation):
    rule = "V7"
    default_reason = "Сейчас приём закрыт: фаза уже завершена или ещё не началась."


class WrongPhase(RuleViolation):
    rule = "§2"
    default_reason = "Это действие сейчас невозможно: идёт другая фаза игры."


class GameNotRunning(RuleViolation):
    rule = "§2"
    default_reason = "Игра сейчас не идёт."


# --- targets -------------------------------------------------------------------------------


class UnknownTarget(RuleViolation):
    rule = "V8"
    default_reason = "Такого игрока нет в игре. Укажите номер, имя или упоминание игрока."


class TargetNotAlive(RuleViolation):
    rule = "§4"
    default_reason = "Цель должна быть живым игроком."


class SelfTargetForbidden(RuleViolation):
    rule = "§4"
    default_reason = "Это действие нельзя направить на себя."


# --- day -----------------------------------------------------------------------------------


class SelfVote(RuleViolation):
    rule = "V1"
    default_reason = "Голосовать за себя нельзя."


class VoteTargetNotAlive(RuleViolation):
    rule = "V1"
    default_reason = "Голосовать можно только за живого игрока."


class EarlyVoteFinal(RuleViolation):
    rule = "V6"
    default_reason = "Ваш досрочный голос окончательный, изменить его нельзя."


# --- night ---------------------------------------------------------------------------------


class ActionNotAvailable(RuleViolation):
    rule = "§4"
    default_reason = "У вашей роли нет такого действия."


class RoleStrikeUsed(RuleViolation):
    rule = "§4"
    default_reason = "Ролевой удар мафии уже использован в этой игре."


class InvalidGuess(RuleViolation):
    rule = "§4"
    default_reason = "В ролевом ударе можно назвать только роль: комиссар, доктор или маньяк."


class HealRepeat(RuleViolation):
    rule = "§4"
    default_reason = "Нельзя лечить того же игрока, которого вы лечили прошлой ночью."


class ItemNotHeld(RuleViolation):
    rule = "§1"
    default_reason = "У вас нет этого предмета."


class ItemSpent(RuleViolation):
    rule = "§1"
    default_reason = "Этот предмет уже использован."


# --- setup and GM commands ------------------------------------------------------------------


class SetupError(RuleViolation):
    rule = "§1"
    default_reason = "Настройки игры невозможны."


class NotEnoughPlayers(SetupError):
    default_reason = "Число игроков не совпадает с суммой ролей."


class InvalidCommand(RuleViolation):
    rule = "G1"
    default_reason = "Эта команда сейчас невозможна."
