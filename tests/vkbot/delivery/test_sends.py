"""Planning private messages (vkbot/delivery/sends.py, through plan_round): grouping under
one random_id, pins, chunking, pieces, and the keyboard a row stores rendered for VK — pure, no
database or network."""

from __future__ import annotations

import json

import pytest

from gameplay.buttons import Payload, targets_keyboard
from gameplay.models import OutboxChannel
from outbox.results import EDIT
from tests.vkbot.delivery.plan_support import (
    no_offset,  # noqa: F401 (a fixture)
    row,
    sends,
)
from vkbot import keyboards
from vkbot.delivery.plan import plan_round
from vkbot.delivery.rows import part_random_id

pytestmark = pytest.mark.usefixtures("no_offset")


# --- grouping -------------------------------------------------------------------------------------


def test_same_text_to_different_players_is_one_send_under_the_lowest_row_id() -> None:
    rows = [row(10, [1, 2], "Ночь"), row(11, [3], "Ночь"), row(12, [4], "День")]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Ночь", "1,2,3", 10), ("День", "4", 12)]
    assert {pk: r["random_id"] for pk, r in plan.results.items()} == {10: 10, 11: 10, 12: 12}
    assert plan.calls[0].targets == ((10, 1), (10, 2), (11, 3))


def test_rows_sharing_a_player_are_never_merged() -> None:
    rows = [row(10, [1, 2], "Напоминание"), row(11, [2, 3], "Напоминание")]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Напоминание", "1,2", 10), ("Напоминание", "2,3", 11)]


def test_different_keyboards_or_channels_are_not_merged() -> None:
    keyboard = {"one_time": True, "buttons": []}
    rows = [
        row(1, [1], "Ваш ход", keyboard=keyboard),
        row(2, [2], "Ваш ход"),
        row(3, [2_000_000_001], "Ваш ход", channel=OutboxChannel.CHAT),
    ]
    plan = plan_round(rows, group_id=1)
    assert [c.params["random_id"] for c in plan.calls] == [1, 2, 3]
    assert json.loads(plan.calls[0].params["keyboard"]) == keyboard
    assert "keyboard" not in plan.calls[1].params
    assert plan.calls[2].params["peer_id"] == 2_000_000_001  # a chat: peer_id, not peer_ids
    assert "peer_ids" not in plan.calls[2].params


def test_a_recorded_random_id_is_kept_and_only_new_rows_are_grouped() -> None:
    rows = [
        row(5, [1], "Текст", result={"random_id": 3, "sent": {}}),  # grouped with row 3 before
        row(6, [2], "Текст"),
        row(7, [9], "Текст"),
    ]
    plan = plan_round(rows, group_id=1)
    assert sends(plan.calls) == [("Текст", "1", 3), ("Текст", "2,9", 6)]
    assert set(plan.results) == {6, 7}  # row 5 has nothing new to record


def test_delivered_and_refused_recipients_are_not_sent_again() -> None:
    done = row(
        1,
        [1, 2, 3],
        "Итоги",
        result={"random_id": 1, "sent": {"1": 4}, "failed": {"2": "VK error 901: x"}},
        attempts=2,  # its second claim
    )
    finished = row(2, [1], "Старое", result={"random_id": 2, "sent": {"1": 5}}, attempts=2)
    plan = plan_round([done, finished], group_id=1)
    assert sends(plan.calls) == [("Итоги", "3", 1)]
    assert [(s.outbox_id, s.outcome) for s in plan.settled] == [(2, "sent")]


def test_a_row_requeued_from_scratch_tries_its_refused_recipients_again() -> None:
    refused = {"random_id": 1, "sent": {"1": 4}, "failed": {"2": "VK error 901: x"}}
    retried = row(1, [1, 2], "Итоги", result=refused, attempts=1)  # attempts reset, claimed
    plan = plan_round([retried], group_id=1)
    assert sends(plan.calls) == [("Итоги", "2", 1)]
    assert plan.results[1] == {"random_id": 1, "sent": {"1": 4}}  # recorded before the send
    again = plan_round([row(1, [1, 2], "Итоги", result=refused, attempts=3)], group_id=1)
    assert again.calls == [] and again.settled[0].outcome == "sent"


def test_more_than_100_recipients_are_chunked_under_one_random_id() -> None:
    plan = plan_round([row(1, list(range(1, 251)), "Всем")], group_id=1)
    assert [len(c.params["peer_ids"].split(",")) for c in plan.calls] == [100, 100, 50]
    assert {c.params["random_id"] for c in plan.calls} == {1}


def test_a_long_message_goes_in_pieces_with_their_own_random_ids() -> None:
    text = "\n".join(f"строка {n:04d}" for n in range(1500))  # ~18 000 characters
    plan = plan_round([row(1, [1, 2], text, keyboard={"buttons": []})], group_id=1)
    (call,) = plan.calls
    assert call.part == 0 and call.parts == 2 and call.params["random_id"] == 1
    assert "keyboard" not in call.params  # the keyboard rides on the last piece
    later = plan_round(
        [
            row(
                1,
                [1, 2],
                text,
                keyboard={"buttons": []},
                result={"random_id": 1, "progress": {"1": 1}},
            )
        ],
        group_id=1,
    )
    assert sorted((c.part, c.params["random_id"]) for c in later.calls) == [
        (0, 1),
        (1, part_random_id(1, 1)),
    ]
    assert "keyboard" in next(c for c in later.calls if c.part == 1).params


# --- keyboards ------------------------------------------------------------------------------------


def test_the_stored_buttons_go_out_as_vk_json_and_old_rows_as_they_are() -> None:
    """A row's buttons (gameplay.buttons) are rendered for VK at delivery; a row written before
    that (still pending at the upgrade: VK's JSON in ``keyboard``) goes out with its keyboard
    unchanged — the same ``keyboard`` parameter, so the two even share one send."""
    stored = targets_keyboard([(1, "Аня"), (2, "Боря")], Payload("vote", game=3, phase=4))
    old = keyboards.of_row(stored)
    assert "rows" in stored and old is not None and "buttons" in old
    plan = plan_round(
        [row(1, [11], "Голосуйте", keyboard=stored), row(2, [12], "Голосуйте", keyboard=old),
         row(3, [13], "Голосуйте", keyboard=json.loads(json.dumps(old)))],
        group_id=1,
    )  # fmt: skip
    (call,) = plan.calls
    assert call.params["peer_ids"] == "11,12,13"
    assert call.params["keyboard"] == json.dumps(
        old, ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )
    assert json.loads(call.params["keyboard"])["buttons"][0][1]["action"] == {
        "type": "callback", "label": "№2 Боря", "payload": '{"g":3,"p":4,"a":"vote","t":2}'
    }  # fmt: skip
    edit = row(4, [11], "Страница 2", keyboard=stored, payload={EDIT: {
        "peer_id": 11, "conversation_message_id": 7}})  # fmt: skip
    (edit_call,) = plan_round([edit], group_id=1).calls
    assert edit_call.method == "messages.edit"
    assert edit_call.params["keyboard"] == call.params["keyboard"]
