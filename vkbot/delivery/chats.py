"""Invite links (``messages.getInviteLink``, once per chat for every invite waiting for it),
callback button answers, removals from a chat and created chats (``messages.createChat``, asked
at most once: see :mod:`vkbot.delivery.plan`). Pure."""

from __future__ import annotations

import json
from typing import Any

from gameplay.models import Outbox
from outbox.outcomes import Failure, Settlement
from outbox.results import CREATE_CHAT_ASKED, create_chat_unanswered

from .batch import Call
from .rows import Plan, finished, fresh_result, invalid, remaining


def plan_links(rows: list[Outbox], plan: Plan) -> None:
    by_chat: dict[int, list[int]] = {}
    for row in rows:
        chat = (row.payload or {}).get("chat_peer_id")
        if not isinstance(chat, int) or isinstance(chat, bool):
            plan.settled.append(invalid(row, "payload lacks chat_peer_id"))
            continue
        result = fresh_result(row, plan)
        if not remaining(row, result):
            plan.settled.append(finished(row, result))
            continue
        by_chat.setdefault(chat, []).append(row.pk)
    for chat, row_ids in by_chat.items():
        plan.calls.append(
            Call(
                token="group",
                method="messages.getInviteLink",
                params={"peer_id": chat},
                kind="link",
                row_ids=tuple(row_ids),
            )
        )


def plan_answer(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    try:
        params: dict[str, Any] = {
            "event_id": str(payload["event_id"]),
            "user_id": int(payload["user_id"]),
            "peer_id": int(payload["peer_id"]),
        }
    except (KeyError, TypeError, ValueError):
        plan.settled.append(invalid(row, "payload lacks event_id, user_id or peer_id"))
        return
    data = payload.get("event_data")
    if data:
        params["event_data"] = (
            data
            if isinstance(data, str)
            else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        )
    plan.calls.append(
        Call(
            token="group",
            method="messages.sendMessageEventAnswer",
            params=params,
            kind="answer",
            row_ids=(row.pk,),
        )
    )


def plan_kick(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    try:
        params = {"chat_id": int(payload["chat_id"]), "member_id": int(payload["member_id"])}
    except (KeyError, TypeError, ValueError):
        plan.settled.append(invalid(row, "payload lacks chat_id or member_id"))
        return
    plan.calls.append(
        Call(
            token="group",
            method="messages.removeChatUser",
            params=params,
            kind="kick",
            row_ids=(row.pk,),
        )
    )


def plan_create_chat(row: Outbox, plan: Plan) -> None:
    payload = row.payload or {}
    title = payload.get("title")
    users = payload.get("user_ids") or []
    if (
        not isinstance(title, str)
        or not title.strip()
        or not isinstance(users, list)
        or not all(isinstance(u, int) and not isinstance(u, bool) and u > 0 for u in users)
    ):
        plan.settled.append(invalid(row, "payload lacks a title or has bad user_ids"))
        return
    result = dict(row.result or {})
    if create_chat_unanswered(row):
        plan.settled.append(
            Settlement(
                row.pk,
                "failed",
                result=result,
                failure=Failure(None, "an earlier request got no answer: the chat may exist"),
            )
        )
        return
    result[CREATE_CHAT_ASKED] = True
    plan.results[row.pk] = result
    params: dict[str, Any] = {"title": title}
    if users:
        params["user_ids"] = ",".join(str(u) for u in users)
    plan.calls.append(
        Call(
            token="group",
            method="messages.createChat",
            params=params,
            kind="create_chat",
            row_ids=(row.pk,),
        )
    )
