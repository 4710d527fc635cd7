"""Every refusal a player can get says what to do instead, not only what is wrong.

Which refusals a player can get: the rules' refusals of play (``gameplay.rules.errors``, all but
the game-settings branch ``SetupError``, which only the GM meets), the refusals of play of the
services (``gameplay.refusals.play``, but ``NoOpenPhase``: the GM's reminder), the ones the bot's
sign-up, withdrawal, relay and vote count raise (listed below, with the bot's own
``AmbiguousTarget``), and the bot's own refusal messages under ``templates/messages/player/``.

What counts as a way forward, read from the rendered text:

- a command or a button the bot understands, in «…»: its first word is the first word of a
  command the players' help texts quote («голос N», «статус», «+»), or a button's label
  («Действия»); a quoted role or item name does not count;
- or a polite imperative, the form a text uses to tell a person what to do («напишите»,
  «выберите», «дождитесь», «обратитесь»: a word ending in -ите/-йте/-ьте, with -сь);
- or a link.

A text that only restates the rule («Голосовать можно только за живого игрока.») passes none.
"""

from __future__ import annotations

import re

import pytest

import gameplay.refusals as refusals
from gameplay import messages
from gameplay.messages import Person, render
from gameplay.rules import errors
from gameplay.selectors.bot import AmbiguousTarget
from tests.gameplay.test_messages import CASES, people

#: The refusals of the bot's sign-up, withdrawal, relay and vote count (gameplay.services).
BOT_COMMAND_REFUSALS = [
    refusals.AlreadySignedUp,
    refusals.NotSignedUp,
    refusals.RecruitmentClosed,
    refusals.SignupClosed,
    refusals.WithdrawTooLate,
    refusals.RelayEmpty,
    refusals.CountNotDay,
    refusals.CountTooSoon,
    AmbiguousTarget,
]
#: The bot's own refusal messages (vkbot answers with them).
PLAYER_REFUSAL_MESSAGES = [
    f"player/{name}"
    for name in (
        "unknown_command",
        "not_playing",
        "not_started",
        "several_games",
        "no_recruitment",
        "no_reserve",
        "not_signed_up",
        "bad_button",
        "no_night_actions",
        "nothing_to_do",
        "empty_message",
        "no_spectator_chat",
        "internal_error",
        "withdrawn",
    )
]
IMPERATIVE = re.compile(r"\b[а-яё]+(?:ите|йте|ьте)(?:сь)?\b", re.I)
QUOTED = re.compile(r"«([^»]+)»")
URL = re.compile(r"https?://\S+")


def _subclasses(root: type) -> list[type]:
    out = []
    for c in root.__subclasses__():
        out += [c, *_subclasses(c)]
    return out


def player_refusal_texts() -> list[str]:
    rules = [
        c
        for c in vars(errors).values()
        if isinstance(c, type)
        and issubclass(c, errors.RuleViolation)
        and not issubclass(c, errors.SetupError)
        and c.__module__ == errors.__name__
    ]
    play = [
        getattr(refusals.play, n)
        for n in dir(refusals.play)
        if isinstance(getattr(refusals.play, n), type)
        and issubclass(getattr(refusals.play, n), errors.RuleViolation)
        and getattr(refusals.play, n).__module__ == refusals.play.__name__
        and n != "NoOpenPhase"
    ]
    names = {c.text_name() for c in [*rules, *play, *BOT_COMMAND_REFUSALS]}
    names = {n for n in names if n in messages.names()} | set(PLAYER_REFUSAL_MESSAGES)
    assert len(names) > 40
    return sorted(names)


def commands() -> tuple[set[str], set[str]]:
    """(first words of the commands the help texts quote, the buttons' labels)."""
    words: set[str] = set()
    for name in (
        "player/help",
        "player/help_outsider",
        "player/help_signed_up",
        "player/help_dead",
    ):
        for ctx in CASES[name](people(0)):
            for q in QUOTED.findall(render(name, **ctx)):
                words.add(q.split()[0].lower().lstrip("!") or q)
    words -= {"мафия", "не"}  # «мафия» / «не мафия»: the answers of a check, not commands
    labels = {render("player/button", **ctx).lower() for ctx in CASES["player/button"](people(0))}
    return words, labels


def way_forward(text: str, words: set[str], labels: set[str]) -> bool:
    if IMPERATIVE.search(text) or URL.search(text):
        return True
    for q in QUOTED.findall(text):
        first = q.split()[0].lower().lstrip("!") if q.split() else ""
        if first in words or q.lower() in labels or q.startswith("!"):
            return True
    return False


def test_the_criterion_tells_a_way_forward_from_a_restated_rule() -> None:
    words, labels = commands()
    assert {"голос", "статус", "+", "снимаюсь", "выстрел"} <= words and "действия" in labels
    assert way_forward("Голосовать за себя нельзя: «голос N».", words, labels)
    assert way_forward("Дождитесь итогов ночи.", words, labels)
    assert way_forward("Кнопка «Действия» пришлёт свежие.", words, labels)
    assert not way_forward("Эта команда сейчас невозможна.", words, labels)
    assert not way_forward("Голосовать можно только за живого игрока.", words, labels)
    assert not way_forward("Предмет «Старинные часы» уже использован.", words, labels)


@pytest.mark.parametrize("name", player_refusal_texts())
def test_every_refusal_a_player_can_get_says_what_to_do(name: str) -> None:
    words, labels = commands()
    contexts = CASES[name](people(0)) if name in CASES else [{}]
    if name == AmbiguousTarget.text_name():
        contexts = [{"players": [Person(3, "Вера"), Person(8, "Вера Павлова")]}]
    for ctx in contexts:
        text = render(name, **ctx)
        assert way_forward(text, words, labels), text
