"""Button pages edit the message they page: a «▶» press on a target page is
answered by ``messages.edit`` of that message, through the Outbox and the delivery, against the
local VK over HTTP; when VK refuses the edit (909: the message is too old) a new message is
sent instead. The bot's handlers run on the ``message_event`` the local VK made."""

from __future__ import annotations

import pytest

from gameplay.buttons import decode
from gameplay.models import Outbox, OutboxStatus
from localvk import RunningServer
from localvk.models import Message
from outbox.results import EDIT, EDIT_REFUSED
from tests.vkbot.bot_support import make_game, roles_26, run, to_night
from tests.vkbot.delivery_support import (
    deliver,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.keyboards import labels_of, of_row, payloads_of

pytestmark = pytest.mark.django_db

MAFIA = 1001


def shot_prompt(vk: RunningServer) -> Message:
    return next(m for m in vk.state.sent_messages(MAFIA) if "Выстрел мафии" in m.text)


def press_next(vk: RunningServer, message: Message) -> list[Outbox]:
    """Press «▶» on the message in the local VK and run the bot on the event it makes."""
    assert message.keyboard is not None
    [button] = [
        b for row in message.keyboard["buttons"] for b in row if b["action"]["label"] == "▶"
    ]
    update = vk.state.inject_message_event(
        MAFIA,
        decode(button["action"]["payload"]).encode(),
        conversation_message_id=message.conversation_message_id,
    )
    return run(
        {
            "type": "message_event",
            "object": update["object"],
            "group_id": 77,
            "event_id": "e1",
            "v": "5.199",
        }
    )


def test_next_page_edits_the_prompt_in_place(vk: RunningServer) -> None:
    game = make_game(roles_26())
    to_night(game)
    deliver()
    prompt = shot_prompt(vk)
    first = [p.target for p in payloads_of(prompt.keyboard) if p.target]
    sent_before = len(vk.state.sent_messages(MAFIA))

    rows = press_next(vk, prompt)
    [page] = [r for r in rows if r.kind == "night_page"]
    assert page.payload == {
        EDIT: {"peer_id": MAFIA, "conversation_message_id": prompt.conversation_message_id}
    }
    deliver()

    page.refresh_from_db()
    assert page.result is not None
    assert page.status == OutboxStatus.SENT and EDIT_REFUSED not in page.result
    assert len(vk.state.sent_messages(MAFIA)) == sent_before  # no new message
    assert prompt.update_time is not None and prompt.text == page.text
    second = [p.target for p in payloads_of(prompt.keyboard) if p.target]
    assert second and not set(second) & set(first) and "◀" in labels_of(prompt.keyboard)
    [edit] = vk.state.calls("messages.edit")
    # Named both ways, agreeing: VK's 5.199 schema says ``cmid``, dev.vk.com the older name.
    message = str(prompt.conversation_message_id)
    assert edit.params["cmid"] == edit.params["conversation_message_id"] == message


def test_a_refused_edit_falls_back_to_a_new_message(vk: RunningServer) -> None:
    game = make_game(roles_26())
    to_night(game)
    deliver()
    prompt = shot_prompt(vk)
    prompt.date -= 2 * 24 * 3600  # sent two days ago: VK no longer lets it be edited
    text, keyboard = prompt.text, prompt.keyboard
    sent_before = len(vk.state.sent_messages(MAFIA))

    [page] = [r for r in press_next(vk, prompt) if r.kind == "night_page"]
    deliver()

    page.refresh_from_db()
    assert page.result is not None
    assert page.status == OutboxStatus.SENT and page.result[EDIT_REFUSED] == 909
    assert (prompt.text, prompt.keyboard) == (text, keyboard)  # untouched
    new = vk.state.sent_messages(MAFIA)[sent_before:]
    assert [m.text for m in new] == [page.text] and new[0].keyboard == of_row(page.keyboard)
