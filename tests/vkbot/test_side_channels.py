"""Nothing learnt from side channels, in the bot: while the GM has
re-opened only the mafia's shot (G2), a player outside the mafia gets, to anything they send or
press, exactly the answer they got while the night was under review; the mafia alone hear of
the re-open."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.buttons import Payload
from gameplay.models import Actor, NightAction, Outbox
from gameplay.refusals import NightReopenedForMafiaShot, NightUnderReview
from tests.vkbot.bot_support import make_game, phase, pm, press, run, to_night, to_user
from vkbot.keyboards import payloads_of

pytestmark = pytest.mark.django_db

OUTSIDERS = (3, 4, 5, 6, 7)  # commissar, doctor, maniac, two civilians with items
TEXTS = [
    "проверка 2",
    "выстрел 2",
    "лечу 2",
    "удар 2 доктор",
    "часы 2",
    "кнопка 2",
    "книга 2",
    "проверка",
    "лечу",
    "статус",
    "Действия",
    "!стреляем во 2",
    "привет",
]


def answers(game: Any, buttons: dict[int, list[Payload]]) -> dict[tuple[int, str], list[str]]:
    """What each outsider is told for each text and each of their night buttons."""
    night = phase(game)
    seen: dict[tuple[int, str], list[str]] = {}
    for number in OUTSIDERS:
        vk = 1000 + number
        extra = [Payload(a, game=game.pk, phase=night.pk) for a in ("check", "heal", "book")]
        extra += [Payload(a, game=game.pk, phase=night.pk, target=2) for a in ("check", "heal")]
        for text in TEXTS:
            seen[number, text] = [o.text for o in to_user(run(pm(vk, text)), vk)]
        for payload in buttons[number] + extra:
            out = to_user(run(press(vk, payload.encode())), vk)
            seen[number, payload.encode()] = [o.text for o in out]
    return seen


def test_a_reopen_of_the_mafia_shot_answers_everyone_else_as_the_review_did() -> None:
    game = make_game()
    to_night(game)
    buttons = {
        n: [
            p
            for o in Outbox.objects.filter(game=game, kind="night_prompt")
            if 1000 + n in o.peer_ids
            for p in payloads_of(o.keyboard)
        ]
        for n in OUTSIDERS
    }
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    in_review = answers(game, buttons)

    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"), reason="раскрытие")
    reopened = answers(game, buttons)

    assert reopened == in_review
    assert in_review[3, "проверка 2"] == [NightUnderReview().reason]
    everything = "\n".join(t for texts in reopened.values() for t in texts)
    assert "заново" not in everything and "выстрел мафии" not in everything
    assert not NightAction.objects.filter(phase__game=game, actor__number__in=OUTSIDERS).exists()


def test_the_mafia_alone_may_send_again_and_is_told_why_anything_else_is_refused() -> None:
    game = make_game()
    to_night(game)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"), reason="раскрытие")

    refused = to_user(run(pm(1001, "часы 3")), 1001)
    shot = to_user(run(pm(1002, "выстрел 5")), 1002)
    status = to_user(run(pm(1002, "статус")), 1002)

    assert [o.text for o in refused] == [NightReopenedForMafiaShot().reason]
    assert shot[0].text.startswith("Принято")
    assert "действия до" in status[0].text
    assert NightAction.objects.filter(phase__game=game, act="mafia_shot", current=True).count() == 1
