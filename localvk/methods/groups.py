"""``groups.getById`` and ``groups.getLongPollServer``."""

from __future__ import annotations

from typing import Any

from ..errors import VKError, param_error
from .registry import CallContext, check_group_id, method


def group_object(ctx: CallContext) -> dict[str, Any]:
    """The local community as VK describes a group."""
    state = ctx.state
    data: dict[str, Any] = {
        "id": state.group_id,
        "name": state.group_name,
        "screen_name": state.screen_name,
        "is_closed": 0,
        "type": "group",
        "photo_50": "https://vk.ru/images/community_50.png",
        "photo_100": "https://vk.ru/images/community_100.png",
        "photo_200": "https://vk.ru/images/community_200.png",
    }
    if not ctx.is_group:
        data.update(is_admin=1, admin_level=3, is_member=1)
    return data


@method("groups.getById")
def get_by_id(ctx: CallContext) -> dict[str, Any]:
    """Only the local community exists; ask for it by id, ``club<id>`` or its screen name."""
    params = ctx.params
    wanted: list[str] = []
    for name in ("group_ids", "group_id"):
        raw = params.get_str(name)
        if raw:
            wanted.extend(part.strip() for part in raw.split(",") if part.strip())
    if not wanted:
        if not ctx.is_group:
            raise param_error("group_ids is undefined")
        wanted = [str(ctx.state.group_id)]
    state = ctx.state
    aliases = {str(state.group_id), state.screen_name, f"club{state.group_id}"}
    for item in wanted:
        if item not in aliases:
            raise VKError(100, f"invalid group id {item}")
    return {"groups": [group_object(ctx)], "profiles": []}


@method("groups.getLongPollServer")
def get_long_poll_server(ctx: CallContext) -> dict[str, str]:
    """The Bots Long Poll server: this very server, ``<base>/lp/<group_id>``."""
    group_id = check_group_id(ctx, required=True)
    queue = ctx.state.longpoll
    return {
        "key": queue.current_key(),
        "server": f"{ctx.base_url}/lp/{group_id}",
        "ts": str(queue.ts),
    }
