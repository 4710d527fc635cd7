"""Board posts: the posts waiting for one topic merged into one comment (``board.createComment``
under a ``guid`` recorded before the call; a longer text in pieces), a recorded comment re-sent
whole. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from gameplay.models import Outbox
from outbox.ids import board_guid
from outbox.outcomes import Settlement
from outbox.results import board_group

from .batch import Call
from .rows import COMMENT_SEPARATOR, MAX_COMMENT_LENGTH, Plan, part_guid, split_text


def board_text(members: Sequence[Outbox]) -> str:
    """The comment a group of posts makes: their texts in order, a blank line between."""
    return COMMENT_SEPARATOR.join(m.text for m in sorted(members, key=lambda m: m.pk))


def plan_board(
    rows: list[Outbox], plan: Plan, group_id: int | None, others: Mapping[int, str]
) -> None:
    if not rows:
        return
    if group_id is None:
        raise ValueError("board posts need the community's id (VK_GROUP_ID)")
    by_id = {row.pk: row for row in rows}
    grouped: dict[str, list[Outbox]] = {}
    loose: dict[int, list[Outbox]] = {}
    for row in rows:
        if board_group(row):
            guid = str(cast("dict[str, Any]", row.result)["board"]["guid"])  # a grouped row's
            grouped.setdefault(guid, []).append(row)
        else:
            loose.setdefault(int(row.topic_id or 0), []).append(row)
    for topic_rows in loose.values():
        for members in _merge_posts(topic_rows):
            record: dict[str, Any] = {
                "guid": board_guid(members[0].pk),
                "group": [m.pk for m in members],
                "parts": len(split_text(board_text(members), MAX_COMMENT_LENGTH)),
                "comments": {},
            }
            for member in members:
                result = dict(member.result or {})
                result["board"] = dict(record)
                member_result = plan.results.setdefault(member.pk, result)
                member_result["board"] = dict(record)
            grouped[record["guid"]] = members
    for guid, members in sorted(grouped.items(), key=lambda item: item[1][0].pk):
        texts = {m.pk: m.text for m in members}
        for pk in _group_of(members[0], plan):
            if pk not in by_id and pk in others:
                texts[pk] = others[pk]
        if any(pk not in texts for pk in _group_of(members[0], plan)):
            continue  # the comment's text is not all known: never send another text under its guid
        record = _board_record(members[0], plan)
        comment = COMMENT_SEPARATOR.join(texts[pk] for pk in sorted(texts) if texts[pk])
        parts = split_text(comment, MAX_COMMENT_LENGTH)
        done = record.get("comments") or {}
        part = next((i for i in range(len(parts)) if str(i) not in done), None)
        if part is None:
            for member in members:
                plan.settled.append(Settlement(member.pk, "sent", result=_result_of(member, plan)))
            continue
        plan.calls.append(
            Call(
                token="user",
                method="board.createComment",
                params={
                    "group_id": group_id,
                    "topic_id": int(members[0].topic_id or 0),
                    "message": parts[part],
                    "from_group": 1,
                    "guid": part_guid(guid, part),
                },
                kind="board",
                row_ids=tuple(m.pk for m in sorted(members, key=lambda m: m.pk)),
                part=part,
                parts=len(parts),
            )
        )


def _merge_posts(rows: list[Outbox]) -> list[list[Outbox]]:
    """Consecutive posts of one topic, as long as their comment stays within the limit."""
    groups: list[list[Outbox]] = []
    size = 0
    for row in rows:
        extra = len(row.text) + (len(COMMENT_SEPARATOR) if groups and groups[-1] else 0)
        if groups and groups[-1] and size + extra <= MAX_COMMENT_LENGTH:
            groups[-1].append(row)
            size += extra
        else:
            groups.append([row])
            size = len(row.text)
    return groups


def _result_of(row: Outbox, plan: Plan) -> dict[str, Any]:
    return plan.results.get(row.pk) or dict(row.result or {})


def _board_record(row: Outbox, plan: Plan) -> dict[str, Any]:
    return dict(_result_of(row, plan).get("board") or {})


def _group_of(row: Outbox, plan: Plan) -> list[int]:
    return [int(pk) for pk in _board_record(row, plan).get("group") or ()]
