"""Planning board posts (vkbot/delivery/board.py, through plan_round): merged comments, a
recorded group re-sent as recorded, long posts in pieces — pure."""

from __future__ import annotations

import pytest

from outbox.ids import board_guid
from tests.vkbot.delivery.plan_support import (
    no_offset,  # noqa: F401 (a fixture)
    post,
)
from vkbot.delivery.plan import plan_round
from vkbot.delivery.rows import MAX_COMMENT_LENGTH

pytestmark = pytest.mark.usefixtures("no_offset")


def test_board_posts_of_a_topic_merge_up_to_the_limit() -> None:
    rows = [post(1, "а" * 5000), post(2, "б" * 3000), post(3, "в" * 2000), post(4, "г", topic=6)]
    plan = plan_round(rows, group_id=42)
    comments = [
        (c.params["topic_id"], c.params["guid"], len(c.params["message"])) for c in plan.calls
    ]
    assert comments == [
        (5, board_guid(1), 8002),
        (5, board_guid(3), 2000),
        (6, board_guid(4), 1),
    ]
    assert plan.results[2]["board"] == {
        "guid": board_guid(1),
        "group": [1, 2],
        "parts": 1,
        "comments": {},
    }
    assert all(c.token == "user" and c.params["from_group"] == 1 for c in plan.calls)


def test_a_recorded_board_group_is_resent_as_recorded() -> None:
    record = {"guid": board_guid(1), "group": [1, 2], "parts": 1, "comments": {}}
    rows = [
        post(1, "Первый", result={"board": record}),
        post(2, "Второй", result={"board": record}),
        post(3, "Третий"),
    ]
    plan = plan_round(rows, group_id=42)
    assert [(c.params["guid"], c.params["message"]) for c in plan.calls] == [
        (board_guid(1), "Первый\n\nВторой"),
        (board_guid(3), "Третий"),
    ]
    incomplete = plan_round([post(1, "Первый", result={"board": record})], group_id=42)
    assert incomplete.calls == []  # never another text under a recorded comment's guid
    # The other member was sent or failed meanwhile: the comment is re-sent whole, for row 1.
    alone = plan_round(
        [post(1, "Первый", result={"board": record})], group_id=42, texts={2: "Второй"}
    )
    assert [(c.params["message"], c.row_ids) for c in alone.calls] == [("Первый\n\nВторой", (1,))]
    deleted = plan_round([post(1, "Первый", result={"board": record})], group_id=42, texts={2: ""})
    assert deleted.calls[0].params["message"] == "Первый"


def test_a_long_post_is_split_and_sent_piece_by_piece() -> None:
    text = "\n\n".join("абзац " * 300 for _ in range(8))
    plan = plan_round([post(1, text)], group_id=42)
    (call,) = plan.calls
    assert call.part == 0 and call.parts > 1 and call.params["guid"] == board_guid(1)
    assert len(call.params["message"]) <= MAX_COMMENT_LENGTH
    record = dict(plan.results[1]["board"], comments={"0": 77})
    nxt = plan_round([post(1, text, result={"board": record})], group_id=42)
    assert nxt.calls[0].part == 1 and nxt.calls[0].params["guid"] == f"{board_guid(1)}.1"


def test_board_posts_need_the_community_id() -> None:
    with pytest.raises(ValueError, match="VK_GROUP_ID"):
        plan_round([post(1, "x")], group_id=None)
