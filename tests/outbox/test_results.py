"""outbox.results: reading a row's ``result`` (a chat request that may have reached VK, the
rows of one board comment)."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay.models import Outbox, OutboxChannel
from outbox.results import CREATE_CHAT_ASKED, board_group, create_chat_unanswered


def chat_row(result: dict[str, Any] | None) -> Outbox:
    return Outbox(channel=OutboxChannel.CREATE_CHAT, text="ЗЗ", result=result)


@pytest.mark.parametrize(
    ("result", "unanswered"),
    [
        (None, False),
        ({}, False),
        ({CREATE_CHAT_ASKED: False}, False),
        ({CREATE_CHAT_ASKED: True}, True),
        ({CREATE_CHAT_ASKED: True, "chat_id": 0}, True),
        ({CREATE_CHAT_ASKED: True, "chat_id": 12, "peer_id": 2_000_000_012}, False),
    ],
)
def test_a_chat_request_is_unanswered_when_asked_and_no_chat_came_back(
    result: dict[str, Any] | None, unanswered: bool
) -> None:
    assert create_chat_unanswered(chat_row(result)) is unanswered


@pytest.mark.parametrize(
    ("result", "group"),
    [
        (None, []),
        ({"board": {}}, []),
        ({"board": {"guid": "g", "group": None}}, []),
        ({"board": {"group": [7, "8", 9]}}, [7, 8, 9]),
    ],
)
def test_board_group_lists_the_rows_of_one_comment_as_ids(
    result: dict[str, Any] | None, group: list[int]
) -> None:
    row = Outbox(channel=OutboxChannel.BOARD, text="пост", result=result)
    assert board_group(row) == group
