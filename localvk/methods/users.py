"""``users.get``: known users by name, anyone else with a generated Russian name."""

from __future__ import annotations

import re
from typing import Any

from ..errors import VKError
from .registry import CallContext, method

_SCREEN_ID = re.compile(r"^id(\d+)$")
MAX_USER_IDS = 1000


def _parse_user_id(item: str) -> int:
    text = item.strip()
    match = _SCREEN_ID.match(text)
    if match:
        text = match.group(1)
    try:
        user_id = int(text)
    except ValueError:
        raise VKError(113) from None
    if user_id <= 0:
        raise VKError(113)
    return user_id


@method("users.get")
def users_get(ctx: CallContext) -> list[dict[str, Any]]:
    raw = ctx.params.get_str("user_ids") or ctx.params.get_str("user_id")
    if raw is None:
        if ctx.user_id is None:
            return []
        ids = [ctx.user_id]
    else:
        ids = [_parse_user_id(part) for part in raw.split(",") if part.strip()]
        if len(ids) > MAX_USER_IDS:
            raise VKError(100, f"user_ids is too long, max {MAX_USER_IDS}")
    fields = {f.strip() for f in (ctx.params.get_str("fields") or "").split(",") if f.strip()}
    result = []
    for user_id in ids:
        user = ctx.state.user(user_id)
        data = user.to_vk()
        if "sex" in fields:
            data["sex"] = user.sex
        if "screen_name" in fields:
            data["screen_name"] = f"id{user_id}"
        if "domain" in fields:
            data["domain"] = f"id{user_id}"
        result.append(data)
    return result
