"""``groups.*``: the community itself (``getById``, ``getTokenPermissions``), its Bots Long
Poll server and settings, its Callback API servers and its messages/bot settings — what a
community admin's "connect" flow calls. The settings methods need the community token's
``manage`` right (error 15 without it); ``getLongPollServer`` takes any community token."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..community_settings import BOT_SETTINGS, EVENT_TYPES, LongPollSettings, events_object
from ..errors import VKError, param_error
from ..longpoll import API_VERSION
from ..scopes import token_permissions
from .registry import CallContext, check_group_id, method

if TYPE_CHECKING:
    from ..state import LocalVK

MANAGE = "manage"
MAX_SERVER_TITLE = 14
MAX_SECRET_KEY = 50
MAX_URL = 255


def group_object(ctx: CallContext, state: LocalVK | None = None) -> dict[str, Any]:
    """A hosted community (the call's, unless ``state``) as VK describes a group; for a user
    token with whether its user administers it."""
    state = state or ctx.state
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
        admin = state.is_admin(ctx.user_id)
        data.update(is_admin=int(admin), is_member=int(admin))
        if admin:
            data["admin_level"] = 3
    return data


def _hosted(ctx: CallContext) -> list[LocalVK]:
    if ctx.communities is None:
        return [ctx.state]
    return list(ctx.communities)


@method("groups.getById")
def get_by_id(ctx: CallContext) -> dict[str, Any]:
    """Hosted communities by id, ``club<id>`` or screen name (``group_ids`` or ``group_id``;
    a community token without them: its own community). ``fields`` are accepted."""
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
    hosted = _hosted(ctx)
    groups = []
    for item in dict.fromkeys(wanted):
        state = next(
            (s for s in hosted if item in (str(s.group_id), s.screen_name, f"club{s.group_id}")),
            None,
        )
        if state is None:
            raise VKError(100, f"invalid group id {item}")
        groups.append(group_object(ctx, state))
    return {"groups": groups, "profiles": []}


@method("groups.getTokenPermissions")
def get_token_permissions(ctx: CallContext) -> dict[str, Any]:
    """The community token's rights: ``{"mask", "permissions": [{"setting", "name"}]}``."""
    if not ctx.is_group:
        raise VKError(15, "this method is available only with group auth")
    return token_permissions(ctx.scopes)


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


def _event_flags(ctx: CallContext, current: frozenset[str]) -> frozenset[str]:
    """The event types after a ``set…Settings``: the flags given change, the others stay."""
    enabled = set(current)
    for name in EVENT_TYPES:
        if ctx.params.has(name):
            if ctx.params.get_bool(name):
                enabled.add(name)
            else:
                enabled.discard(name)
    return frozenset(enabled)


def _api_version(ctx: CallContext, current: str) -> str:
    version = ctx.params.get_str("api_version", max_length=10)
    if version is None or version == "":
        return current
    try:
        major, minor = (int(part) for part in version.split(".", 1))
    except ValueError:
        raise param_error("api_version is invalid") from None
    if (major, minor) < (5, 50):
        raise param_error("api_version is invalid")
    return version


@method("groups.getLongPollSettings", scope=MANAGE)
def get_long_poll_settings(ctx: CallContext) -> dict[str, Any]:
    check_group_id(ctx, required=True)
    return ctx.state.settings.longpoll_view()


@method("groups.setLongPollSettings", scope=MANAGE)
def set_long_poll_settings(ctx: CallContext) -> int:
    """``enabled``, ``api_version`` and event flags; the flags left out keep their value (a
    community's first set starts from disabled with no events)."""
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        current = state.settings.longpoll or LongPollSettings(False, API_VERSION, frozenset())
        enabled = ctx.params.get_bool("enabled", default=current.enabled)
        state.settings.longpoll = LongPollSettings(
            enabled, _api_version(ctx, current.api_version), _event_flags(ctx, current.events)
        )
    return 1


@method("groups.getCallbackConfirmationCode", scope=MANAGE)
def get_callback_confirmation_code(ctx: CallContext) -> dict[str, str]:
    check_group_id(ctx, required=True)
    return {"code": ctx.state.settings.confirmation_code}


def _server_url(ctx: CallContext) -> str:
    url = ctx.params.req_str("url", max_length=MAX_URL)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise param_error("url is invalid")
    return url


@method("groups.addCallbackServer", scope=MANAGE)
def add_callback_server(ctx: CallContext) -> dict[str, int]:
    """A Callback API server (``url``, ``title`` ≤ 14 characters, ``secret_key`` ≤ 50): the
    community's pusher now posts to it (its confirmation first; the events ticked with
    ``setCallbackSettings``, none until then)."""
    check_group_id(ctx, required=True)
    url = _server_url(ctx)
    title = ctx.params.req_str("title", max_length=MAX_SERVER_TITLE)
    secret = ctx.params.get_str("secret_key", max_length=MAX_SECRET_KEY) or ""
    state = ctx.state
    with state.lock:
        try:
            server = state.settings.add_server(title, url, secret, ctx.user_id or 0)
        except ValueError:
            raise VKError(2000, message="Servers number limit is reached") from None
        state.apply_callback_servers()
    return {"server_id": server.id}


def _server_id(ctx: CallContext) -> int:
    server_id = ctx.params.req_int("server_id", minimum=1)
    if ctx.state.settings.server(server_id) is None:
        raise param_error("server_id is invalid")
    return server_id


@method("groups.getCallbackServers", scope=MANAGE)
def get_callback_servers(ctx: CallContext) -> dict[str, Any]:
    check_group_id(ctx, required=True)
    wanted = ctx.params.get_int_list("server_ids", minimum=1)
    state = ctx.state
    with state.lock:
        items = [
            server.to_vk(state.callback_status(server.id))
            for server in state.settings.callback_servers
            if wanted is None or server.id in wanted
        ]
    return {"count": len(items), "items": items}


@method("groups.deleteCallbackServer", scope=MANAGE)
def delete_callback_server(ctx: CallContext) -> int:
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        server_id = _server_id(ctx)
        state.settings.callback_servers = [
            s for s in state.settings.callback_servers if s.id != server_id
        ]
        state.apply_callback_servers()
    return 1


@method("groups.setCallbackSettings", scope=MANAGE)
def set_callback_settings(ctx: CallContext) -> int:
    """``server_id``, ``api_version`` and event flags (the ones left out keep their value)."""
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        server = state.settings.server(_server_id(ctx))
        assert server is not None
        server.api_version = _api_version(ctx, server.api_version)
        server.events = _event_flags(ctx, server.events)
        state.apply_callback_servers()
    return 1


@method("groups.getCallbackSettings", scope=MANAGE)
def get_callback_settings(ctx: CallContext) -> dict[str, Any]:
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        server = state.settings.server(_server_id(ctx))
        assert server is not None
        return {"api_version": server.api_version, "events": events_object(server.events)}


@method("groups.setSettings", scope=MANAGE)
def set_settings(ctx: CallContext) -> int:
    """Remembers ``messages``, ``bots_capabilities``, ``bots_start_button`` and
    ``bots_add_to_chat`` (the others are accepted and ignored)."""
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        values = {
            name: int(ctx.params.get_bool(name)) for name in BOT_SETTINGS if ctx.params.has(name)
        }
        state.settings.bot_settings.update(values)
    return 1


@method("groups.getSettings", scope=MANAGE)
def get_settings(ctx: CallContext) -> dict[str, Any]:
    check_group_id(ctx, required=True)
    state = ctx.state
    with state.lock:
        return {
            "title": state.group_name,
            "description": "",
            "address": state.screen_name,
            "wall": 1,
            "photos": 1,
            "video": 1,
            "audio": 1,
            "docs": 1,
            "topics": 1,
            "wiki": 0,
            "articles": 0,
            "city_id": 0,
            "city_name": "",
            "obscene_filter": False,
            "obscene_stopwords": False,
            "obscene_words": [],
            "toxic_filter": False,
            "disable_replies_from_groups": False,
            **state.settings.bot_settings,
        }
