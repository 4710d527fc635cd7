"""Typed refusals (gameplay.rules.errors): each class has its Russian text in the texts' home,
``templates/messages/refusals/<name>.txt``, and reads it as ``reason`` and ``str()``."""

from __future__ import annotations

import inspect

import pytest

from gameplay import messages
from gameplay.rules import errors
from gameplay.rules.errors import RosterSizeMismatch, RuleViolation, SelfVote

CLASSES = [
    c
    for _, c in inspect.getmembers(errors, inspect.isclass)
    if issubclass(c, RuleViolation) and c.__module__ == errors.__name__
]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_refusal_of_the_rules_has_its_own_text(cls: type[RuleViolation]):
    assert cls.text_name() in messages.names()
    assert "default_reason" not in vars(cls)


def test_reason_renders_the_text_with_the_params():
    err = RosterSizeMismatch(players=5, roles=6)
    assert err.reason == "В составе 5 игроков, а ролей в настройках: 6."
    assert str(err) == err.reason
    assert err.code == "RosterSizeMismatch"


def test_a_reason_given_by_hand_wins():
    assert SelfVote("Иначе.").reason == "Иначе."


def test_a_subclass_without_a_text_reads_its_parents():
    class Unworded(errors.InvalidCommand):
        pass

    assert Unworded().reason == errors.InvalidCommand().reason
    assert Unworded().reason.startswith("Эта команда сейчас невозможна.")


def test_without_texts_installed_a_refusal_names_its_class(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(errors, "_texts", None)
    assert SelfVote().reason == "SelfVote"
