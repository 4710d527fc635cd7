"""The plumbing of the ``/_test/`` endpoints (:mod:`localvk.control`): registering them, reading
a request's JSON and its typed fields, finding the community it is about, answering JSON."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from .communities import Communities
    from .state import LocalVK

_DUMPS = functools.partial(json.dumps, ensure_ascii=False)


class BadRequest(Exception):
    pass


def reply(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=_DUMPS)


async def json_body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        data = json.loads(await request.text())
    except ValueError:
        raise BadRequest("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("the body should be a JSON object")
    return data


def int_of(data: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or value is None:
        raise BadRequest(f"{name} is required (an integer)")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{name} should be an integer") from None


def opt_int(data: Mapping[str, Any], name: str) -> int | None:
    return None if data.get(name) is None else int_of(data, name)


def opt_float(data: Mapping[str, Any], name: str) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{name} should be a number of seconds")
    return float(value)


def str_of(data: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = data.get(name, default)
    if not isinstance(value, str):
        raise BadRequest(f"{name} should be a string")
    return value


def bool_of(data: Mapping[str, Any], name: str, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise BadRequest(f"{name} should be true or false")
    return value


def query_flag(request: web.Request, name: str) -> bool | None:
    raw = request.query.get(name)
    return None if raw is None else raw.lower() in {"1", "true", "yes"}


def community_of(communities: Communities, source: Mapping[str, Any]) -> LocalVK:
    """The community ``group_id`` names (the default one without it)."""
    if source.get("group_id") in (None, ""):
        return communities.default
    return communities.get(int_of(source, "group_id"))


class Routes:
    """Registers ``/_test/`` endpoints on an app: each reads its JSON body (or query), acts, and
    answers JSON; a bad request (:class:`BadRequest`, or a value, key or type error) is a 400
    ``{"error": "…"}``."""

    def __init__(self, app: web.Application, key: web.AppKey[Communities]) -> None:
        self.app = app
        self.key = key

    def registry(
        self, method: str, path: str
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """An endpoint about the server's communities, not one of them."""

        def register(action: Callable[[Communities, web.Request, dict[str, Any]], Any]) -> Any:
            async def handler(request: web.Request) -> web.StreamResponse:
                try:
                    data = await json_body(request) if request.method in {"POST", "PUT"} else {}
                    result = action(request.app[self.key], request, data)
                except (BadRequest, ValueError, KeyError, TypeError) as exc:
                    return reply({"error": str(exc)}, status=400)
                return reply(result)

            self.app.router.add_route(method, f"/_test/{path}", handler)
            return action

        return register

    def community(
        self, method: str, path: str
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """An endpoint about one community: ``group_id`` (body or query) says which."""

        def register(action: Callable[[LocalVK, web.Request, dict[str, Any]], Any]) -> Any:
            async def handler(request: web.Request) -> web.StreamResponse:
                try:
                    if request.method in {"POST", "PUT"}:
                        data = await json_body(request)
                        state = community_of(request.app[self.key], data)
                        data.pop("group_id", None)
                    else:
                        data = {}
                        state = community_of(request.app[self.key], request.query)
                    result = action(state, request, data)
                except (BadRequest, ValueError, KeyError, TypeError) as exc:
                    return reply({"error": str(exc)}, status=400)
                return reply(result)

            self.app.router.add_route(method, f"/_test/{path}", handler)
            return action

        return register
