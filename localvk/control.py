"""``/_test/`` endpoints: drive the local VK as users would, inspect it, inject faults.

Every endpoint takes and returns JSON. A bad request is HTTP 400 ``{"error": "…"}``.

Every endpoint below that acts on a community takes an optional ``group_id`` (in the JSON
body of a POST, in the query of a GET or DELETE): the hosted community it is about; without
it, the default (first) community, so single-community callers need not know. An unknown
``group_id`` is a 400.

- ``GET /_test/communities`` every hosted community (id, name, screen name, the default
  one, its community tokens as fingerprints with their scopes, its admins' user ids);
  ``POST /_test/communities`` ``{group_id, group_token, user_tokens?, name?, screen_name?,
  scopes?}`` creates one (``user_tokens``: a list of tokens, or ``{token: user_id}``;
  ``scopes``: a list or ``"messages,manage"``, default messages, manage, photos, docs; ``[]``
  or ``""``: a token without rights) and answers it as the list does;
  ``POST /_test/communities/tokens`` ``{group_id, token, kind?: "group"|"user", scopes?,
  user_id?}`` adds another community token (with its scopes) or admin user token

- ``POST /_test/message_new`` ``{from_id, text, peer_id?, payload?, client_info?}``
- ``POST /_test/message_event`` ``{user_id, payload?, peer_id?, conversation_message_id?}``
- ``POST /_test/board_post`` ``{from_id, topic_id, text}``; ``/_test/board_post_edit``
  ``{topic_id, comment_id, text}``; ``/_test/board_post_delete`` ``{topic_id, comment_id}``
- ``POST /_test/chat_join`` ``{chat_id, user_id, by_link?, invited_by?}``;
  ``/_test/chat_leave`` ``{chat_id, user_id, kicked_by?}``
- ``POST /_test/chats`` ``{title, member_ids?}``;
  ``POST /_test/topics`` ``{title, text?, from_id?}``
- ``POST /_test/allow_messages`` ``{user_id, allowed?}``; ``POST /_test/users``
  ``{id, first_name, last_name, sex?}``
- ``POST /_test/longpoll/expire_keys``; ``POST /_test/longpoll/drop_history``
- ``GET/POST/DELETE /_test/faults`` (see :class:`~localvk.faults.FaultConfig`)
- ``GET /_test/callback`` (the Callback API pusher's state and counters); ``POST
  /_test/callback`` ``{urls, confirmation_code, secret?, concurrency?, retries?, backoff?,
  timeout?, confirm_interval?}`` (push to that server, after it confirms; see
  :class:`~localvk.callback.CallbackConfig`); ``DELETE /_test/callback`` (stop pushing);
  ``GET /_test/callback/deliveries?since=`` (every POST with its answer)
- ``GET /_test/calls?method=&token_kind=&since=&include_inner=&all=`` (``all=1``: every
  community's calls, ordered by ``seq``; each record has ``group_id``, ``token_kind``,
  ``user_id`` and ``token``, a fingerprint of the token), ``GET /_test/stats``,
  ``GET /_test/messages?peer_id=&sent=``, ``GET /_test/events``, ``GET /_test/state``,
  ``GET /_test/board`` (the community's topics with their comments)
- ``POST /_test/reset`` (with ``group_id``: that community; without: every community, and
  VK ID's events)

VK ID (the server's, not a community's: no ``group_id``; see :mod:`localvk.vkid`):

- ``GET /_test/vkid`` its apps, lifetimes, sign-ins (tokens as fingerprints) and counters;
  ``POST /_test/vkid`` ``{client_id?, redirect_uris?, access_ttl?, code_ttl?, refresh_ttl?}``
  adds (or replaces) an app with its trusted redirect URLs and/or sets the lifetimes (seconds)
  of what is issued from then on
- ``POST /_test/vkid/revoke`` ``{user_id, client_id?}``: the user revoked the app's access
  (their refresh tokens get ``invalid_grant``, their access tokens error 5); answers
  ``{"revoked": n}`` (sign-ins ended)
- ``POST /_test/vkid/expire`` ``{user_id?, access_token?, refresh?}``: access tokens (one, a
  user's, or everyone's) expire now, with ``refresh`` their refresh tokens too; answers
  ``{"expired": n}``
- ``GET /_test/vkid/events?kind=&since=`` ``{"events": […], "stats": {codes, denied, grants,
  refreshes, refused, reused_refresh}}``: every code, denial, exchange, renewal and refusal
  (``reused``: a refresh token presented after it was used, i.e. a double renewal)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .callback_config import CallbackConfig
from .control_http import (
    BadRequest,
    Routes,
    bool_of,
    int_of,
    opt_float,
    opt_int,
    query_flag,
    str_of,
)
from .faults import FaultConfig
from .models import GROUP

if TYPE_CHECKING:
    from .communities import Communities
    from .state import LocalVK


def _token_list(data: Mapping[str, Any]) -> dict[str, int] | list[str]:
    tokens = data.get("user_tokens", [])
    if isinstance(tokens, dict):
        return {str(token): int_of(tokens, token) for token in tokens}
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise BadRequest("user_tokens should be a list of tokens or {token: user_id}")
    return tokens


def add_control_routes(app: web.Application, key: web.AppKey[Communities]) -> None:
    """Register every ``/_test/`` route on ``app``."""
    routes = Routes(app, key)

    @routes.registry("GET", "communities")
    def communities(registry: Communities, _: web.Request, __: dict[str, Any]) -> Any:
        return {"communities": [registry.describe(state) for state in registry]}

    @routes.registry("POST", "communities")
    def create_community(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        scopes = data.get("scopes")
        if scopes is not None and not isinstance(scopes, str | list):
            raise BadRequest("scopes should be a list or a comma-separated string")
        screen_name = data.get("screen_name")
        if screen_name is not None and not isinstance(screen_name, str):
            raise BadRequest("screen_name should be a string")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise BadRequest("name should be a string")
        state = registry.create(
            group_id=int_of(data, "group_id"),
            group_token=str_of(data, "group_token"),
            user_tokens=_token_list(data),
            group_name=name,
            screen_name=screen_name,
            scopes=scopes,
        )
        return registry.describe(state)

    @routes.registry("POST", "communities/tokens")
    def add_token(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        scopes = data.get("scopes")
        if scopes is not None and not isinstance(scopes, str | list):
            raise BadRequest("scopes should be a list or a comma-separated string")
        return registry.add_token(
            int_of(data, "group_id"),
            str_of(data, "token"),
            kind=str_of(data, "kind", GROUP),
            scopes=scopes,
            user_id=opt_int(data, "user_id"),
        )

    @routes.registry("POST", "reset")
    def reset(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        if data.get("group_id") is None:
            registry.reset()
        else:
            registry.get(int_of(data, "group_id")).reset()
        return {"ok": True}

    @routes.registry("GET", "vkid")
    def vkid(registry: Communities, _: web.Request, __: dict[str, Any]) -> Any:
        return registry.vkid.describe()

    @routes.registry("POST", "vkid")
    def configure_vkid(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        uris = data.get("redirect_uris")
        if data.get("client_id") is not None:
            if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
                raise BadRequest("redirect_uris should be a list of URLs")
            registry.vkid.add_app(int_of(data, "client_id"), uris)
        elif uris is not None:
            raise BadRequest("redirect_uris need a client_id")
        registry.vkid.configure(
            access_ttl=opt_float(data, "access_ttl"),
            code_ttl=opt_float(data, "code_ttl"),
            refresh_ttl=opt_float(data, "refresh_ttl"),
        )
        return registry.vkid.describe()

    @routes.registry("POST", "vkid/revoke")
    def vkid_revoke(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        revoked = registry.vkid.revoke_user(
            int_of(data, "user_id"), client_id=opt_int(data, "client_id")
        )
        return {"revoked": revoked}

    @routes.registry("POST", "vkid/expire")
    def vkid_expire(registry: Communities, _: web.Request, data: dict[str, Any]) -> Any:
        token = data.get("access_token")
        if token is not None and not isinstance(token, str):
            raise BadRequest("access_token should be a string")
        expired = registry.vkid.expire(
            user_id=opt_int(data, "user_id"),
            access_token=token,
            refresh=bool_of(data, "refresh", False),
        )
        return {"expired": expired}

    @routes.registry("GET", "vkid/events")
    def vkid_events(registry: Communities, request: web.Request, _: dict[str, Any]) -> Any:
        found = registry.vkid.find_events(
            request.query.get("kind") or None, since=int_of(request.query, "since", 0)
        )
        return {
            "events": [event.to_dict() for event in found],
            "stats": registry.vkid.stats(),
        }

    @routes.community("POST", "message_new")
    def message_new(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        client_info = data.get("client_info")
        if client_info is not None and not isinstance(client_info, dict):
            raise BadRequest("client_info should be an object")
        return state.inject_message(
            int_of(data, "from_id"),
            str_of(data, "text", ""),
            peer_id=opt_int(data, "peer_id"),
            payload=data.get("payload"),
            client_info=client_info,
        )

    @routes.community("POST", "message_event")
    def message_event(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_message_event(
            int_of(data, "user_id"),
            data.get("payload"),
            peer_id=opt_int(data, "peer_id"),
            conversation_message_id=opt_int(data, "conversation_message_id"),
        )

    @routes.community("POST", "board_post")
    def board_post(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_board_post(
            int_of(data, "from_id"), int_of(data, "topic_id"), str_of(data, "text")
        )

    @routes.community("POST", "board_post_edit")
    def board_post_edit(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_board_post_edit(
            int_of(data, "topic_id"), int_of(data, "comment_id"), str_of(data, "text")
        )

    @routes.community("POST", "board_post_delete")
    def board_post_delete(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_board_post_delete(int_of(data, "topic_id"), int_of(data, "comment_id"))

    @routes.community("POST", "chat_join")
    def chat_join(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_chat_join(
            int_of(data, "chat_id"),
            int_of(data, "user_id"),
            by_link=bool_of(data, "by_link", True),
            invited_by=opt_int(data, "invited_by"),
        )

    @routes.community("POST", "chat_leave")
    def chat_leave(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        return state.inject_chat_leave(
            int_of(data, "chat_id"), int_of(data, "user_id"), kicked_by=opt_int(data, "kicked_by")
        )

    @routes.community("POST", "chats")
    def create_chat(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        members = data.get("member_ids", [])
        if not isinstance(members, list):
            raise BadRequest("member_ids should be a list")
        return state.create_chat(str_of(data, "title"), [int(m) for m in members]).to_dict()

    @routes.community("POST", "topics")
    def create_topic(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        topic = state.create_topic(
            str_of(data, "title"), str_of(data, "text", ""), from_id=opt_int(data, "from_id")
        )
        return topic.to_dict()

    @routes.community("POST", "allow_messages")
    def allow_messages(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        user_id = int_of(data, "user_id")
        allowed = bool_of(data, "allowed", True)
        state.set_messages_allowed(user_id, allowed)
        return {"user_id": user_id, "allowed": allowed}

    @routes.community("POST", "users")
    def add_user(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        user = state.add_user(
            int_of(data, "id"),
            str_of(data, "first_name"),
            str_of(data, "last_name"),
            int_of(data, "sex", 0),
        )
        return user.to_vk()

    @routes.community("POST", "longpoll/expire_keys")
    def expire_keys(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        state.expire_longpoll_keys()
        return {"ok": True}

    @routes.community("POST", "longpoll/drop_history")
    def drop_history(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        state.drop_longpoll_history()
        return {"ok": True}

    @routes.community("GET", "faults")
    def get_faults(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        return {"config": state.faults.config.to_dict(), "injected": state.faults.injected}

    @routes.community("POST", "faults")
    def set_faults(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        with state.lock:
            config = state.faults.configure(FaultConfig.from_dict(data))
        return {"config": config.to_dict()}

    @routes.community("DELETE", "faults")
    def clear_faults(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        with state.lock:
            state.faults.clear()
        return {"config": state.faults.config.to_dict()}

    @routes.community("GET", "callback")
    def get_callback(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        return state.callbacks.stats()

    @routes.community("POST", "callback")
    def set_callback(state: LocalVK, _: web.Request, data: dict[str, Any]) -> Any:
        state.configure_callbacks(CallbackConfig.from_dict(data))
        return state.callbacks.stats()

    @routes.community("DELETE", "callback")
    def clear_callback(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        state.configure_callbacks(None)
        return state.callbacks.stats()

    @routes.community("GET", "callback/deliveries")
    def callback_deliveries(state: LocalVK, request: web.Request, _: dict[str, Any]) -> Any:
        found = state.callbacks.deliveries(since=int_of(request.query, "since", 0))
        return {"deliveries": [delivery.to_dict() for delivery in found]}

    @routes.community("GET", "calls")
    def calls(state: LocalVK, request: web.Request, _: dict[str, Any]) -> Any:
        query = request.query
        source: Any = request.app[key] if query_flag(request, "all") else state
        records = source.calls(
            query.get("method") or None,
            token_kind=query.get("token_kind") or None,
            since=int_of(query, "since", 0),
            include_inner=query_flag(request, "include_inner") is not False,
        )
        return {"calls": [record.to_dict() for record in records]}

    @routes.community("GET", "stats")
    def stats(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        return state.stats()

    @routes.community("GET", "messages")
    def messages(state: LocalVK, request: web.Request, _: dict[str, Any]) -> Any:
        peer_id = opt_int(request.query, "peer_id")
        with state.lock:
            if query_flag(request, "sent"):
                found = state.sent_messages(peer_id)
            elif peer_id is not None:
                found = state.conversation(peer_id)
            else:
                found = list(state.messages)
            return {"messages": [message.to_dict() for message in found]}

    @routes.community("GET", "events")
    def events(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        return {"ts": state.longpoll.ts, "events": state.longpoll.events()}

    @routes.community("GET", "state")
    def snapshot(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        return state.snapshot()

    @routes.community("GET", "board")
    def board(state: LocalVK, _: web.Request, __: dict[str, Any]) -> Any:
        with state.lock:
            return {"topics": [topic.to_dict() for topic in state.topics.values()]}
