"""HTTP routes of the player page (see the package doc)."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import views
from .views import SandboxError

if TYPE_CHECKING:
    from ..communities import Communities
    from ..state import LocalVK

STATIC = Path(__file__).resolve().parent / "static"
MAX_TEXT = 4000

_dumps = functools.partial(json.dumps, ensure_ascii=False)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _reply(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=_dumps)


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.text() or "{}")
    except ValueError:
        raise SandboxError("Запрос не в формате JSON.") from None
    if not isinstance(data, dict):
        raise SandboxError("Запрос должен быть JSON-объектом.")
    return data


def _int(data: Any, name: str, default: int | None = None) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or value is None:
        raise SandboxError(f"Не указано поле {name}.")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SandboxError(f"Поле {name} должно быть числом.") from None


def _text(data: dict[str, Any], name: str = "text") -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise SandboxError("Пустое сообщение не отправить.")
    if len(value) > MAX_TEXT:
        raise SandboxError(f"Слишком длинный текст: не больше {MAX_TEXT} символов.")
    return value


def _user_id(request: web.Request) -> int:
    raw = request.match_info["user_id"]
    if not raw.isdigit() or not 0 < int(raw) < 2_000_000_000:
        raise SandboxError("Нет такого пользователя.")
    return int(raw)


def _community(communities: Communities, request: web.Request) -> LocalVK:
    """The community ``?group_id=`` names (the default one without it)."""
    raw = request.query.get("group_id", "")
    if raw == "":
        return communities.default
    state = communities.find(int(raw)) if raw.isdigit() else None
    if state is None:
        raise SandboxError("Нет такого сообщества.")
    return state


def add_sandbox_routes(app: web.Application, key: web.AppKey[Communities]) -> None:
    """Register the player page's routes on ``app``."""

    def guarded(
        action: Callable[[LocalVK, web.Request], Awaitable[Any]],
    ) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            try:
                state = _community(request.app[key], request)
                return _reply(await action(state, request))
            except SandboxError as exc:
                return _reply({"error": str(exc)}, status=400)
            except ValueError as exc:  # the state refused (e.g. not a chat member)
                return _reply({"error": f"Не получилось: {exc}"}, status=400)

        return handler

    async def index(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def users(state: LocalVK, request: web.Request) -> Any:
        communities = request.app[key]
        return views.users_list(state, communities)

    async def user(state: LocalVK, request: web.Request) -> Any:
        query = request.query
        return views.user_view(
            state,
            _user_id(request),
            after_message=_int(query, "after_message", 0),
            after_comment=_int(query, "after_comment", 0),
            after_edit=_int(query, "after_edit", 0),
        )

    async def feed(state: LocalVK, request: web.Request) -> Any:
        query = request.query
        return views.feed(
            state,
            after_message=_int(query, "after_message", 0),
            after_comment=_int(query, "after_comment", 0),
            after_edit=_int(query, "after_edit", 0),
        )

    async def send(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        return {"update": state.inject_message(uid, _text(data))}

    async def press(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        return views.press(
            state, uid, _int(data, "message_id"), _int(data, "row"), _int(data, "column")
        )

    async def board(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        return views.post_comment(state, uid, _int(data, "topic_id"), _text(data))

    async def chat(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        return views.write_to_chat(state, uid, _int(data, "chat_id"), _text(data))

    async def join(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        link = data.get("link")
        if not isinstance(link, str):
            raise SandboxError("Не указана ссылка.")
        return views.join_by_link(state, uid, link)

    async def leave(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        return views.leave_chat(state, uid, _int(data, "chat_id"))

    async def takeover(state: LocalVK, request: web.Request) -> Any:
        uid, data = _user_id(request), await _body(request)
        on = data.get("on", True)
        if not isinstance(on, bool):
            raise SandboxError("Поле on должно быть true или false.")
        state.set_taken_over(uid, on)
        return {"user_id": uid, "taken_over": on}

    router = app.router
    router.add_get("/sandbox", _redirect)
    router.add_get("/sandbox/", index)
    router.add_static("/sandbox/static/", STATIC, append_version=True)
    router.add_get("/sandbox/api/users", guarded(users))
    router.add_get("/sandbox/api/feed", guarded(feed))
    router.add_get("/sandbox/api/users/{user_id}", guarded(user))
    for name, action in (
        ("send", send),
        ("press", press),
        ("board", board),
        ("chat", chat),
        ("join", join),
        ("leave", leave),
        ("takeover", takeover),
    ):
        router.add_post(f"/sandbox/api/users/{{user_id}}/{name}", guarded(action))


async def _redirect(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("/sandbox/")
