"""Nothing learnt from the logs: at INFO, through a game's start (the role
cards), a night (actions in private messages, the mafia's relay), a handler's crash and the
delivery of it all to VK, no log record holds what anybody wrote or was sent."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from gameplay.models import Outbox
from localvk import RunningServer
from tests.vkbot.bot_support import make_game, pm, to_night
from tests.vkbot.delivery_support import deliver, vk_fixture  # noqa: F401 (the ``vk`` fixture)
from vkbot import pipeline, updates
from vkbot.handlers import night as night_handlers

pytestmark = pytest.mark.django_db

#: What players send: a check, a heal, the mafia's relay, and a text that crashes a handler.
SENT = {
    1003: "проверка 5",
    1004: "лечу Борис",
    1001: "!ночью стреляем в Глеба, днём молчим",
    1005: "выстрел 3",
}
CRASHING = "выстрел 7 тайное слово"


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every record at INFO and above, with its traceback; the local VK test server's own
    records left out (it stands in for VK, whose logs are not ours)."""
    formatter = logging.Formatter()
    out = []
    for record in caplog.records:
        if record.levelno < logging.INFO or record.name.startswith("localvk"):
            continue
        out.append(record.getMessage())
        if record.exc_info:
            out.append(formatter.formatException(record.exc_info))
    return "\n".join(out)


def test_no_log_record_holds_a_message_text(
    vk: RunningServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    topic = vk.state.create_topic("Машина времени")
    game = make_game(topic_id=topic.id)
    to_night(game)
    for vk_id, text in SENT.items():
        assert pipeline.apply_update(pm(vk_id, text), source=pipeline.LONGPOLL)

    original = night_handlers.from_text

    def crash(sender: Any, cmd: Any) -> None:
        if cmd.target is not None and cmd.target.number == 7:
            raise RuntimeError("a bug")
        original(sender, cmd)

    monkeypatch.setattr(night_handlers, "from_text", crash)
    assert pipeline.apply_update(pm(1002, CRASHING), source=pipeline.LONGPOLL)
    report = deliver()

    assert report.sent
    written = list(SENT.values()) + [CRASHING]
    sent = list(Outbox.objects.filter(game=game).values_list("text", flat=True))
    cards = list(Outbox.objects.filter(game=game, kind="role_card").values_list("text", flat=True))
    assert cards and any("днём молчим" in t for t in sent)  # the relay went out
    log = logged(caplog)
    assert "The handler failed on VK event" in log  # the crash is logged, its text is not
    for text in written + [t for t in sent if len(t) > 12]:
        assert text not in log, text
    assert "тайное слово" not in log and "днём молчим" not in log


def test_the_redacted_dump_keeps_the_shape_and_drops_the_words() -> None:
    update = pm(1003, "проверка 5")
    update["object"]["message"]["attachments"] = [{"type": "wall", "wall": {"text": "секрет"}}]

    dumped = updates.dump(update)

    assert "проверка" not in dumped and "секрет" not in dumped
    assert '"text": "<10 chars>"' in dumped and '"from_id": 1003' in dumped
